"""Int8 inference of a trained model: Keras's int8 Dense in the encoder, XLA.

`quantize_int8(model)` copies the model and quantizes, with Keras's own
`Dense.quantize("int8")`, the six Dense layers of every `TransformerLayer`
(what stays float32: docs/serving.md). The copy runs under
`tf.function(jit_compile=True)`: without XLA the TensorFlow backend's int8
matmul has no fast kernel (speed: benchmarks/compare.py).
"""
import gc

import keras
import tensorflow as tf

from bert_tf1.modeling import keras_internals
from bert_tf1.modeling.inference.copies import rebuilt_copy
from bert_tf1.modeling.layers.transformer import TransformerLayer


def _encoder_dense_layers(model):
    """The Dense layers inside the model's `TransformerLayer`s."""
    return [dense
            for layer in keras_internals.all_layers(model)
            if isinstance(layer, TransformerLayer)
            for dense in keras_internals.all_layers(layer)
            if isinstance(dense, keras.layers.Dense)]


def _quantize_without_full_collections(model, filters):
    """`model.quantize("int8", filters=filters)` under `gc.freeze`: Keras runs
    `gc.collect()` per replaced kernel, which is slow over a process's
    TensorFlow objects; freezing leaves out only pre-existing objects.
    """
    if gc.get_freeze_count():  # The caller froze objects: leave gc alone.
        model.quantize("int8", filters=filters)
        return
    gc.freeze()
    try:
        model.quantize("int8", filters=filters)
    finally:
        gc.unfreeze()


class Int8Inference(tf.Module):
    """A trained model's inference with int8 encoder matmuls.

    Args:
        model: a built model of this project that holds a `BertModel`; its
            weights are read once, now.

    Call args:
        inputs: what the model takes (e.g. dict of int32 [batch_size,
            seq_length] `input_ids`, `input_mask`, `segment_ids`).
        training: must be False.
    Returns:
        what the model returns at inference, float32.
    Raises:
        ValueError: the model has no transformer layers; `training` is True.
    """

    def __init__(self, model, name=None):
        super().__init__(name=name or f"{model.name}_int8")
        self.model = rebuilt_copy(model)
        dense_layers = {id(dense) for dense in _encoder_dense_layers(self.model)}
        if not dense_layers:
            raise ValueError(
                f"{type(model).__name__} has no TransformerLayer to quantize.")
        _quantize_without_full_collections(
            self.model, lambda layer: id(layer) in dense_layers)
        if hasattr(model, "num_labels"):
            self.num_labels = model.num_labels

    @tf.function(jit_compile=True, reduce_retracing=True)
    def __call__(self, inputs, training=False):
        if training:
            raise ValueError("Int8Inference is for inference only (training=False).")
        return self.model(inputs, training=False)


def quantize_int8(model):
    """`Int8Inference(model)`, to pass where the Keras model would go in the
    serving export (it has the model's `num_labels`, if any).
    """
    return Int8Inference(model)
