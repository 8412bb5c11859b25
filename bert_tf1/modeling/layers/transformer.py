"""One post-LayerNorm transformer layer, as `transformer_model` of the original."""
import keras
from keras import ops

from bert_tf1.modeling.activations import get_activation, get_training_activation
from bert_tf1.modeling.layers.attention import SelfAttention
from bert_tf1.modeling.layers.dropout import Dropout
from bert_tf1.modeling.layers.embeddings import LAYER_NORM_EPSILON
from bert_tf1.modeling.layers.initializers import create_initializer
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register


@register
class DenseResidualNorm(BertConfigSerializable, keras.layers.Layer):
    """`dense` -> dropout -> `LayerNorm(x + residual)`.

    Weights: `dense/kernel` [input_width, hidden_size], `dense/bias`
    [hidden_size], `LayerNorm/gamma`, `LayerNorm/beta` [hidden_size]. Used twice
    per layer, for `attention/output` and for `output`.

    Call args:
        hidden_states: float [batch_size, seq_length, input_width].
        residual: float [batch_size, seq_length, hidden_size].
    Returns:
        float [batch_size, seq_length, hidden_size].
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "output")
        super().__init__(**kwargs)
        self.config = config
        self.dense = keras.layers.Dense(
            config.hidden_size,
            kernel_initializer=create_initializer(config.initializer_range),
            name="dense", dtype=self.dtype_policy)
        self.dropout = Dropout(
            config.hidden_dropout_prob, dtype=self.dtype_policy)
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=LAYER_NORM_EPSILON, name="LayerNorm", dtype=self.dtype_policy)

    def build(self, input_shape):
        self.dense.build(input_shape)
        self.layer_norm.build(
            tuple(input_shape[:-1]) + (self.config.hidden_size,))

    def call(self, hidden_states, residual, training=None):
        x = self.dropout(self.dense(hidden_states), training=training)
        return self.layer_norm(x + residual)


@register
class AttentionBlock(BertConfigSerializable, keras.layers.Layer):
    """Self-attention followed by its output projection (scope `attention`)."""

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "attention")
        super().__init__(**kwargs)
        self.config = config
        self.self_attention = SelfAttention(
            config, name="self", dtype=self.dtype_policy)
        self.output_projection = DenseResidualNorm(
            config, name="output", dtype=self.dtype_policy)

    def build(self, input_shape):
        self.self_attention.build(input_shape)
        self.output_projection.build(input_shape)

    def call(self, hidden_states, attention_bias, training=None):
        context = self.self_attention(hidden_states, attention_bias, training=training)
        return self.output_projection(context, hidden_states, training=training)


@register
class Intermediate(BertConfigSerializable, keras.layers.Layer):
    """The feed-forward expansion (scope `intermediate`): `dense` with `hidden_act`.

    Weights: `dense/kernel` [hidden_size, intermediate_size], `dense/bias`.
    With `training=True` the activation is `get_training_activation`'s (same
    outputs, a cheaper gradient).
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "intermediate")
        super().__init__(**kwargs)
        self.config = config
        self.dense = keras.layers.Dense(
            config.intermediate_size,
            kernel_initializer=create_initializer(config.initializer_range),
            name="dense", dtype=self.dtype_policy)
        self.activation = get_activation(config.hidden_act)
        self.training_activation = get_training_activation(config.hidden_act)

    def build(self, input_shape):
        self.dense.build(input_shape)

    def call(self, hidden_states, training=None):
        activation = self.training_activation if training else self.activation
        return activation(self.dense(hidden_states))


@register
class TransformerLayer(BertConfigSerializable, keras.layers.Layer):
    """One encoder layer, scope `layer_<i>`.

    Call args:
        hidden_states: float [batch_size, seq_length, hidden_size].
        attention_bias: float [batch_size, 1, 1, seq_length].
        training: bool, enables dropout.

    Returns:
        float [batch_size, seq_length, hidden_size].

    Source: the loop body of `transformer_model` in the original `modeling.py`
    (post-LN: attention -> dense -> dropout -> LayerNorm(x + input), then
    intermediate -> dense -> dropout -> LayerNorm(x + attention_output)).
    """

    def __init__(self, config, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        dtype = self.dtype_policy
        self.attention = AttentionBlock(config, name="attention", dtype=dtype)
        self.intermediate = Intermediate(
            config, name="intermediate", dtype=dtype)
        self.output_projection = DenseResidualNorm(
            config, name="output", dtype=dtype)

    def build(self, input_shape):
        self.attention.build(input_shape)
        self.intermediate.build(input_shape)
        self.output_projection.build(
            tuple(input_shape[:-1]) + (self.config.intermediate_size,))

    def call(self, hidden_states, attention_bias, training=None):
        # The sublayers run on rows, [batch_size * seq_length, hidden_size]:
        # a 2-D Dense is one MatMul that oneDNN fuses with its bias and GELU,
        # while a 3-D one goes through tensordot, whose reshapes block that.
        shape = ops.shape(hidden_states)
        rows = ops.reshape(hidden_states, (-1, self.config.hidden_size))
        attention_output = self.attention(rows, attention_bias, training=training)
        intermediate_output = self.intermediate(attention_output, training=training)
        layer_output = self.output_projection(
            intermediate_output, attention_output, training=training)
        return ops.reshape(layer_output, shape)
