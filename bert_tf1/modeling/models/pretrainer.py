"""The masked LM + next sentence model of the original `run_pretraining.py`."""
import keras

from bert_tf1.modeling.layers.heads import MaskedLMHead, NextSentenceHead
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.task import TaskModel
from bert_tf1.modeling.layers.input_checks import encoder_inputs


@register
class BertPretrainer(TaskModel, BertConfigSerializable, keras.Model):
    """Masked LM + next sentence model of the original `run_pretraining.py`.

    Weights: the encoder, plus `cls/predictions/*` (decoder tied to
    `bert/embeddings/word_embeddings`) and `cls/seq_relationship/*`.

    Args:
        config, encoder, preprocessor: see `TaskModel`.

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

    _CLS_HEADS = ("masked_lm", "next_sentence")

    def __init__(self, config=None, encoder=None, preprocessor=None,
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._init_encoder(config, encoder, preprocessor)
        config = self.config
        self.masked_lm = MaskedLMHead(
            config, name="predictions", dtype=self.dtype_policy)
        self.next_sentence = NextSentenceHead(
            config, name="seq_relationship", dtype=self.dtype_policy)
        self.build()

    def call(self, inputs, training=None):
        outputs = self.bert(encoder_inputs(inputs, self), training=training)
        return {
            "masked_lm_log_probs": self.masked_lm(
                outputs["sequence_output"], inputs["masked_lm_positions"],
                self.bert.embedding_table),
            "next_sentence_log_probs": self.next_sentence(outputs["pooled_output"]),
        }

    def task_loss(self, x, y, y_pred, sample_weight):
        """The original's total loss: masked LM plus next sentence.

        `y` holds `masked_lm_ids`, `masked_lm_weights` [batch_size,
        max_predictions_per_seq] and `next_sentence_labels` [batch_size].
        `sample_weight` [batch_size] weights each example: its predictions in
        the masked-LM sum (normalised by the number of real predictions, as
        the original) and its next-sentence loss (divided by batch_size).
        """
        return losses.masked_lm_loss(
            y_pred["masked_lm_log_probs"], y["masked_lm_ids"],
            y["masked_lm_weights"], sample_weight) + losses.next_sentence_loss(
                y_pred["next_sentence_log_probs"], y["next_sentence_labels"],
                sample_weight)
