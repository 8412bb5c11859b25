"""Output heads with the original variable names (all under the `cls` scope).

Every `output_weights` here is stored `[out, in]`, as the original, and applied
with a transposed matmul; every `*/kernel` is `[in, out]`.
"""
import keras
from keras import ops

from bert_tf1.modeling.activations import get_activation
from bert_tf1.modeling.layers.embeddings import LAYER_NORM_EPSILON
from bert_tf1.modeling.layers.initializers import create_initializer
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register


@register
class MaskedLMHead(BertConfigSerializable, keras.layers.Layer):
    """Masked-LM head, scope `cls/predictions`.

    Weights: `transform/dense/kernel` [hidden_size, hidden_size],
    `transform/dense/bias`, `transform/LayerNorm/{gamma,beta}` [hidden_size],
    `output_bias` [vocab_size]. The decoder matrix is the word embedding table
    (tied, no variable of its own): it is passed in each call, so the head's
    Keras config is the `BertConfig` alone and a reloaded model stays tied.

    Args:
        config: the `BertConfig`.

    Call args:
        sequence_output: float [batch_size, seq_length, hidden_size].
        masked_lm_positions: int32 [batch_size, max_predictions_per_seq].
        embedding_table: the `bert/embeddings/word_embeddings` variable,
            [vocab_size, hidden_size].
    Returns:
        float32 log-probabilities [batch_size, max_predictions_per_seq, vocab_size].

    Source: `get_masked_lm_output` in the original `run_pretraining.py`.
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "predictions")
        super().__init__(**kwargs)
        self.config = config
        self.transform_dense = keras.layers.Dense(
            config.hidden_size,
            activation=get_activation(config.hidden_act),
            kernel_initializer=create_initializer(config.initializer_range),
            name="dense", dtype=self.dtype_policy)
        self.transform_layer_norm = keras.layers.LayerNormalization(
            epsilon=LAYER_NORM_EPSILON, name="LayerNorm", dtype=self.dtype_policy)

    def build(self, input_shape=None):
        hidden = self.config.hidden_size
        with keras.name_scope("transform"):
            self.transform_dense.build((None, None, hidden))
            self.transform_layer_norm.build((None, None, hidden))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.config.vocab_size,),
            initializer="zeros")

    def call(self, sequence_output, masked_lm_positions, embedding_table):
        # The vectors at the positions: the original's `gather_indexes`
        # (which flattens to [batch_size * num_positions, hidden]).
        positions = ops.cast(masked_lm_positions, "int32")
        x = ops.take_along_axis(sequence_output, positions[:, :, None], axis=1)
        x = self.transform_layer_norm(self.transform_dense(x))
        table = ops.cast(embedding_table, x.dtype)
        logits = ops.matmul(x, ops.transpose(table)) + ops.cast(
            self.output_bias, x.dtype)
        return ops.log_softmax(ops.cast(logits, "float32"), axis=-1)


def transposed_dense(x, output_weights, output_bias):
    """`x . output_weights^T + output_bias`, in float32.

    Args:
        x: float [..., input_width].
        output_weights: [units, input_width], the original's `[out, in]`.
        output_bias: [units].
    Returns:
        float32 [..., units].
    """
    logits = ops.matmul(x, ops.transpose(ops.cast(output_weights, x.dtype)))
    return ops.cast(logits + ops.cast(output_bias, x.dtype), "float32")


@register
class TransposedDense(keras.layers.Layer):
    """`x . output_weights^T + output_bias` with `output_weights` [units, in].

    The original's hand-made output layers (next sentence, SQuAD, classifier)
    store the matrix `[out, in]`; keeping that shape keeps the checkpoint
    layout. Initialised with truncated normal (`initializer_range`) and zeros.

    Call args: x float [..., input_width]. Returns float32 [..., units].
    """

    def __init__(self, units, input_width, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.input_width = input_width
        self.initializer_range = initializer_range

    def build(self, input_shape=None):
        self.output_weights = self.add_weight(
            name="output_weights", shape=(self.units, self.input_width),
            initializer=create_initializer(self.initializer_range))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.units,), initializer="zeros")

    def call(self, x):
        return transposed_dense(x, self.output_weights, self.output_bias)

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, input_width=self.input_width,
                      initializer_range=self.initializer_range)
        return config


@register
class NextSentenceHead(BertConfigSerializable, TransposedDense):
    """Next-sentence head, scope `cls/seq_relationship`.

    Weights: `output_weights` [2, hidden_size], `output_bias` [2]; class 0 is
    "B follows A", class 1 "B is random".

    Call args: pooled_output float [batch_size, hidden_size].
    Returns: float32 log-probabilities [batch_size, 2].

    Source: `get_next_sentence_output` in the original `run_pretraining.py`.
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "seq_relationship")
        super().__init__(2, config.hidden_size, config.initializer_range, **kwargs)
        self.config = config

    def call(self, pooled_output):
        return ops.log_softmax(super().call(pooled_output), axis=-1)


@register
class SquadHead(BertConfigSerializable, TransposedDense):
    """SQuAD span head, scope `cls/squad`: no dropout, no padding mask.

    Weights: `output_weights` [2, hidden_size] (row 0 start, row 1 end),
    `output_bias` [2].

    Call args: sequence_output float [batch_size, seq_length, hidden_size].
    Returns: (start_logits, end_logits), each float32 [batch_size, seq_length].

    Source: `create_model` in the original `run_squad.py`.
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "squad")
        super().__init__(2, config.hidden_size, config.initializer_range, **kwargs)
        self.config = config

    def call(self, sequence_output):
        logits = super().call(sequence_output)
        return logits[..., 0], logits[..., 1]
