"""Task models: the encoder plus the original scripts' heads.

Each builds every weight when constructed. Weight paths are
`<task model name>/<TF1 name>` for the head and `<encoder name>/bert/...` for
the encoder, so the TF1 name is always the path without its first component.
"""
import keras

from modeling.bert_model import BertModel
from modeling.heads import (MaskedLMHead, NextSentenceHead, SquadHead,
                            transposed_dense)
from modeling import losses
from modeling.initializers import create_initializer
from modeling.input_checks import require_input_dict
from modeling.serialization import BertConfigSerializable, register

# run_classifier.py hard-codes these rather than reading the config.
CLASSIFIER_DROPOUT = 0.1
CLASSIFIER_INITIALIZER_RANGE = 0.02


def _encoder_inputs(inputs, model):
    require_input_dict(inputs, type(model).__name__)
    return {key: inputs[key] for key in ("input_ids", "input_mask", "segment_ids")
            if key in inputs}


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
        self.num_labels = int(num_labels)
        if self.num_labels <= 0:
            raise ValueError(f"num_labels must be positive, got {num_labels}.")
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
            _encoder_inputs(inputs, self), training=training)["pooled_output"]
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


@register
class BertSquad(BertConfigSerializable, keras.Model):
    """Span predictor of the original `run_squad.py`.

    Weights: the encoder, plus `cls/squad/output_weights` [2, hidden_size] and
    `cls/squad/output_bias` [2].

    Call args:
        inputs: dict of int32 [batch_size, seq_length] `input_ids`,
            `input_mask`, `segment_ids` (other keys, e.g. `unique_ids`, are
            ignored).
        training: bool; enables the encoder's dropout.
    Returns:
        dict with `start_logits` and `end_logits`, float32
        [batch_size, seq_length] (padding is not masked, as the original).
    """

    def __init__(self, config, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.config = config
        self.bert = BertModel(config, dtype=self.dtype_policy)
        self.squad = SquadHead(config, name="squad", dtype=self.dtype_policy)
        self.build()

    def build(self, input_shape=None):
        with keras.name_scope("cls"):
            self.squad.build()

    def call(self, inputs, training=None):
        sequence_output = self.bert(
            _encoder_inputs(inputs, self), training=training)["sequence_output"]
        start_logits, end_logits = self.squad(sequence_output)
        return {"start_logits": start_logits, "end_logits": end_logits}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        """The original's loss; `y` holds `start_positions`, `end_positions`."""
        if y is None:
            return None
        return losses.scale_for_replicas(losses.squad_loss(
            y_pred["start_logits"], y_pred["end_logits"],
            y["start_positions"], y["end_positions"]))


@register
class BertPretrainer(BertConfigSerializable, keras.Model):
    """Masked LM + next sentence model of the original `run_pretraining.py`.

    Weights: the encoder, plus `cls/predictions/*` (decoder tied to
    `bert/embeddings/word_embeddings`) and `cls/seq_relationship/*`.

    Call args:
        inputs: dict of int32 `input_ids`, `input_mask`, `segment_ids`
            [batch_size, seq_length] and `masked_lm_positions`
            [batch_size, max_predictions_per_seq].
        training: bool; enables the encoder's dropout.
    Returns:
        dict with `masked_lm_log_probs` float32
        [batch_size, max_predictions_per_seq, vocab_size] and
        `next_sentence_log_probs` float32 [batch_size, 2].
    """

    def __init__(self, config, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.config = config
        self.bert = BertModel(config, dtype=self.dtype_policy)
        self.masked_lm = MaskedLMHead(
            config, name="predictions", dtype=self.dtype_policy)
        self.next_sentence = NextSentenceHead(
            config, name="seq_relationship", dtype=self.dtype_policy)
        self.build()

    def build(self, input_shape=None):
        with keras.name_scope("cls"):
            self.masked_lm.build()
            self.next_sentence.build()

    def call(self, inputs, training=None):
        outputs = self.bert(_encoder_inputs(inputs, self), training=training)
        return {
            "masked_lm_log_probs": self.masked_lm(
                outputs["sequence_output"], inputs["masked_lm_positions"],
                self.bert.embedding_table),
            "next_sentence_log_probs": self.next_sentence(outputs["pooled_output"]),
        }

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        """The original's total loss: masked LM plus next sentence.

        `y` holds `masked_lm_ids`, `masked_lm_weights` [batch_size,
        max_predictions_per_seq] and `next_sentence_labels` [batch_size].
        """
        if y is None:
            return None
        loss = (losses.masked_lm_loss(y_pred["masked_lm_log_probs"],
                                      y["masked_lm_ids"], y["masked_lm_weights"])
                + losses.next_sentence_loss(y_pred["next_sentence_log_probs"],
                                            y["next_sentence_labels"]))
        return losses.scale_for_replicas(loss)
