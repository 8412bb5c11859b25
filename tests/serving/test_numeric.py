"""The numeric graph (bert_tf1/serving/numeric.py): ids in, numbers out, saved as its
own SavedModel holding no TF Text op and no string constant; its outputs
equal the raw-text export's `*_ids` signature exactly."""
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling.pooling import pool_sequence
from bert_tf1.serving.formats.writer import save_module
from bert_tf1.serving.numeric import OUTPUTS, SIGNATURE, NumericServing
from bert_tf1.serving.op_audit import non_core_ops, read_ops
from tests.serving import deploy_models

MODEL_TYPES = ("classifier", "squad", "encoder", "tagger", "multiple_choice")


def _string_constants(function):
    graph = function.graph.as_graph_def()
    nodes = list(graph.node) + [node for f in graph.library.function
                                for node in f.node_def]
    return [node.name for node in nodes if node.op == "Const"
            and node.attr["dtype"].type == tf.string]


@pytest.mark.parametrize("model_type", MODEL_TYPES)
def test_numeric_graph_equals_the_ids_signature(model_type, fixtures_dir,
                                                tmp_path_factory, tmp_path):
    arguments = deploy_models.serving_arguments(model_type, fixtures_dir,
                                                tmp_path_factory)
    module = deploy_models.build(arguments)
    numeric = NumericServing.of(module, model_type)
    save_module(numeric, str(tmp_path / "numeric"))
    loaded = tf.saved_model.load(str(tmp_path / "numeric"))
    assert list(loaded.signatures) == [SIGNATURE]
    function = loaded.signatures[SIGNATURE]
    rows = deploy_models.id_rows(model_type, arguments["max_seq_length"],
                                 module.model.config.vocab_size)
    rows = {key: value[:16] for key, value in rows.items()}
    got = {k: v.numpy() for k, v in function(**rows).items()}
    assert sorted(got) == sorted(OUTPUTS[model_type])
    signature = getattr(module, deploy_models.IDS_SIGNATURE[model_type])
    want = {k: v.numpy() for k, v in signature(**rows).items()}
    if model_type == "encoder":
        want["embedding"] = pool_sequence(want["sequence_output"],
                                          rows["input_mask"], "mean").numpy()
    for name, value in got.items():
        np.testing.assert_array_equal(value, want[name], err_msg=name)
    assert non_core_ops(str(tmp_path / "numeric")) == {}
    assert _string_constants(function) == []
    assert not any(op.startswith("TFText") or "Wordpiece" in op
                   for op in read_ops(str(tmp_path / "numeric")))


@pytest.mark.parametrize("model_type", sorted(deploy_models.IDS_SIGNATURE))
def test_raw_text_export_holds_tf_text_ops(exports, model_type):
    """The raw-text SavedModel of each model type's export the deployment
    tests share (tests/serving/conftest.py: written once per run)."""
    folder, _ = exports(model_type)
    found = non_core_ops(str(folder / "saved_model"))
    assert "NormalizeUTF8" in found
    # Packing is core ops (packing.pack_in_graph): every TF Text op left is
    # one TF Serving 2.12's TF Text has (the trimmer ops it lacks are gone).
    assert not any("Trim" in op
                   for op in read_ops(str(folder / "saved_model")))
    assert set(found.values()) == {"TF Text <= 2.12"}, found


class _Counted(tf.Module):
    """A serving module of one signature that counts its traces."""

    def __init__(self):
        super().__init__()
        self.traces = 0
        self.scale = tf.Variable(2.0)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
    def double(self, x):
        self.traces += 1
        return {"y": x * self.scale}

    def signatures(self):
        return {"serving_default": self.double, "double": self.double}


def test_save_module_traces_each_signature_once(tmp_path):
    """save_module's traces are the ones tf.saved_model.save reuses
    (keras_internals.saved_model_tracing_context): a TensorFlow release
    that keys traces otherwise traces twice here, and every export slows."""
    module = _Counted()
    concrete = save_module(module, str(tmp_path / "saved"))
    assert module.traces == 1
    assert sorted(concrete) == ["double", "serving_default"]
    assert [v.name for v in module.captured_variables] == ["Variable:0"]
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    assert loaded.signatures["double"](x=tf.constant([1.5]))["y"].numpy() \
        .tolist() == [3.0]
    assert loaded.double(tf.constant([2.0]))["y"].numpy().tolist() == [4.0]
