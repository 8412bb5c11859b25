"""Result files never get NaN without an error (and are then not written)."""
import math

import numpy as np
import pytest

from bert_tf1.data.io import results


def test_nan_eval_results_are_refused_naming_the_keys(tmp_path):
    path = tmp_path / "eval_results.txt"
    with pytest.raises(results.NonFiniteResultError) as error:
        results.write_key_value_file(path, {"eval_accuracy": 0.68, "eval_loss": math.nan,
                                            "global_step": 3, "loss": math.inf})
    assert str(path) in str(error.value)
    assert "eval_loss = nan" in str(error.value) and "loss = inf" in str(error.value)
    assert "eval_accuracy" not in str(error.value)
    assert list(tmp_path.iterdir()) == []
    results.write_key_value_file(path, {"eval_loss": 0.5, "global_step": 3})
    assert path.read_text() == "eval_loss = 0.5\nglobal_step = 3\n"


def test_rows_with_nan_are_counted_and_the_first_named():
    rows = np.full((40, 2), 0.5, np.float32)
    rows[[3, 9, 11, 20, 21, 30, 39], 1] = np.nan
    with pytest.raises(results.NonFiniteResultError) as error:
        results.check_finite_rows("test_results.tsv", rows, what="test example")
    message = str(error.value)
    assert "7 of 40 test examples" in message
    assert "test example 3, 9, 11, 20, 21, ... and 2 more" in message
    results.check_finite_rows("test_results.tsv", np.zeros((3, 2)))
