"""The sentence (pair) classifier of the original `run_classifier.py`."""
import keras

from modeling.layers.heads import transposed_dense
from modeling.layers.initializers import create_initializer
from modeling.layers.serialization import BertConfigSerializable, register
from modeling.models import losses
from modeling.models.bert_model import BertModel
from modeling.layers.input_checks import encoder_inputs, positive_count

# run_classifier.py hard-codes these rather than reading the config.
CLASSIFIER_DROPOUT = 0.1
CLASSIFIER_INITIALIZER_RANGE = 0.02


@register
class BertClassifier(BertConfigSerializable, keras.Model):
    """Sentence (pair) classifier of the original `run_classifier.py`.

    Weights: the encoder, plus root-scope `output_weights` [num_labels,
    hidden_size] (truncated normal, stddev 0.02) and `output_bias` [num_labels].

    Args:
        config: `BertConfig`.
        num_labels: int, number of classes (1 for a regression task such as
            STS-B, whose single "logit" is the predicted score).

    Call args:
        inputs: dict of int32 [batch_size, seq_length] `input_ids`,
            `input_mask`, `segment_ids`.
        training: bool; enables dropout (0.1 on the pooled output).
    Returns:
        float32 logits [batch_size, num_labels].

    Source: `create_model` in the original `run_classifier.py`.
    """

    def __init__(self, config, num_labels, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.config = config
        self.num_labels = positive_count(num_labels, "num_labels")
        self.bert = BertModel(config, dtype=self.dtype_policy)
        self.dropout = keras.layers.Dropout(
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

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        """The original's loss for `model.fit`: `y` is `label_ids` [batch_size].

        Mean cross-entropy; for `num_labels == 1`, mean squared error.
        """
        if y is None:
            return None
        if self.num_labels == 1:
            loss = losses.regression_loss(y_pred, y)
        else:
            loss = losses.classifier_loss(y_pred, y)
        return losses.scale_for_replicas(loss)

    def get_config(self):
        config = super().get_config()
        config["num_labels"] = self.num_labels
        return config
