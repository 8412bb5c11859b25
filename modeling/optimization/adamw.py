"""The original `AdamWeightDecayOptimizer` for Keras 3."""
import tensorflow as tf

from bert_tf1.modeling.layers.serialization import register
from bert_tf1.modeling.optimization.tf1_optimizer import TF1StyleOptimizer, adam_moments


@register
class AdamWeightDecay(TF1StyleOptimizer):
    """The original `AdamWeightDecayOptimizer`, as a Keras 3 optimizer.

    Per variable p with gradient g (after global-norm clipping):
      m = beta_1 * m + (1 - beta_1) * g
      v = beta_2 * v + (1 - beta_2) * g^2
      u = m / (sqrt(v) + epsilon)            # no bias correction
      u += weight_decay_rate * p             # if p is decayed
      p -= lr * u
    Slots `adam_m`, `adam_v` have p's shape and dtype (float32); `iterations`
    (int64) is the original's `global_step`, +1 per update.

    Args:
      learning_rate: float, or a `LearningRateSchedule` (e.g.
        `WarmupLinearDecay`) evaluated at `iterations + schedule_step_offset`.
      weight_decay_rate: float >= 0 (original default 0.0;
        `create_optimizer` uses 0.01).
      beta_1, beta_2, epsilon: floats (0.9, 0.999, 1e-6).
      exclude_from_weight_decay: regex patterns matched against TF1 names,
        see `uses_weight_decay`; None for none.
      global_clipnorm: float or None; clips all gradients together like the
        original's `tf.clip_by_global_norm`, after the cross-replica sum.
      schedule_step_offset: int (1): the update that takes `iterations`
        from s to s + 1 uses the schedule's rate at s + offset (1: as the
        original, so the first update has `init_lr / num_warmup_steps`).
      name: optional name. Other Keras optimizer arguments (`clipnorm`,
        `clipvalue`, `gradient_accumulation_steps`, ...) are passed on.

    Raises:
      ValueError: `weight_decay_rate < 0`, or Keras' `weight_decay` given.
      RuntimeError: the Keras backend is not TensorFlow.

    Source: `AdamWeightDecayOptimizer` in the original `optimization.py`.
    """

    def update_step(self, gradient, variable, learning_rate):
        """Applies one original AdamWeightDecay update to `variable`."""
        m, v, decays, _ = self._slots_and_flags(variable)
        dtype = variable.dtype

        def constant(value):
            return tf.cast(value, dtype)
        next_variable, next_m, next_v = _adamw_arithmetic(
            tf.convert_to_tensor(variable),
            self._dense_gradient(gradient, variable),
            tf.convert_to_tensor(m), tf.convert_to_tensor(v),
            constant(learning_rate), *self.moment_constants(dtype),
            constant(self.epsilon),
            constant(self.weight_decay_rate), decays)
        self.assign(variable, next_variable)
        self.assign(m, next_m)
        self.assign(v, next_v)


# XLA fuses these element-wise ops into one pass over memory (measured need);
# the results agree to float32 rounding.
@tf.function(jit_compile=True)
def _adamw_arithmetic(variable, gradient, m, v, learning_rate, beta_1,
                      one_minus_beta_1, beta_2, one_minus_beta_2, epsilon,
                      weight_decay_rate, decays):
    """The original's update ops; returns (next variable, next_m, next_v)."""
    next_m, next_v = adam_moments(gradient, m, v, beta_1, one_minus_beta_1,
                                  beta_2, one_minus_beta_2)
    update = next_m / (tf.sqrt(next_v) + epsilon)
    if decays:  # a Python bool: one compiled function for each value
        update += weight_decay_rate * variable
    return variable - learning_rate * update, next_m, next_v
