"""The SQuAD span predictor of the original `run_squad.py`."""
import keras

from bert_tf1.modeling.layers.heads import SquadHead
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.task import TaskModel
from bert_tf1.modeling.layers.input_checks import encoder_inputs


@register
class BertSquad(TaskModel, BertConfigSerializable, keras.Model):
    """Span predictor of the original `run_squad.py`.

    Weights: the encoder, plus `cls/squad/output_weights` [2, hidden_size] and
    `cls/squad/output_bias` [2]. The encoder's pooler (unused by the span
    head) is not trainable, so training warns of no missing gradient and
    writes no optimizer slots for it, as the original.

    Args:
        config, encoder, preprocessor: see `TaskModel`.

    Call args:
        inputs: dict of int32 [batch_size, seq_length] `input_ids`,
            `input_mask`, `segment_ids` (other keys, e.g. `unique_ids`, are
            ignored).
        training: bool; enables the encoder's dropout.
    Returns:
        dict with `start_logits` and `end_logits`, float32
        [batch_size, seq_length] (padding is not masked, as the original).
    """

    _CLS_HEADS = ("squad",)

    def __init__(self, config=None, encoder=None, preprocessor=None,
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self._init_encoder(config, encoder, preprocessor)
        config = self.config
        # The span head reads the sequence output only: as in the original
        # (no pooler adam_m/adam_v in its SQuAD checkpoints), the pooler is
        # not trained; its weights stay in the model and its checkpoints.
        self.bert.pooler.trainable = False
        self.squad = SquadHead(config, name="squad", dtype=self.dtype_policy)
        self.build()

    def call(self, inputs, training=None):
        sequence_output = self.bert(
            encoder_inputs(inputs, self), training=training)["sequence_output"]
        start_logits, end_logits = self.squad(sequence_output)
        return {"start_logits": start_logits, "end_logits": end_logits}

    def task_loss(self, x, y, y_pred, sample_weight):
        """The original's loss; `y` holds `start_positions`, `end_positions`
        [batch_size] (`losses.squad_loss`)."""
        return losses.squad_loss(y_pred["start_logits"], y_pred["end_logits"],
                                 y["start_positions"], y["end_positions"],
                                 sample_weight)
