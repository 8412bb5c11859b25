"""The multiple-choice model (SWAG), BERT paper §4.4 (the original never
shipped it): N rows `[CLS] context [SEP] ending [SEP]` per example run as
[batch * N, seq] (`flatten_choices`), one vector scores each pooled output,
softmax over N.
"""
import keras
from keras import ops

from bert_tf1.modeling.layers.dropout import Dropout
from bert_tf1.modeling.layers.heads import TransposedDense
from bert_tf1.modeling.layers.input_checks import encoder_inputs
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.task import TaskModel
from bert_tf1.modeling.models.classifier import CLASSIFIER_DROPOUT

#: The head's TF1 scope: `cls/multiple_choice/output_weights` [1, hidden],
#: `cls/multiple_choice/output_bias` [1] (the scoring vector, `[out, in]`).
MULTIPLE_CHOICE_SCOPE = "multiple_choice"


def flatten_choices(x):
    """[batch, num_choices, *rest] -> [batch * num_choices, *rest].

    Args:
      x: a tensor (or array) of rank >= 2, any dtype; e.g. int32 input_ids
        [batch, num_choices, max_seq_length].

    Returns:
      A tensor of x's dtype, choice k of example i at row i * num_choices + k.

    Raises:
      ValueError: rank < 2.
    """
    x = ops.convert_to_tensor(x)
    if len(x.shape) < 2:
        raise ValueError("flatten_choices expects [batch, num_choices, ...], "
                         "got shape %s" % (tuple(x.shape),))
    # Static sizes where known, dynamic scalars elsewhere.
    rest = [size if size is not None else dynamic for size, dynamic
            in zip(tuple(x.shape)[2:], ops.shape(x)[2:])]
    return ops.reshape(x, [-1] + rest)


@register
class BertMultipleChoice(TaskModel, BertConfigSerializable, keras.Model):
    """Scores each choice's pooled output; logits over the choices.

    Weights: the encoder, plus `cls/multiple_choice/output_weights`
    [1, hidden_size] and `cls/multiple_choice/output_bias` [1].

    Args:
        config, encoder, preprocessor: see `TaskModel`.

    Call args:
        inputs: dict of int32 [batch_size, num_choices, seq_length]
            `input_ids`, `input_mask`, `segment_ids` (any number of choices,
            the same within a batch).
        training: bool; enables dropout (0.1 on the pooled output, as the
            original classifier).
    Returns:
        float32 logits [batch_size, num_choices]; their softmax over the
        last axis gives the choice probabilities.

    Source: BERT paper §4.4 and the recipe its first author gave in
    google-research/bert issue #38.
    """

    _CLS_HEADS = ("multiple_choice",)

    def __init__(self, config=None, encoder=None, preprocessor=None,
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._init_encoder(config, encoder, preprocessor)
        config = self.config
        self.dropout = Dropout(CLASSIFIER_DROPOUT,
                                            dtype=self.dtype_policy)
        self.multiple_choice = TransposedDense(
            1, config.hidden_size, config.initializer_range,
            name=MULTIPLE_CHOICE_SCOPE, dtype=self.dtype_policy)
        self.build()

    def call(self, inputs, training=None):
        inputs = encoder_inputs(inputs, self)
        input_ids = inputs["input_ids"]
        if len(input_ids.shape) != 3:
            raise ValueError(
                f"BertMultipleChoice input `input_ids` has shape "
                f"{tuple(input_ids.shape)}; expected rank 3, [batch_size, "
                "num_choices, seq_length].")
        num_choices = ops.shape(input_ids)[1]
        rows = {key: flatten_choices(value) for key, value in inputs.items()}
        pooled = self.bert(rows, training=training)["pooled_output"]
        scores = self.multiple_choice(self.dropout(pooled, training=training))
        return ops.reshape(scores, (-1, num_choices))

    def task_loss(self, x, y, y_pred, sample_weight):
        """Softmax cross-entropy over the choices; `y` is `label_ids`
        [batch_size], the index of the right choice; Keras' reduction of
        `sample_weight`: sum(w * loss) / batch_size."""
        return losses.classifier_loss(y_pred, y, sample_weight)
