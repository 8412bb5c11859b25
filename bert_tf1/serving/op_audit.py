"""Which ops a SavedModel needs beyond core TensorFlow, read from its
`saved_model.pb` (every graph and function of it: a SavedModel loads whole,
so a server needs every op of every signature).

Our own table: the TF Text ops our raw-text exports use, each of which TF
Serving 2.12.0 to 2.19.1 runs (TF Text 2.12.1 inside; 2.20.0 has TF Text
2.20.0: docs/deploying.md), checked against the op names in tensorflow-text
2.12.1's shared libraries.
"""
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

#: TF Text ops our raw-text exports use -> whether TF Text 2.12 has them.
TF_TEXT_OPS = {"NormalizeUTF8": "TF Text <= 2.12",
               "FastWordpieceTokenizeWithOffsets": "TF Text <= 2.12",
               "RegexSplitWithOffsets": "TF Text <= 2.12"}


def _graph_nodes(meta_graph):
    yield from meta_graph.graph_def.node
    for function in meta_graph.graph_def.library.function:
        yield from function.node_def


def read_ops(directory):
    """The op types (set of str) of the SavedModel at `directory`.

    Raises:
        OSError: no saved_model.pb there.
    """
    proto = saved_model_pb2.SavedModel()
    with open(f"{directory}/saved_model.pb", "rb") as reader:
        proto.ParseFromString(reader.read())
    return {node.op for meta_graph in proto.meta_graphs
            for node in _graph_nodes(meta_graph)}


def non_core_ops(directory):
    """{op: its `TF_TEXT_OPS` note, or "TF Text or another library"} of
    the ops of the SavedModel at `directory` that core TensorFlow lacks."""
    ops = read_ops(directory)
    # tf.raw_ops lists every op TensorFlow itself registers; ops a library
    # (tensorflow_text) registers at import are not in it.
    return {op: TF_TEXT_OPS.get(op, "TF Text or another library")
            for op in sorted(ops) if not hasattr(tf.raw_ops, op)}


def audit_lines(directory):
    """Printable lines of `non_core_ops(directory)`."""
    found = non_core_ops(directory)
    if not found:
        return [f"{directory}: core TensorFlow ops only (loads in any "
                "TensorFlow or TF Serving build)."]
    return [f"{directory}: ops outside core TensorFlow (a server needs them "
            "registered):"] + [
        f"  {op}: {note}" for op, note in found.items()]
