"""ONNX (`model.onnx`, tf2onnx) of the numeric SavedModel."""
import numpy as np
import onnxruntime
import tensorflow as tf
import tf2onnx

from bert_tf1.data.io.errors import UserError
from bert_tf1.serving.numeric import SIGNATURE

FILES = ("model.onnx",)
OPSET = 17


def _erfc(ctx, node, name, args):
    """tf2onnx 1.17 has no handler for TF's Erfc (Keras' exact GELU in
    all-MiniLM-L6-v2's graph): rewritten as 1 - Erf(x)."""
    erf = ctx.make_node("Erf", [node.input[0]]).output[0]
    one = ctx.make_const(tf2onnx.utils.make_name("one"),
                         np.array(1, np.float32)).output[0]
    node.type = "Sub"
    ctx.replace_inputs(node, [one, erf])


def convert(numeric_dir, out_dir, int8=False):
    """Writes `out_dir/model.onnx` (opset 17; int8: ONNX Runtime's dynamic
    quantization); returns the `export_info.json` fields of the tool and
    precision."""
    loaded = tf.saved_model.load(numeric_dir)  # kept: it owns the variables
    function = loaded.signatures[SIGNATURE]
    specs = function.structured_input_signature[1]
    names = ("input_ids", "input_mask", "segment_ids")
    path = f"{out_dir}/model.onnx"
    tf2onnx.convert.from_function(
        tf.function(lambda *ids: function(**dict(zip(names, ids)))),
        input_signature=[specs[name] for name in names], opset=OPSET,
        custom_op_handlers={"Erfc": (_erfc, [])}, output_path=path)
    try:
        onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as error:  # noqa: BLE001 (ORT's own load errors)
        raise UserError(f"--format=onnx: ONNX Runtime cannot load the "
                        f"converted model: {str(error).splitlines()[0]}"
                        ) from None
    if int8:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        fp32 = f"{out_dir}/model.fp32.onnx"
        tf.io.gfile.rename(path, fp32)
        quantize_dynamic(fp32, path, weight_type=QuantType.QInt8)
        tf.io.gfile.remove(fp32)
    return {"tool": f"tf2onnx {tf2onnx.__version__}, opset {OPSET}",
            "precision": "dynamic int8" if int8 else "float32"}


class Runner:
    """The model.onnx in `folder` in ONNX Runtime on the CPU."""

    def __init__(self, folder, options=None):
        self.session = onnxruntime.InferenceSession(
            f"{folder}/model.onnx", options,
            providers=["CPUExecutionProvider"])
        self.names = [output.name for output in self.session.get_outputs()]

    def __call__(self, **inputs):
        return dict(zip(self.names, self.session.run(None, inputs)))
