"""The encoder export's `embed_text` signature: sentence embeddings from raw
text, pooled and normalised as fixed at export (bert_tf1/modeling/pooling.py, the
same function extract_features.py --pooling uses).

The export is loaded by a process importing TensorFlow alone
(tests/serving/test_export.py's loader); the expected values are numpy over
the same export's `encode_text` outputs.
"""
import numpy as np
import pytest

from bert_tf1.tasks.errors import UserError, one_line
from bert_tf1.tasks.export import ExportConfig, ExportTask
from tests.serving.test_export import run_signature

FIXTURE = "tf1_vocab_mrpc_classifier"
TEXTS = ["Hello, World!", "", "A longer sentence about a caf\u00e9 and its "
         "many tables, chairs and guests."]


def export_config(fixture, export_dir, **changes):
    return ExportConfig(model_type="encoder",
                        bert_config_file=str(fixture / "bert_config.json"),
                        vocab_file=str(fixture / "vocab.txt"),
                        init_checkpoint=str(fixture), max_seq_length=24,
                        export_dir=str(export_dir), **changes)


def test_embed_text_pools_the_last_layer(fixtures_dir, tmp_path):
    """Default pooling (mean) with --l2_normalize; the other poolings are
    the same function (tests/tasks/test_feature_extraction_pooling.py)."""
    pooling, l2_normalize = None, True
    export_dir = ExportTask(export_config(
        fixtures_dir / FIXTURE, tmp_path / "export", pooling=pooling,
        l2_normalize=l2_normalize)).run()
    embedded = run_signature(export_dir, "embed_text", tmp_path, text=TEXTS)
    assert list(embedded) == ["embedding"]
    encoded = run_signature(export_dir, "encode_text", tmp_path, text=TEXTS)
    mask = encoded["input_mask"].astype(bool)
    tokens = encoded["sequence_output"]
    expected = np.stack([tokens[row][mask[row]].mean(axis=0)
                         for row in range(len(TEXTS))])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert embedded["embedding"].dtype == np.float32
    np.testing.assert_allclose(embedded["embedding"], expected, rtol=0,
                               atol=1e-6)


def test_pooling_flags_belong_to_encoder_exports(fixtures_dir, tmp_path):
    config = export_config(fixtures_dir / FIXTURE, tmp_path / "export",
                           pooling="mean")
    config.model_type, config.num_labels = "classifier", 2
    with pytest.raises(UserError) as raised:
        ExportTask(config).run()
    assert one_line(raised.value) == (
        "--pooling and --l2_normalize set the embed_text signature of "
        "--model_type=encoder; this export is --model_type=classifier.")
    assert not (tmp_path / "export").exists()
