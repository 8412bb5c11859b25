"""The SQuAD span predictor of the original `run_squad.py`."""
import keras

from modeling.layers.heads import SquadHead
from modeling.layers.serialization import BertConfigSerializable, register
from modeling.models import losses
from modeling.models.bert_model import BertModel
from modeling.models.task import TaskModel, resolve_encoder
from modeling.layers.input_checks import encoder_inputs


@register
class BertSquad(TaskModel, BertConfigSerializable, keras.Model):
    """Span predictor of the original `run_squad.py`.

    Weights: the encoder, plus `cls/squad/output_weights` [2, hidden_size] and
    `cls/squad/output_bias` [2]. The encoder's pooler (unused by the span
    head) is not trainable, so training warns of no missing gradient and
    writes no optimizer slots for it, as the original.

    Args:
        config: `BertConfig`.
        encoder: optional existing `BertModel` to build on (its config is
            used and its weights are shared) instead of a new one.
        preprocessor: optional Keras layer from raw text to the inputs
            (e.g. `data.tokenization.BertPreprocessor`), applied by `fit`,
            `evaluate` and `predict` in the input pipeline
            (modeling/models/task.py); saved with the model.

    Call args:
        inputs: dict of int32 [batch_size, seq_length] `input_ids`,
            `input_mask`, `segment_ids` (other keys, e.g. `unique_ids`, are
            ignored).
        training: bool; enables the encoder's dropout.
    Returns:
        dict with `start_logits` and `end_logits`, float32
        [batch_size, seq_length] (padding is not masked, as the original).
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
        # The span head reads the sequence output only: the pooler gets no
        # gradient. As in the original (whose optimizer skipped variables
        # without one: no pooler adam_m/adam_v in its SQuAD checkpoints), it
        # is not trained; its weights stay in the model and its checkpoints.
        self.bert.pooler.trainable = False
        self.squad = SquadHead(config, name="squad", dtype=self.dtype_policy)
        self.build()

    def build(self, input_shape=None):
        with keras.name_scope("cls"):
            self.squad.build()

    def call(self, inputs, training=None):
        sequence_output = self.bert(
            encoder_inputs(inputs, self), training=training)["sequence_output"]
        start_logits, end_logits = self.squad(sequence_output)
        return {"start_logits": start_logits, "end_logits": end_logits}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        """The original's loss; `y` holds `start_positions`, `end_positions`.

        A loss given to `compile` is used instead when set
        (`losses.uses_compiled_loss`); else `sample_weight` [batch_size]
        weights each example (`losses.squad_training_loss`).
        """
        if losses.uses_compiled_loss(self):
            return super().compute_loss(x, y, y_pred, sample_weight,
                                        training=training)
        if y is None:
            return None
        return losses.scale_for_replicas(
            losses.squad_training_loss(y_pred, y, sample_weight))

    def get_config(self):
        config = super().get_config()
        config.update(self._preprocessor_config())
        return config
