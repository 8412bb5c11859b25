"""Int8 inference of a trained BERT on CPU: oneDNN int8 matmuls, float32 rest.

`quantize_int8(model)` snapshots the six Dense kernels of every transformer
layer (query, key and value concatenated into one [H, 3H] matmul, attention
output, intermediate, output) as int8 with one scale per output column, and
returns a `tf.Module` that is called like the model (`module(inputs,
training=False)`), for `BertModel`, `BertClassifier` and `BertSquad`. The
embeddings, attention scores/softmax/context, LayerNorms, pooler and task head
stay float32 and use the model's own weights, so its names and checkpoints are
untouched (the int8 weights are constants of the traced graph, a quarter of
the float32 size).

Scheme (dynamic quantization, nothing calibrated): each matmul input row is
quantized on the fly, asymmetrically, to 7 bits (0..127, its own minimum and
step); weights are symmetric int8 per output column. 7 bits, not 8, because on
CPUs without VNNI (AVX2, as here) oneDNN multiplies u8 x s8 with
`vpmaddubsw`, whose int16 pair sums saturate for 8-bit inputs; 127*127*2 fits.
The int32 products come back from oneDNN as float32 and one fused
(`jit_compile`) pass per matmul applies the row and column scales, the
zero-point term `row_min * column_sum(W)`, the bias, and what follows (GELU,
residual + LayerNorm) and quantizes the next matmul's input.

Needs oneDNN: `TF_ENABLE_ONEDNN_OPTS=1` in the environment before TensorFlow
is imported (TensorFlow 2.21 leaves it off on CPUs without AVX-512); without
it TensorFlow has no kernel for `QuantizedMatMulWithBiasAndDequantize`
(`onednn_enabled()` tells; `quantize_int8` raises a `UserError`). A SavedModel
exported from the module needs the same variable where it is loaded.

Source: the encoder math of `modeling.layers.transformer` / `modeling.layers.attention`
(the original `transformer_model`), with the matmuls replaced.
"""
import math

import numpy as np
import tensorflow as tf

from data.io.errors import UserError
from modeling.layers.attention import attention_bias_from_mask
from modeling.layers.embeddings import LAYER_NORM_EPSILON
from modeling.layers.input_checks import (check_encoder_inputs,
                                          require_input_dict)

# Input levels: 7 bits (see the module docstring).
INPUT_LEVELS = 127.0
WEIGHT_LEVELS = 127.0


def onednn_enabled():
    """True if this process's TensorFlow runs with oneDNN (int8 kernels)."""
    from tensorflow.python.util import _pywrap_util_port
    return bool(_pywrap_util_port.IsMklEnabled())


def quantize_kernel(kernel):
    """Symmetric per-output-column int8 quantization of a Dense kernel.

    Args:
        kernel: float array [input_width, units].
    Returns:
        (int8 [input_width, units], float32 scales [units]) with
        kernel ~= int8 * scales; an all-zero column gets scale 1.
    """
    kernel = np.asarray(kernel, np.float32)
    peak = np.abs(kernel).max(axis=0)
    scales = np.where(peak > 0, peak / WEIGHT_LEVELS, 1.0).astype(np.float32)
    values = np.clip(np.round(kernel / scales), -WEIGHT_LEVELS, WEIGHT_LEVELS)
    return values.astype(np.int8), scales


@tf.function(jit_compile=True)
def _quantize_rows(x):
    """float32 [rows, width] -> (uint8 codes 0..127, step [rows, 1], min [rows, 1])."""
    low = tf.reduce_min(x, axis=1, keepdims=True)
    step = tf.maximum(tf.reduce_max(x, axis=1, keepdims=True) - low, 1e-30) / INPUT_LEVELS
    return tf.cast(tf.round((x - low) / step), tf.uint8), step, low


def _dequantize(products, step, low, weights):
    """int32 products (as float32) -> x @ W + b for the float rows x."""
    return (products * step * weights["scales"]
            + low * weights["column_sums"] + weights["bias"])


def _layer_norm(x, gamma, beta):
    mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
    return (x - mean) * tf.math.rsqrt(variance + LAYER_NORM_EPSILON) * gamma + beta


@tf.function(jit_compile=True)
def _bias(products, step, low, weights):
    return _dequantize(products, step, low, weights)


@tf.function(jit_compile=True)
def _residual_norm(products, step, low, weights, residual, gamma, beta):
    """LayerNorm(x @ W + b + residual), and its rows quantized."""
    out = _layer_norm(_dequantize(products, step, low, weights) + residual,
                      gamma, beta)
    return (out,) + _quantize_rows(out)


@tf.function(jit_compile=True)
def _gelu_quantized(products, step, low, weights):
    """The intermediate layer: tanh GELU(x @ W + b), returned quantized."""
    x = _dequantize(products, step, low, weights)
    gelu = 0.5 * x * (1.0 + tf.tanh(math.sqrt(2.0 / math.pi)
                                    * (x + 0.044715 * x * x * x)))
    return _quantize_rows(gelu)


def _int8_matmul(codes, kernel):
    """uint8 codes [rows, k] x int8 kernel [k, units] -> exact products, float32."""
    units = kernel.shape[1]
    # Scales of 1 (max/255 for the input, max/127 for the weights): the
    # result is the integer sum itself; the real scales come after.
    return tf.raw_ops.QuantizedMatMulWithBiasAndDequantize(
        a=tf.bitcast(codes, tf.quint8), b=tf.constant(kernel, dtype=tf.qint8),
        bias=tf.zeros([units], tf.float32), min_a=0.0, max_a=255.0,
        min_b=-127.0, max_b=127.0, min_freezed_output=0.0,
        max_freezed_output=0.0, Toutput=tf.float32, input_quant_mode="SCALED")


class _Int8Dense:
    """A Dense snapshot: int8 kernel, scales, column sums, float32 bias."""

    def __init__(self, kernels, biases):
        kernel = np.concatenate([np.asarray(k, np.float32) for k in kernels], axis=1)
        self.kernel, scales = quantize_kernel(kernel)
        self.constants = {
            "scales": scales,
            # Sums of the dequantized kernel, for the inputs' zero points.
            "column_sums": (self.kernel.astype(np.float32) * scales).sum(axis=0),
            "bias": np.concatenate([np.asarray(b, np.float32) for b in biases]),
        }

    def products(self, codes):
        return _int8_matmul(codes, self.kernel)

    def weights(self):
        return {name: tf.constant(value) for name, value in self.constants.items()}


def _dense_parts(dense):
    return dense.kernel.numpy(), dense.bias.numpy()


class _Int8Layer:
    """One transformer layer's int8 matmuls and float32 LayerNorm weights."""

    def __init__(self, layer):
        attention = layer.attention.self_attention
        parts = [_dense_parts(d) for d in (attention.query, attention.key, attention.value)]
        self.qkv = _Int8Dense([p[0] for p in parts], [p[1] for p in parts])
        self.attention_output = _Int8Dense(
            *zip(_dense_parts(layer.attention.output_projection.dense)))
        self.intermediate = _Int8Dense(*zip(_dense_parts(layer.intermediate.dense)))
        self.output = _Int8Dense(*zip(_dense_parts(layer.output_projection.dense)))
        self.norms = [
            (norm.gamma, norm.beta) for norm in (
                layer.attention.output_projection.layer_norm,
                layer.output_projection.layer_norm)]
        self.num_heads = attention.num_heads
        self.head_size = attention.head_size

    def __call__(self, rows, codes, step, low, attention_bias, batch_size, seq_length):
        width = self.num_heads * self.head_size
        qkv = _bias(self.qkv.products(codes), step, low, self.qkv.weights())

        def heads(x):  # [B*S, H] -> [B, N, S, H/N]
            x = tf.reshape(x, (batch_size, seq_length, self.num_heads, self.head_size))
            return tf.transpose(x, (0, 2, 1, 3))
        query, key, value = (heads(qkv[:, i * width:(i + 1) * width]) for i in range(3))
        scores = tf.matmul(query, key, transpose_b=True) * (1.0 / math.sqrt(self.head_size))
        probs = tf.nn.softmax(scores + attention_bias, axis=-1)
        context = tf.reshape(tf.transpose(tf.matmul(probs, value), (0, 2, 1, 3)),
                             (-1, width))
        c_codes, c_step, c_low = _quantize_rows(context)
        (gamma, beta), (gamma2, beta2) = (
            (tf.convert_to_tensor(g), tf.convert_to_tensor(b)) for g, b in self.norms)
        attention_rows, a_codes, a_step, a_low = _residual_norm(
            self.attention_output.products(c_codes), c_step, c_low,
            self.attention_output.weights(), rows, gamma, beta)
        g_codes, g_step, g_low = _gelu_quantized(
            self.intermediate.products(a_codes), a_step, a_low,
            self.intermediate.weights())
        return _residual_norm(
            self.output.products(g_codes), g_step, g_low, self.output.weights(),
            attention_rows, gamma2, beta2)


class Int8Inference(tf.Module):
    """A trained model's inference with int8 matmuls (see the module docstring).

    Args:
        model: a built `BertModel`, `BertClassifier` or `BertSquad`; its
            weights are read once, now (retrain -> quantize again).

    Call args:
        inputs: dict of int32 [batch_size, seq_length] `input_ids` and
            optional `input_mask`, `segment_ids`, as for the model.
        training: must be False (no int8 training).
    Returns:
        what the model returns at inference: the encoder dict
        (`sequence_output` [batch, seq, hidden], `pooled_output`
        [batch, hidden], float32), classifier logits [batch, num_labels], or
        SQuAD `start_logits`/`end_logits` [batch, seq].
    Raises:
        UserError: oneDNN is off in this process.
        UserError: another kind of model.
    """

    def __init__(self, model, name=None):
        super().__init__(name=name or f"{model.name}_int8")
        if not onednn_enabled():
            raise UserError(
                "Int8 inference needs TensorFlow's oneDNN kernels: set "
                "TF_ENABLE_ONEDNN_OPTS=1 (the scripts' default) before "
                "TensorFlow is imported.")
        from modeling.models.bert_model import BertModel
        from modeling.models import BertClassifier, BertSquad
        if isinstance(model, BertModel):
            self.kind, encoder = "encoder", model
        elif isinstance(model, BertClassifier):
            self.kind, encoder = "classifier", model.bert
            self.num_labels = model.num_labels
        elif isinstance(model, BertSquad):
            self.kind, encoder = "squad", model.bert
        else:
            raise UserError(
                "int8 serving is for BertModel, BertClassifier or BertSquad "
                f"exports, not {type(model).__name__}.")
        self.model = model
        self.config = encoder.config
        self._encoder = encoder
        self._layers = [_Int8Layer(layer) for layer in encoder.encoder.transformer_layers]

    def _encode(self, inputs):
        require_input_dict(inputs, "Int8Inference")
        input_ids = tf.convert_to_tensor(
            check_encoder_inputs(inputs, self.config))
        input_mask = inputs.get("input_mask")
        input_mask = tf.ones_like(input_ids) if input_mask is None else input_mask
        segment_ids = inputs.get("segment_ids")
        segment_ids = tf.zeros_like(input_ids) if segment_ids is None else segment_ids
        embeddings = self._encoder.embeddings(input_ids, segment_ids, training=False)
        batch_size, seq_length = tf.shape(input_ids)[0], tf.shape(input_ids)[1]
        bias = attention_bias_from_mask(input_mask, dtype=tf.float32)
        rows = tf.reshape(embeddings, (-1, self.config.hidden_size))
        codes, step, low = _quantize_rows(rows)
        for layer in self._layers:
            rows, codes, step, low = layer(rows, codes, step, low, bias,
                                           batch_size, seq_length)
        sequence_output = tf.reshape(
            rows, (batch_size, seq_length, self.config.hidden_size))
        return sequence_output, self._encoder.pooler(sequence_output)

    @tf.function(reduce_retracing=True)
    def __call__(self, inputs, training=False):
        # Always a graph: oneDNN's int8 kernels are only put in by its graph
        # rewrite, not in eager mode.
        if training:
            raise ValueError("Int8Inference is for inference only (training=False).")
        sequence_output, pooled_output = self._encode(inputs)
        if self.kind == "encoder":
            return {"sequence_output": sequence_output, "pooled_output": pooled_output}
        if self.kind == "classifier":
            from modeling.layers.heads import transposed_dense
            return transposed_dense(pooled_output, self.model.output_weights,
                                    self.model.output_bias)
        start_logits, end_logits = self.model.squad(sequence_output)
        return {"start_logits": start_logits, "end_logits": end_logits}


def quantize_int8(model):
    """`Int8Inference(model)`: the model's inference with int8 matmuls.

    For the serving export: pass the result where the Keras model would go
    (e.g. `ClassifierServing(quantize_int8(model), ...)`); it has the model's
    `num_labels` (classifier) and its variables. See `Int8Inference`.
    """
    return Int8Inference(model)
