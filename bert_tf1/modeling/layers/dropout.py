"""Dropout with a cheaper gradient (our own: a measured need,
docs/fine_tuning_speed.md): one select of the kept positions instead of
`tf.where`'s. The draws stay TensorFlow's stateless Philox, one float32 per
element, so a position is kept with probability exactly `1 - rate` in every
dtype.
"""
import keras
import tensorflow as tf


def _keep_mask(inputs, rate, seed):
    # The seed as Keras's own TensorFlow dropout folds it (int64 -> int32).
    seed = tf.cast(tf.math.floormod(seed, tf.int32.max - 1), tf.int32)
    return tf.random.stateless_uniform(tf.shape(inputs), seed) >= rate


def _select(inputs, keep, scale):
    zero = tf.zeros([], inputs.dtype)

    @tf.custom_gradient
    def select(x):
        def grad(dy):
            return tf.where(keep, dy * scale if scale != 1.0 else dy, zero)
        return tf.where(keep, x * scale if scale != 1.0 else x, zero), grad
    return select(inputs)


class Dropout(keras.layers.Dropout):
    """`keras.layers.Dropout` (no `noise_shape`) with a one-select gradient.

    Args:
        rate: float in [0, 1), the fraction of units dropped.
        scale: bool; False leaves kept units unscaled, for a caller that
            multiplies a smaller tensor by `1 / (1 - rate)` later (attention
            scales its context instead of the probabilities).

    Call args:
        inputs: float tensor of any shape; training: bool.

    Returns:
        The inputs' shape and dtype; the inputs themselves unless training.
    """

    def __init__(self, rate, scale=True, **kwargs):
        super().__init__(rate, **kwargs)
        self.scale = scale

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        keep = _keep_mask(inputs, self.rate, self.seed_generator.next())
        return _select(inputs, keep, 1.0 / (1.0 - self.rate) if self.scale else 1.0)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}
