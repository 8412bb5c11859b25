"""`export_model(formats=...)` (bert_tf1/serving/export.py,
bert_tf1/serving/formats/): each fp32 format's outputs within 1e-4 of the numeric
SavedModel's (equal to the raw-text export's `*_ids` signature:
tests/serving/test_numeric.py) on the same 200 inputs, for each model type
and the real all-MiniLM-L6-v2 encoder mean-pooled; int8 variants build and
stay close; the folders hold vocab, case record and export_info.json.

One export per model per test session (tests/serving/conftest.py).
"""
import json

import numpy as np
import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.serving import export_model, formats, load_served_model
from bert_tf1.serving.formats import check_formats
from bert_tf1.serving.numeric import OUTPUTS, Runner
from tests.serving import deploy_models

pytest.importorskip(
    "openvino", reason="--format needs the [deploy] extra (pip install -e '.[deploy]'; run_tests.sh installs it)")
TOLERANCE = 1e-4
CONVERTED = ("openvino", "litert", "onnx")
MODELS = ("classifier", "squad", "tagger", "multiple_choice", "encoder",
          "real_encoder")


def _runner(name, folder):
    if name == "numeric":
        return Runner(folder / "numeric")
    return formats.converter(name).Runner(folder / name)


@pytest.mark.parametrize("model", MODELS)
def test_each_format_matches_the_numeric_saved_model(model, exports):
    folder, arguments = exports(model)
    model_type = arguments["model_type"]
    info = json.loads((folder / "numeric" / "export_info.json").read_text())
    vocab_size = sum(1 for _ in open(folder / "numeric" / "vocab.txt",
                                     encoding="utf-8"))
    rows = deploy_models.id_rows(model_type, arguments["max_seq_length"],
                                 vocab_size)
    want = Runner(folder / "numeric")(**rows)
    assert sorted(want) == sorted(OUTPUTS[model_type])
    assert [i["name"] for i in info["signatures"]["serving_default"][
        "inputs"]] == ["input_ids", "input_mask", "segment_ids"]
    for name in CONVERTED:
        got = _runner(name, folder)(**rows)
        assert sorted(got) == sorted(want), name
        for key, value in want.items():
            if value.dtype.kind == "f":
                np.testing.assert_allclose(got[key], value, atol=TOLERANCE,
                                           rtol=0, err_msg=f"{name} {key}")
            else:  # argmax: equal wherever the top two logits differ
                assert np.mean(got[key] == value) > 0.99, (name, key)
        details = json.loads((folder / name / "export_info.json").read_text())
        assert details["format"] == name
        assert details["precision"] == "float32"
        assert details["model_type"] == model_type
        assert (folder / name / "vocab.txt").read_bytes() == (
            folder / "numeric" / "vocab.txt").read_bytes()
        assert json.loads((folder / name / "tokenizer_config.json")
                          .read_text()) == {"do_lower_case": True}


def test_int8_variants_build_and_stay_close(fixtures_dir, tmp_path_factory):
    arguments = deploy_models.serving_arguments("classifier", fixtures_dir,
                                                tmp_path_factory)
    folder = tmp_path_factory.mktemp("int8") / "export"
    model, preprocessor = load_served_model(**arguments)
    export_model(model, str(folder), ["0", "1"],
                 formats=("numeric",) + CONVERTED, quantize="int8",
                 preprocessor=preprocessor)
    rows = deploy_models.id_rows("classifier", 32, 1000)
    want = Runner(folder / "numeric")(**rows)["logits"]
    for name in CONVERTED:
        info = json.loads((folder / name / "export_info.json").read_text())
        assert "int8" in info["precision"], name
        got = _runner(name, folder)(**rows)["logits"]
        error = np.abs(got - want).max()
        # Quantized, so not equal; a broken quantization is far off.
        assert 0 < error < 0.1, (name, error)


def test_bad_format_lists_are_refused(monkeypatch):
    with pytest.raises(UserError, match="--format=trt"):
        check_formats(["numeric", "trt"])
    with pytest.raises(UserError, match="twice"):
        check_formats(["onnx", "onnx"])
    with pytest.raises(UserError, match="saved_model or numeric"):
        check_formats(["litert"], serving_version=1)
    monkeypatch.setattr(formats.importlib.util, "find_spec",
                        lambda name: None if name == "tf2onnx" else True)
    with pytest.raises(UserError, match=r"tf2onnx.*\[deploy\]"):
        check_formats(["onnx"])
    check_formats(["litert"])


def test_litert_names_custom_ops():
    from bert_tf1.serving.formats import litert

    flatbuffer = open(_tflite_with_a_flex_op(), "rb").read()
    assert litert.custom_ops(flatbuffer) == ["FlexStringJoin"]


def _tflite_with_a_flex_op():
    import tempfile

    import tensorflow as tf

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def join(text):
        return tf.strings.join([text, text])

    converter = tf.lite.TFLiteConverter.from_concrete_functions(
        [join.get_concrete_function()], join)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS,
                                           tf.lite.OpsSet.SELECT_TF_OPS]
    path = tempfile.mktemp(suffix=".tflite")
    with open(path, "wb") as writer:
        writer.write(converter.convert())
    return path
