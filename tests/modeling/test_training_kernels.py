"""The encoder's training-time GELU gradients and dropout against TensorFlow's."""
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import activations
from bert_tf1.modeling.layers.dropout import Dropout


def _points():
    # Both tails and the steep middle of GELU's derivative.
    return tf.constant(np.linspace(-8.0, 8.0, 4001).astype("float32"))


@pytest.mark.parametrize("name", ["gelu", "gelu_exact"])
def test_training_gelu_equals_autodiff_of_the_inference_gelu(name):
    reference, ours = activations.get_activation(name), activations.get_training_activation(name)
    assert ours is not reference
    x = _points()

    @tf.function
    def outputs_and_gradients():
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y_reference, y_ours = reference(x), ours(x)
        return (y_reference, y_ours, tape.gradient(y_reference, x),
                tape.gradient(y_ours, x))
    y_reference, y_ours, dy_reference, dy_ours = outputs_and_gradients()
    np.testing.assert_array_equal(y_ours.numpy(), y_reference.numpy())
    np.testing.assert_allclose(dy_ours.numpy(), dy_reference.numpy(), rtol=1e-6, atol=1e-6)
    # The derivative goes above 1 and below 0: not a copy of the input.
    assert dy_ours.numpy().max() > 1.05 and dy_ours.numpy().min() < -0.1


def test_training_activation_of_other_names_is_the_plain_one():
    assert activations.get_training_activation("relu") is activations.get_activation("relu")
    with pytest.raises(ValueError):
        activations.get_training_activation("swishy")


@pytest.mark.parametrize("scale", [True, False])
def test_dropout_keeps_the_right_fraction_and_passes_gradients_only_where_kept(scale):
    layer = Dropout(0.25, scale=scale, seed=3)
    x = tf.random.stateless_uniform([64, 1000], [1, 2], minval=1.0, maxval=2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=True)
        loss = tf.reduce_sum(y * 3.0)
    gradient = tape.gradient(loss, x).numpy()
    kept = y.numpy() != 0
    assert abs(kept.mean() - 0.75) < 0.01
    factor = 1 / 0.75 if scale else 1.0
    np.testing.assert_allclose(y.numpy()[kept], x.numpy()[kept] * factor, rtol=1e-6)
    np.testing.assert_allclose(gradient[kept], 3.0 * factor, rtol=1e-6)
    assert np.all(gradient[~kept] == 0)
    # A new mask on every call; none when not training.
    assert not np.array_equal(kept, layer(x, training=True).numpy() != 0)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x.numpy())
    assert Dropout.from_config(layer.get_config()).scale is scale


def test_dropout_mask_in_bfloat16_is_drawn_in_float32():
    layer = Dropout(0.1, seed=5, dtype="bfloat16")
    y = layer(tf.ones([1024, 1024], tf.bfloat16), training=True)
    assert y.dtype == tf.bfloat16
    # A bfloat16 uniform has steps of 1/128, so Keras's own dropout keeps
    # 115/128 = 0.8984; float32 draws keep 0.9 within sampling error
    # (n = 1,048,576: 3 sigma = 0.0009).
    assert abs(float(tf.reduce_mean(tf.cast(y != 0, tf.float32))) - 0.9) < 0.001
