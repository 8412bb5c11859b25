"""The no-BERT baseline of the tagging demo: randomly initialised word-piece
embeddings, the feature-based tagger's two-layer BiLSTM, a classifier.

It reads exactly the inputs the BERT taggers read (the same word pieces,
windows and scored positions from bert_tf1/data/tagging), so the comparison isolates
what pre-trained BERT adds. Not in the paper: a baseline of the NER demo
(demos/ner.sh, trained by demos/wordpiece_bilstm_ner.py). Registered for
Keras as `bert_tf1>WordPieceBiLSTMTagger` once this module is imported.
"""
import keras

from bert_tf1.modeling.layers.bilstm import BiLSTMTaggingHead
from bert_tf1.modeling.layers.initializers import create_initializer
from bert_tf1.modeling.layers.input_checks import require_input_dict
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.task import OwnLoss

#: Scope of the embedding table: `wordpiece_bilstm/embeddings`.
EMBEDDING_SCOPE = "wordpiece_bilstm"


@register
class WordPieceBiLSTMTagger(OwnLoss, BertConfigSerializable, keras.Model):
    """Word-piece embeddings -> BiLSTM -> tag logits, trained from scratch.

    Weights: `wordpiece_bilstm/embeddings` [vocab_size, hidden_size]
    (truncated normal, `initializer_range`; trainable) and the head
    `cls/tagging_lstm/*` (bert_tf1/modeling/layers/bilstm.py). Only `vocab_size`,
    `hidden_size` and `initializer_range` of the config are used.

    Args:
        config: `BertConfig`.
        num_labels: int >= 1.
        lstm_units: units per LSTM direction.
        dropout_rate: the head's dropout.

    Call args:
        inputs: dict of int32 [batch_size, seq_length] `input_ids` and
            `input_mask` (default all ones); `segment_ids` is ignored.
        training: bool.
    Returns:
        float32 logits [batch_size, seq_length, num_labels].
    """

    def __init__(self, config, num_labels, lstm_units=768, dropout_rate=0.1,
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.config = config
        self.num_labels = int(num_labels)
        self.lstm_units = int(lstm_units)
        self.dropout_rate = float(dropout_rate)
        self.embeddings = keras.layers.Embedding(
            config.vocab_size, config.hidden_size,
            embeddings_initializer=create_initializer(config.initializer_range),
            name=EMBEDDING_SCOPE, dtype=self.dtype_policy)
        self.head = BiLSTMTaggingHead(
            self.num_labels, config.hidden_size, self.lstm_units,
            dropout_rate=self.dropout_rate,
            initializer_range=config.initializer_range,
            dtype=self.dtype_policy)
        self.build()

    def build(self, input_shape=None):
        self.embeddings.build((None, None))
        with keras.name_scope("cls"):
            self.head.build()

    def call(self, inputs, training=None):
        require_input_dict(inputs, type(self).__name__)
        input_ids = inputs["input_ids"]
        input_mask = inputs.get("input_mask")
        if input_mask is None:
            input_mask = keras.ops.ones_like(input_ids)
        return self.head(self.embeddings(input_ids), input_mask,
                         training=training)

    def task_loss(self, x, y, y_pred, sample_weight):
        """As `BertTokenClassifier.task_loss`
        (`losses.weighted_tagging_loss`)."""
        return losses.weighted_tagging_loss(x, y_pred, y, sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update(num_labels=self.num_labels, lstm_units=self.lstm_units,
                      dropout_rate=self.dropout_rate)
        return config
