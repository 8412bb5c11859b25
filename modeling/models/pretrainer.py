"""The masked LM + next sentence model of the original `run_pretraining.py`."""
import keras

from modeling.layers.heads import MaskedLMHead, NextSentenceHead
from modeling.layers.serialization import BertConfigSerializable, register
from modeling.models import losses
from modeling.models.bert_model import BertModel
from modeling.models.task import TaskModel, resolve_encoder
from modeling.layers.input_checks import encoder_inputs


@register
class BertPretrainer(TaskModel, BertConfigSerializable, keras.Model):
    """Masked LM + next sentence model of the original `run_pretraining.py`.

    Weights: the encoder, plus `cls/predictions/*` (decoder tied to
    `bert/embeddings/word_embeddings`) and `cls/seq_relationship/*`.

    Args:
        config: `BertConfig`.
        encoder: optional existing `BertModel` to build on (its config is
            used and its weights are shared) instead of a new one.
        preprocessor: optional Keras layer from raw text to the inputs
            (e.g. `data.tokenization.BertPreprocessor`), applied by `fit`,
            `evaluate` and `predict` in the input pipeline
            (modeling/models/task.py); saved with the model.

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

    def __init__(self, config=None, encoder=None, preprocessor=None,
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        config, encoder = resolve_encoder(config, encoder,
                                          type(self).__name__)
        self.config = config
        self.bert = (encoder if encoder is not None
                     else BertModel(config, dtype=self.dtype_policy))
        self._set_preprocessor(preprocessor)
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
        outputs = self.bert(encoder_inputs(inputs, self), training=training)
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
        A loss given to `compile` is used instead when set
        (`losses.uses_compiled_loss`). `sample_weight` [batch_size] weights
        each example: its predictions in the masked-LM sum (normalised by
        the number of real predictions, as the original) and its
        next-sentence loss (divided by batch_size, Keras' reduction).
        """
        if losses.uses_compiled_loss(self):
            return super().compute_loss(x, y, y_pred, sample_weight,
                                        training=training)
        if y is None:
            return None
        if sample_weight is None:
            next_sentence = losses.next_sentence_loss(
                y_pred["next_sentence_log_probs"], y["next_sentence_labels"])
        else:
            next_sentence = losses.weighted_batch_mean(
                losses.per_example_log_prob_loss(
                    y_pred["next_sentence_log_probs"],
                    keras.ops.reshape(y["next_sentence_labels"], (-1,))),
                sample_weight)
        loss = (losses.weighted_masked_lm_loss(
            y_pred["masked_lm_log_probs"], y["masked_lm_ids"],
            y["masked_lm_weights"], sample_weight) + next_sentence)
        return losses.scale_for_replicas(loss)

    def get_config(self):
        config = super().get_config()
        config.update(self._preprocessor_config())
        return config
