"""The embedding block: word + segment + position embeddings, LayerNorm, dropout."""
import keras
from keras import ops

from bert_tf1.modeling.layers.dropout import Dropout
from bert_tf1.modeling.layers.initializers import create_initializer
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register

# `tf.contrib.layers.layer_norm`, which the original uses, hard-codes this epsilon.
LAYER_NORM_EPSILON = 1e-12


@register
class BertEmbeddings(BertConfigSerializable, keras.layers.Layer):
    """Sums the three embeddings, then LayerNorm and dropout.

    Weights (TF1 names under `bert/embeddings/`): `word_embeddings`
    [vocab_size, hidden_size], `token_type_embeddings` [type_vocab_size,
    hidden_size], `position_embeddings` [max_position_embeddings, hidden_size],
    `LayerNorm/gamma`, `LayerNorm/beta` [hidden_size].

    Call args:
        input_ids: int32 [batch_size, seq_length], word-piece ids.
        segment_ids: int32 [batch_size, seq_length], token type ids.
        training: bool, enables dropout (`hidden_dropout_prob`).

    Returns:
        float [batch_size, seq_length, hidden_size].

    Raises:
        SequenceLengthError: a static `seq_length` exceeds
            `max_position_embeddings` (`BertConfig.check_sequence_length`).

    Source: `embedding_lookup` and `embedding_postprocessor` in the original
    `modeling.py`.
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "embeddings")
        super().__init__(**kwargs)
        self.config = config
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=LAYER_NORM_EPSILON, name="LayerNorm", dtype=self.dtype_policy)
        self.dropout = Dropout(
            config.hidden_dropout_prob, dtype=self.dtype_policy)

    def build(self, input_shape=None):
        config = self.config
        initializer = create_initializer(config.initializer_range)
        self.word_embeddings = self.add_weight(
            name="word_embeddings",
            shape=(config.vocab_size, config.hidden_size),
            initializer=initializer)
        self.token_type_embeddings = self.add_weight(
            name="token_type_embeddings",
            shape=(config.type_vocab_size, config.hidden_size),
            initializer=initializer)
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(config.max_position_embeddings, config.hidden_size),
            initializer=initializer)
        self.layer_norm.build((None, None, config.hidden_size))

    def call(self, input_ids, segment_ids, training=None):
        if input_ids.shape[1] is not None:
            self.config.check_sequence_length(
                input_ids.shape[1], "BertEmbeddings input_ids")
        seq_length = ops.shape(input_ids)[1]
        embeddings = ops.take(self.word_embeddings, input_ids, axis=0)
        # A one-hot matmul, as the original: same sums as a gather, but a dense
        # gradient, which enters the global-norm clipping as the original's does.
        token_types = ops.one_hot(segment_ids, self.config.type_vocab_size,
                                  dtype=embeddings.dtype)
        embeddings = embeddings + ops.matmul(
            token_types, ops.cast(self.token_type_embeddings, embeddings.dtype))
        positions = ops.slice(self.position_embeddings, (0, 0),
                              (seq_length, self.config.hidden_size))
        embeddings = embeddings + ops.expand_dims(positions, 0)
        embeddings = self.layer_norm(embeddings)
        return self.dropout(embeddings, training=training)
