"""Bad inputs of export_saved_model.py --format (bert_tf1/tasks/export.py)
and of predict_text.py over its folders (bert_tf1/serving/predictions.py).

No row for a format that cannot take a model type: every format takes
every model type."""
import json
import sys

from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import _export


@case("export_saved_model.py")
def export_unknown_format(folder):
    return (_export(folder, format="numeric,tensorrt"),
            ["--format=tensorrt", "saved_model", "litert"])


@case("export_saved_model.py")
def export_serving_version_without_a_saved_model(folder):
    return (_export(folder, format="onnx", serving_version=2),
            ["--serving_version", "saved_model or numeric"])


def _without(*modules):
    """A patch: `modules` cannot be imported (the [deploy] extra absent)."""
    def patch(monkeypatch):
        for module in modules:
            monkeypatch.setitem(sys.modules, module, None)
    return patch


def _the_ids_signature_before_the_numeric_graph(monkeypatch):
    """The numeric graph as issue #34 found the `*_ids` signature: ids of
    any length and the original's attention mask `mask[:, None, None, :]`,
    a new_axis StridedSlice, which LiteRT's builtin ops lack then."""
    import tensorflow as tf

    from bert_tf1.modeling.models import bert_model
    from bert_tf1.serving import numeric

    def attention_bias_from_mask(input_mask, dtype="float32"):
        return (1.0 - tf.cast(input_mask, dtype)[:, None, None, :]) * -10000.0

    def any_length(module, *args, **kwargs):
        built(module, *args, **kwargs)
        module.serving_default = tf.function(module._outputs, input_signature=[
            tf.TensorSpec([None, None], tf.int32, name=name)
            for name in ("input_ids", "input_mask", "segment_ids")])
    built = numeric.NumericServing.__init__
    monkeypatch.setattr(bert_model, "attention_bias_from_mask",
                        attention_bias_from_mask)
    monkeypatch.setattr(numeric.NumericServing, "__init__", any_length)


@case("export_saved_model.py", patch=_without("openvino"))
def export_format_without_the_deploy_extra(folder):
    return (_export(folder, format="numeric,openvino"),
            ["--format=openvino", "openvino", "[deploy]"])


@case("export_saved_model.py",
      patch=_the_ids_signature_before_the_numeric_graph)
def export_litert_with_an_op_it_cannot_run(folder):
    return (_export(folder, format="litert"),
            ["--format=litert", "builtin set lacks: tf.StridedSlice"])


def _format_folder(folder, format_name, name="export"):
    """`folder/name`, which says it is an export of `format_name` (its
    model file is not needed for the checks that come first; its `files`
    record, empty, passes the hash check; a vocab.txt beside it)."""
    export = folder / name
    export.mkdir(parents=True)
    (export / "export_info.json").write_text(json.dumps(
        {"format": format_name, "model_type": "classifier",
         "labels": ["0", "1"], "max_seq_length": 32, "do_lower_case": True,
         "files": {}}))
    (export / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
    return export


@case("predict_text.py", patch=_without("onnxruntime"))
def predict_onnx_export_without_the_deploy_extra(folder):
    export = _format_folder(folder, "onnx")
    return ({"export_dir": export, "text": "hello"},
            [str(export), "onnxruntime", "[deploy]"])


@case("predict_text.py")
def predict_export_dir_holding_several_formats(folder):
    _format_folder(folder, "onnx", "export/onnx")
    return ({"export_dir": folder / "export", "text": "hello"},
            [str(folder / "export"), "format folders onnx", "give one"])


@case("predict_text.py")
def predict_export_info_of_an_unknown_format(folder):
    export = _format_folder(folder, "tensorrt")
    return ({"export_dir": export, "text": "hello"},
            [str(export / "export_info.json"), "saved_model", "onnx"])
