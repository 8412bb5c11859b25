"""Multi-head self-attention with the original's weight shapes and masking."""
import math

import keras
from keras import ops

from bert_tf1.modeling.layers.dropout import Dropout
from bert_tf1.modeling.layers.initializers import create_initializer
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register

# The original adds this to the logits of masked keys (not -inf), so a row whose
# keys are all masked still gets a uniform softmax instead of NaNs.
MASK_ADDER = -10000.0


def attention_bias_from_mask(input_mask, dtype="float32"):
    """Turns a key mask into the additive bias the original uses.

    Args:
        input_mask: int or float [batch_size, seq_length], 1 for real tokens.
        dtype: dtype of the result (the attention logits' dtype).

    Returns:
        [batch_size, 1, 1, seq_length]: 0 for real keys, -10000.0 for padding.
        Only keys are masked; padded queries still attend (as the original).

    Source: `create_attention_mask_from_input_mask` and the `adder` in
    `attention_layer` of the original `modeling.py`.
    """
    mask = ops.cast(input_mask, dtype)
    # expand_dims, not mask[:, None, None, :]: a new_axis strided slice is
    # no LiteRT builtin op (the numeric export converts to LiteRT).
    return (1.0 - ops.expand_dims(ops.expand_dims(mask, 1), 1)) * MASK_ADDER


@register
class SelfAttention(BertConfigSerializable, keras.layers.Layer):
    """Scaled dot-product self-attention over `num_attention_heads` heads.

    Weights (TF1 names under `.../attention/self/`): `{query,key,value}/kernel`
    [hidden_size, hidden_size] (heads are consecutive slices of the output
    axis) and `{query,key,value}/bias` [hidden_size].

    Call args:
        hidden_states: float [batch_size, seq_length, hidden_size], or
            flattened to [batch_size * seq_length, hidden_size].
        attention_bias: float [batch_size, 1, 1, seq_length], from
            `attention_bias_from_mask`.
        training: bool, enables dropout on the attention probabilities.

    Returns:
        float, the concatenated heads, in the shape of `hidden_states`.

    Source: `attention_layer` in the original `modeling.py`.
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "self")
        super().__init__(**kwargs)
        self.config = config
        self.num_heads = config.num_attention_heads
        self.head_size = config.head_size
        width = config.hidden_size
        initializer = create_initializer(config.initializer_range)
        dtype = self.dtype_policy
        self.query = keras.layers.Dense(
            width, kernel_initializer=initializer, name="query", dtype=dtype)
        self.key = keras.layers.Dense(
            width, kernel_initializer=initializer, name="key", dtype=dtype)
        self.value = keras.layers.Dense(
            width, kernel_initializer=initializer, name="value", dtype=dtype)
        # Kept probabilities stay unscaled; the context, [.., seq, head_size]
        # instead of [.., seq, seq], is scaled by 1 / (1 - rate) below.
        self.dropout = Dropout(
            config.attention_probs_dropout_prob, scale=False, dtype=dtype)

    def build(self, input_shape):
        for dense in (self.query, self.key, self.value):
            dense.build(input_shape)

    def _split_heads(self, x, batch_size, seq_length):
        # [B, S, H] -> [B, N, S, H/N], the head-major split of the original.
        x = ops.reshape(x, (batch_size, seq_length, self.num_heads, self.head_size))
        return ops.transpose(x, (0, 2, 1, 3))

    def call(self, hidden_states, attention_bias, training=None):
        # `hidden_states` may also come flattened, [batch_size * seq_length,
        # hidden_size] (as TransformerLayer passes it); the bias then gives
        # the batch size and length. The result has the input's rank.
        if len(hidden_states.shape) == 3:
            batch_size = ops.shape(hidden_states)[0]
            seq_length = ops.shape(hidden_states)[1]
        else:
            batch_size = ops.shape(attention_bias)[0]
            seq_length = ops.shape(attention_bias)[-1]
        query = self._split_heads(self.query(hidden_states), batch_size, seq_length)
        key = self._split_heads(self.key(hidden_states), batch_size, seq_length)
        value = self._split_heads(self.value(hidden_states), batch_size, seq_length)
        scores = ops.matmul(query, ops.transpose(key, (0, 1, 3, 2)))
        scores = scores * (1.0 / math.sqrt(float(self.head_size)))
        scores = scores + ops.cast(attention_bias, scores.dtype)
        probs = ops.softmax(scores, axis=-1)
        probs = self.dropout(probs, training=training)
        context = ops.matmul(probs, value)
        if training and self.dropout.rate > 0:
            context = context * (1.0 / (1.0 - self.dropout.rate))
        context = ops.transpose(context, (0, 2, 1, 3))
        width = self.num_heads * self.head_size
        if len(hidden_states.shape) == 3:
            return ops.reshape(context, (batch_size, seq_length, width))
        return ops.reshape(context, (-1, width))
