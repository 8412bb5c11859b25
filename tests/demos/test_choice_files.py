"""demos/next_sentence/tsv_writer.py and results_reader.py: the TSV layout
written is what bert_tf1.data.multiple_choice.readers.read_choice_tsv reads back, and
test_results.tsv reads back as written."""
import numpy as np
import pytest

from bert_tf1.data.multiple_choice import readers
from bert_tf1.data.multiple_choice.examples import MultipleChoiceExample
from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.results import (format_test_results,
                                      write_text_atomically)
from demos.next_sentence.results_reader import read_test_results
from demos.next_sentence.tsv_writer import format_choice_tsv, write_choice_tsv


def test_tsv_writer_round_trip(tmp_path):
    examples = [MultipleChoiceExample("r1", "Ctx, one.", ["a", "b", "c"], 2),
                MultipleChoiceExample("r2", "Ctx two.", ["d", "e", "f"], 0)]
    path = str(tmp_path / "out.tsv")
    assert write_choice_tsv(path, examples) == 2
    with open(path, encoding="utf-8") as f:
        assert f.read() == ("id\tcontext\tending0\tending1\tending2\tlabel\n"
                            "r1\tCtx, one.\ta\tb\tc\t2\n"
                            "r2\tCtx two.\td\te\tf\t0\n")
    assert readers.read_choice_tsv(path) == examples
    unlabelled = [MultipleChoiceExample("x", "C", ["a", "b"], None)]
    assert format_choice_tsv(unlabelled) == "id\tcontext\tending0\tending1\nx\tC\ta\tb\n"
    with pytest.raises(ValueError, match="tab or line break"):
        format_choice_tsv([MultipleChoiceExample("x", "C\tD", ["a", "b"], 0)])


def test_test_results_round_trip(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    probabilities = [[0.25, 0.75], [1.0 / 3.0, 2.0 / 3.0]]
    write_text_atomically(path, format_test_results(probabilities))
    np.testing.assert_array_equal(read_test_results(path),
                                  np.float32(probabilities))


def test_test_results_errors(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text("0.5\t0.5\n0.1\t0.2\t0.7\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"r.tsv, line 2: found 3 "):
        read_test_results(str(path))
    path.write_text("0.5\tx\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"r.tsv, line 1: "):
        read_test_results(str(path))
