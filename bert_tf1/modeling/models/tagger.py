"""The token classifier for sequence tagging (NER), BERT paper §5.3 (the
original repository has none): each token's final hidden vector, after
dropout, through one classification layer; words are scored at their first
word piece (the features in `bert_tf1/data/tagging` choose the scored pieces).
"""
import keras

from bert_tf1.modeling.layers.dropout import Dropout
from bert_tf1.modeling.layers.heads import TransposedDense
from bert_tf1.modeling.layers.input_checks import encoder_inputs
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.task import TaskModel

#: The head's TF1 scope: `cls/tagging/output_weights` [num_labels, hidden],
#: `cls/tagging/output_bias` [num_labels] (the original's `[out, in]`
#: orientation, like its SQuAD head `cls/squad/*`).
TAGGING_SCOPE = "tagging"


@register
class BertTokenClassifier(TaskModel, BertConfigSerializable, keras.Model):
    """Per-token classifier on the encoder's `sequence_output`.

    Weights: the encoder, plus `cls/tagging/output_weights`
    [num_labels, hidden_size] (truncated normal, `initializer_range`) and
    `cls/tagging/output_bias` [num_labels].

    Args:
        config, encoder, preprocessor: see `TaskModel`.
        num_labels: int >= 1, size of the label list (id 0 is "O" for the
            lists `bert_tf1.data.tagging.schemes.scheme_labels` makes); from
            `from_checkpoint`, defaults to the checkpoint head's.

    Call args:
        inputs: dict of int32 [batch_size, seq_length] `input_ids`,
            `input_mask`, `segment_ids`.
        training: bool; enables dropout (`hidden_dropout_prob` on the
            sequence output, as in the encoder).
    Returns:
        float32 logits [batch_size, seq_length, num_labels].

    Source: BERT paper §5.3 and Figure 4(d).
    """

    _LABELS_HEAD = (f"cls/{TAGGING_SCOPE}/output_bias", "tagging")
    _CLS_HEADS = ("tagging",)

    def __init__(self, config=None, num_labels=None, encoder=None,
                 preprocessor=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._init_encoder(config, encoder, preprocessor, num_labels)
        config = self.config
        # Tags read the sequence output only: as BertSquad's, the pooler is
        # not trained (no gradient, no adam slots).
        self.bert.pooler.trainable = False
        self.dropout = Dropout(config.hidden_dropout_prob,
                                            dtype=self.dtype_policy)
        self.tagging = TransposedDense(
            self.num_labels, config.hidden_size, config.initializer_range,
            name=TAGGING_SCOPE, dtype=self.dtype_policy)
        self.build()

    def call(self, inputs, training=None):
        sequence_output = self.bert(
            encoder_inputs(inputs, self), training=training)["sequence_output"]
        return self.tagging(self.dropout(sequence_output, training=training))

    def task_loss(self, x, y, y_pred, sample_weight):
        """Mean cross-entropy over scored tokens: `y` is `label_ids` int
        [batch_size, seq_length], `x["label_weights"]` float [batch_size,
        seq_length] marks the scored tokens (all ones if absent)
        (`losses.weighted_tagging_loss`)."""
        return losses.weighted_tagging_loss(x, y_pred, y, sample_weight)
