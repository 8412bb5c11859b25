"""LAMB with the original BERT's weight-decay exclusions, for Keras 3."""
import tensorflow as tf

from bert_tf1.modeling.layers.serialization import register
from bert_tf1.modeling.optimization.tf1_optimizer import TF1StyleOptimizer


@register
class LambWeightDecay(TF1StyleOptimizer):
    """LAMB (You et al. 2019) with the original's decay exclusions.

    Per variable p with gradient g (after global-norm clipping), t the
    number of this update (`iterations + 1`):
      m, v as in `AdamWeightDecay`
      u = (m / (1 - beta_1^t)) / (sqrt(v / (1 - beta_2^t)) + epsilon)
      u += weight_decay_rate * p             # if p is decayed
      r = ||p|| / ||u|| if both > 0 else 1   # 1 for excluded variables
      p -= r * lr * u
    Weight decay is inside the trust ratio and LayerNorm weights and biases
    get neither decay nor layer adaptation, as in `tfa.optimizers.LAMB`.
    Slots are named `adam_m`, `adam_v` as the original's.

    Args: as `AdamWeightDecay`.
    Raises: as `AdamWeightDecay`.
    Source: not in the original BERT; the LAMB paper's Algorithm 2 (with
      the Adam update), and `tfa.optimizers.LAMB` for the exclusions.
    """

    def update_step(self, gradient, variable, learning_rate):
        """Applies one LAMB update to `variable`."""
        m, v, decays, excluded = self._slots_and_flags(variable)
        dtype = variable.dtype
        next_m, next_v = self._moments(gradient, variable, m, v)
        t = tf.cast(self.iterations + 1, dtype)
        m_hat = next_m / (1.0 - tf.pow(tf.cast(self.beta_1, dtype), t))
        v_hat = next_v / (1.0 - tf.pow(tf.cast(self.beta_2, dtype), t))
        update = m_hat / (tf.sqrt(v_hat) + tf.cast(self.epsilon, dtype))
        if decays:
            update += tf.cast(self.weight_decay_rate, dtype) * variable
        ratio = tf.constant(1.0, dtype)
        if not excluded:
            w_norm = tf.norm(variable, ord=2)
            u_norm = tf.norm(update, ord=2)
            ratio = tf.where(
                w_norm > 0,
                tf.where(u_norm > 0, w_norm / u_norm, ratio),
                ratio)
        self.assign(variable,
                    variable - ratio * tf.cast(learning_rate, dtype) * update)
        self.assign(m, next_m)
        self.assign(v, next_v)
