"""NaN/Inf in checkpoints: refused on load (naming the tensor), never written."""
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import checkpoints
from tests.helpers import damaged_files
from tests.helpers.fixture_models import build_model

WORD = "bert/embeddings/word_embeddings"


def nan_checkpoint(fixtures_dir, prefix, name=WORD, row=7):
    """A copy of the tiny classifier fixture with one NaN row in `name`."""
    return damaged_files.nan_checkpoint(
        fixtures_dir / "tf1_tiny_classifier/bert_model.ckpt", prefix, name, row)


def test_loading_a_nan_row_is_refused_naming_the_variable(fixtures_dir, tmp_path):
    prefix = nan_checkpoint(fixtures_dir, tmp_path / "nan.ckpt")
    model = build_model(fixtures_dir / "tf1_tiny_classifier")
    before = model.bert.embeddings.word_embeddings.numpy().copy()
    with pytest.raises(checkpoints.CheckpointNonFiniteError) as error:
        checkpoints.load_tf1_checkpoint(model, prefix)
    message = str(error.value)
    hidden = before.shape[1]
    assert f"{WORD} ({hidden} of {before.size} values)" in message
    assert str(prefix) in message and "--allow_non_finite_checkpoint" in message
    # Nothing was assigned.
    np.testing.assert_array_equal(model.bert.embeddings.word_embeddings.numpy(), before)
    # Asked for: loaded, with a warning.
    checkpoints.load_tf1_checkpoint(model, prefix, allow_non_finite=True)
    assert np.isnan(model.bert.embeddings.word_embeddings.numpy()[7]).all()


def test_the_scan_before_work_reads_one_tensor_at_a_time(fixtures_dir, tmp_path):
    prefix = nan_checkpoint(fixtures_dir, tmp_path / "nan.ckpt", name="output_bias", row=0)
    names = list(checkpoints.list_checkpoint(prefix))
    with pytest.raises(checkpoints.CheckpointNonFiniteError, match="output_bias"):
        checkpoints.check_finite_checkpoint(prefix, names)
    checkpoints.check_finite_checkpoint(prefix, [n for n in names if n != "output_bias"])


def test_weights_holding_nan_are_never_written(fixtures_dir, tmp_path):
    model = build_model(fixtures_dir / "tf1_tiny_classifier")
    kernel = model.bert.pooler.dense.kernel if hasattr(model.bert, "pooler") else None
    variable = kernel if kernel is not None else model.trainable_weights[-1]
    value = variable.numpy()
    value.flat[3] = np.inf
    variable.assign(value)
    with pytest.raises(checkpoints.CheckpointNonFiniteError, match="not written"):
        checkpoints.save_tf1_checkpoint(model, tmp_path / "x.ckpt")
    assert list(tmp_path.iterdir()) == []
