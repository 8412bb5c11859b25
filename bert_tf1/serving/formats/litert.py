"""LiteRT (`model.tflite`) of the numeric SavedModel, builtin ops only."""
import re

import tensorflow as tf

from bert_tf1.data.io.errors import UserError
from bert_tf1.serving.numeric import SIGNATURE

FILES = ("model.tflite",)


def custom_ops(flatbuffer):
    """The custom (and Flex) op names in a .tflite flatbuffer (bytes)."""
    from ai_edge_litert import schema_py_generated as schema

    model = schema.Model.GetRootAs(flatbuffer, 0)
    names = set()
    for index in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(index)
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin == schema.BuiltinOperator.CUSTOM:
            names.add((code.CustomCode() or b"?").decode())
    return sorted(names)


def convert(numeric, numeric_dir, out_dir, int8=False):
    """Writes `out_dir/model.tflite` (int8: dynamic-range quantization);
    returns the `export_info.json` fields of the tool and precision.

    Raises:
        UserError: an op is no LiteRT builtin (names them).
    """
    converter = tf.lite.TFLiteConverter.from_saved_model(
        numeric_dir, signature_keys=[SIGNATURE])
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    if int8:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    try:
        flatbuffer = converter.convert()
    except Exception as error:  # noqa: BLE001 (the converter's own errors)
        ops = sorted(set(re.findall(r"'([\w.]+)' op is neither", str(error))))
        raise UserError("--format=litert: the model has ops LiteRT's builtin "
                        f"set lacks: {', '.join(ops) or error}") from None
    unsupported = custom_ops(flatbuffer)
    if unsupported:
        raise UserError("--format=litert: the model needs custom or Flex ops "
                        f"({', '.join(unsupported)}), which LiteRT from pip "
                        "cannot run.")
    with open(f"{out_dir}/model.tflite", "wb") as writer:
        writer.write(flatbuffer)
    return {"tool": f"tensorflow.lite {tf.__version__}",
            "precision": "dynamic-range int8" if int8 else "float32"}


class Runner:
    """The .tflite in `folder` in ai-edge-litert's interpreter."""

    def __init__(self, folder, num_threads=None):
        from ai_edge_litert.interpreter import Interpreter

        self.interpreter = Interpreter(f"{folder}/model.tflite",
                                       num_threads=num_threads)
        self.run = self.interpreter.get_signature_runner(SIGNATURE)

    def __call__(self, **inputs):
        return dict(self.run(**inputs))
