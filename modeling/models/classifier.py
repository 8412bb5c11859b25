"""The sentence (pair) classifier of the original `run_classifier.py`."""
import keras

from modeling.layers.heads import transposed_dense
from modeling.layers.initializers import create_initializer
from modeling.layers.serialization import BertConfigSerializable, register
from modeling.models import losses
from modeling.models.bert_model import BertModel
from modeling.models.pretrained import head_size
from modeling.models.task import TaskModel, resolve_encoder
from modeling.layers.input_checks import encoder_inputs, positive_count

# run_classifier.py hard-codes these rather than reading the config.
CLASSIFIER_DROPOUT = 0.1
CLASSIFIER_INITIALIZER_RANGE = 0.02


@register
class BertClassifier(TaskModel, BertConfigSerializable, keras.Model):
    """Sentence (pair) classifier of the original `run_classifier.py`.

    Weights: the encoder, plus root-scope `output_weights` [num_labels,
    hidden_size] (truncated normal, stddev 0.02) and `output_bias` [num_labels].

    Args:
        config: `BertConfig`.
        num_labels: int, number of classes (1 for a regression task such as
            STS-B, whose single "logit" is the predicted score); from
            `from_checkpoint`, defaults to the checkpoint head's.
        encoder: optional existing `BertModel` to build on (its config is
            used and its weights are shared) instead of a new one.
        preprocessor: optional Keras layer from raw text to the inputs
            (e.g. `data.tokenization.BertPreprocessor`), applied by `fit`,
            `evaluate` and `predict` in the input pipeline
            (modeling/models/task.py); saved with the model.

    Call args:
        inputs: dict of int32 [batch_size, seq_length] `input_ids`,
            `input_mask`, `segment_ids`.
        training: bool; enables dropout (0.1 on the pooled output).
    Returns:
        float32 logits [batch_size, num_labels].

    Source: `create_model` in the original `run_classifier.py`.
    """

    def __init__(self, config=None, num_labels=None, encoder=None,
                 preprocessor=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.config, encoder = resolve_encoder(config, encoder,
                                               type(self).__name__)
        if num_labels is None:
            raise TypeError("BertClassifier needs num_labels.")
        self.num_labels = positive_count(num_labels, "num_labels")
        self.bert = (encoder if encoder is not None
                     else BertModel(self.config, dtype=self.dtype_policy))
        self._set_preprocessor(preprocessor)
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
        A loss given to `compile` is used instead when set
        (`losses.uses_compiled_loss`); else `sample_weight` [batch_size]
        weights each example (Keras' `class_weight` arrives as one) under
        Keras' default reduction: sum(weight * loss) / batch_size.
        """
        if losses.uses_compiled_loss(self):
            return super().compute_loss(x, y, y_pred, sample_weight,
                                        training=training)
        if y is None:
            return None
        if self.num_labels == 1:
            per_example = losses.per_example_regression_loss(y_pred, y)
        else:
            per_example = losses.per_example_classifier_loss(y_pred, y)
        return losses.scale_for_replicas(
            losses.weighted_batch_mean(per_example, sample_weight))

    def get_config(self):
        config = super().get_config()
        config["num_labels"] = self.num_labels
        config.update(self._preprocessor_config())
        return config

    @classmethod
    def _checkpoint_defaults(cls, source, kwargs):
        if kwargs.get("num_labels") is None:
            kwargs["num_labels"] = head_size(source, "output_bias")
            if kwargs["num_labels"] is None:
                raise TypeError(f"{source.path} has no classifier head "
                                "(output_bias): pass num_labels=.")
        return kwargs
