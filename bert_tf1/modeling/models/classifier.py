"""The sentence (pair) classifier of the original `run_classifier.py`."""
import keras

from bert_tf1.modeling.layers.dropout import Dropout
from bert_tf1.modeling.layers.heads import transposed_dense
from bert_tf1.modeling.layers.initializers import create_initializer
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.task import TaskModel
from bert_tf1.modeling.layers.input_checks import encoder_inputs

# run_classifier.py hard-codes these rather than reading the config.
CLASSIFIER_DROPOUT = 0.1
CLASSIFIER_INITIALIZER_RANGE = 0.02


@register
class BertClassifier(TaskModel, BertConfigSerializable, keras.Model):
    """Sentence (pair) classifier of the original `run_classifier.py`.

    Weights: the encoder, plus root-scope `output_weights` [num_labels,
    hidden_size] (truncated normal, stddev 0.02) and `output_bias` [num_labels].

    Args:
        config, encoder, preprocessor: see `TaskModel`.
        num_labels: int, number of classes (1 for a regression task such as
            STS-B, whose single "logit" is the predicted score); from
            `from_checkpoint`, defaults to the checkpoint head's.

    Call args:
        inputs: dict of int32 [batch_size, seq_length] `input_ids`,
            `input_mask`, `segment_ids`.
        training: bool; enables dropout (0.1 on the pooled output).
    Returns:
        float32 logits [batch_size, num_labels].

    Source: `create_model` in the original `run_classifier.py`.
    """

    _LABELS_HEAD = ("output_bias", "classifier")

    def __init__(self, config=None, num_labels=None, encoder=None,
                 preprocessor=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._init_encoder(config, encoder, preprocessor, num_labels)
        self.dropout = Dropout(
            CLASSIFIER_DROPOUT, dtype=self.dtype_policy)
        self.build()

    def build(self, input_shape=None):
        self.output_weights = self.add_weight(
            name="output_weights",
            shape=(self.num_labels, self.config.hidden_size),
            initializer=create_initializer(CLASSIFIER_INITIALIZER_RANGE))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.num_labels,), initializer="zeros")

    def call(self, inputs, training=None):
        pooled = self.bert(
            encoder_inputs(inputs, self), training=training)["pooled_output"]
        pooled = self.dropout(pooled, training=training)
        return transposed_dense(pooled, self.output_weights, self.output_bias)

    def task_loss(self, x, y, y_pred, sample_weight):
        """`y` is `label_ids` [batch_size]: mean cross-entropy (mean squared
        error for `num_labels == 1`) under Keras' reduction of
        `sample_weight` (`class_weight` arrives as one): sum(w * loss) /
        batch_size."""
        if self.num_labels == 1:
            per_example = losses.per_example_regression_loss(y_pred, y)
        else:
            per_example = losses.per_example_classifier_loss(y_pred, y)
        return losses.weighted_batch_mean(per_example, sample_weight)
