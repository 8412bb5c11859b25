"""ONNX Runtime as both benchmark workers run it (formats_bert.py: our
tf2onnx export; torch_bert.py: transformers' export): the same dynamic int8
and the same session settings, so the two rows differ only in the model."""
import onnx
import onnxruntime
from onnxruntime.quantization import QuantType, quantize_dynamic


def quantize_int8(path):
    """Dynamic int8 of `path` (`x.onnx`), written beside it as `x_int8.onnx`;
    returns that path."""
    target = path[:-len(".onnx")] + "_int8.onnx"
    quantize_dynamic(path, target, weight_type=QuantType.QInt8,
                     # Fused nodes carry no inferred type; they are float.
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return target


def session(path, threads):
    """A CPU session of `path` with every graph optimization; `threads` > 0
    sets the intra-op pool (one inter-op thread), 0 leaves ORT's default."""
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = (
        onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL)
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(
        path, options, providers=["CPUExecutionProvider"])
