"""ONNX (`model.onnx`, tf2onnx) of the numeric SavedModel."""
import numpy as np
import onnx
import onnx.numpy_helper
import onnxruntime
import tensorflow as tf
import tf2onnx

from bert_tf1.data.io.errors import UserError

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


def _weights_as_inputs(numeric):
    """(tf.function, input specs, {input name: weight}) of the numeric graph
    with every weight of its Keras model an input (`stateless_call`): the
    converted graph then holds no weight, so tf2onnx's freezing and graph
    optimizations copy none (they need ~60x the weights' bytes otherwise:
    docs/deploying.md, "Memory")."""
    model = numeric.model
    trainable = list(model.trainable_variables)
    weights = trainable + list(model.non_trainable_variables)
    names = [f"bert_weight_{index}" for index in range(len(weights))]
    ids = [tf.TensorSpec(spec.shape, spec.dtype, name=spec.name)
           for spec in numeric.input_specs()]

    def outputs(input_ids, input_mask, segment_ids, *values):
        def stateless(features, training=False):
            result, _ = model.stateless_call(
                list(values[:len(trainable)]), list(values[len(trainable):]),
                features, training=training)
            return result
        return numeric.outputs_of(stateless, input_ids, input_mask,
                                  segment_ids)

    specs = ids + [tf.TensorSpec(weight.shape, weight.dtype, name=name)
                   for name, weight in zip(names, weights)]
    return tf.function(outputs), specs, dict(zip(names, weights))


def convert(numeric, numeric_dir, out_dir, int8=False):
    """Writes `out_dir/model.onnx` (opset 17; int8: ONNX Runtime's dynamic
    quantization) of the in-memory numeric graph, its weights written into
    the ONNX initializers by name (`_weights_as_inputs`); returns the
    `export_info.json` fields of the tool and precision.

    Raises:
        UserError: ONNX Runtime cannot load the converted model.
    """
    function, specs, weights = _weights_as_inputs(numeric)
    proto, _ = tf2onnx.convert.from_function(
        function, input_signature=specs, opset=OPSET,
        custom_op_handlers={"Erfc": (_erfc, [])})
    graph = proto.graph
    used = {name for node in graph.node for name in node.input}
    inputs = list(graph.input)
    del graph.input[:]
    graph.input.extend(spec for spec in inputs if spec.name not in weights)
    for spec in inputs:
        if spec.name in weights and spec.name in used:
            graph.initializer.append(onnx.numpy_helper.from_array(
                np.asarray(weights[spec.name].numpy()), spec.name))
    path = f"{out_dir}/model.onnx"
    onnx.save(proto, path)
    del proto, graph
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
