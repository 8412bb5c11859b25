"""The original BERT learning rate: linear warmup, then linear decay to 0.

Source: `create_optimizer` in the original `optimization.py`.
"""
import keras
import tensorflow as tf

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling.layers.serialization import register


@register
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup, then linear decay to 0, as the original computes it.

    For an integer `step` (the global step):
      `step < num_warmup_steps`: `init_lr * step / num_warmup_steps`;
      otherwise: `init_lr * (1 - min(step, num_train_steps) / num_train_steps)`.
    The decay is measured from step 0 and stays 0 from `num_train_steps` on.
    Computed in float32 with the original's operations (the decay is Keras'
    `PolynomialDecay`, power 1, end 0, as TF1's `tf.train.polynomial_decay`).

    Args:
      init_lr: float, peak learning rate.
      num_train_steps: int > 0, steps over which the rate decays to 0.
      num_warmup_steps: int >= 0.
      name: optional name scope.

    Call args:
      step: integer scalar (tensor or Python int).
    Returns:
      float32 scalar tensor.

    Raises:
      ValueError: `num_train_steps <= 0`, `num_warmup_steps < 0` or
        `init_lr < 0`.

    Source: `create_optimizer` in the original `optimization.py`.
    """

    def __init__(self, init_lr, num_train_steps, num_warmup_steps, name=None):
        super().__init__()
        if int(num_train_steps) <= 0:
            raise UserError(
                f"num_train_steps must be > 0, got {num_train_steps}.")
        if num_warmup_steps is None or int(num_warmup_steps) < 0:
            raise UserError(
                f"num_warmup_steps must be >= 0, got {num_warmup_steps}.")
        if float(init_lr) < 0:
            raise UserError(f"init_lr must be >= 0, got {init_lr}.")
        self.init_lr = float(init_lr)
        self.num_train_steps = int(num_train_steps)
        self.num_warmup_steps = int(num_warmup_steps)
        self.name = name
        self._decay = keras.optimizers.schedules.PolynomialDecay(
            initial_learning_rate=self.init_lr,
            decay_steps=self.num_train_steps,
            end_learning_rate=0.0,
            power=1.0)

    def __call__(self, step):
        with tf.name_scope(self.name or "WarmupLinearDecay"):
            decayed = tf.cast(self._decay(step), tf.float32)
            if not self.num_warmup_steps:
                return decayed
            # The original's warmup blend, op for op: an int32 step compared
            # with an int32 warmup, mixed in with a 0/1 float flag.
            step_int = tf.cast(step, tf.int32)
            warmup_int = tf.constant(self.num_warmup_steps, tf.int32)
            warmup_done = (tf.cast(step_int, tf.float32)
                           / tf.cast(warmup_int, tf.float32))
            warmup_lr = tf.constant(self.init_lr, tf.float32) * warmup_done
            is_warmup = tf.cast(step_int < warmup_int, tf.float32)
            return (1.0 - is_warmup) * decayed + is_warmup * warmup_lr

    def get_config(self):
        return {"init_lr": self.init_lr,
                "num_train_steps": self.num_train_steps,
                "num_warmup_steps": self.num_warmup_steps,
                "name": self.name}
