"""Activation functions by the names `bert_config.json` uses.

Source: `gelu` and `get_activation` in the original `modeling.py`. The original at
HEAD computes gelu in its tanh form (commit bee6030, 2019-02-07); the 2018-10-31
release used the exact erf form, available here as "gelu_exact".
"""
import math

import keras
import tensorflow as tf


def gelu(x):
    """Tanh-approximated GELU: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`."""
    return keras.activations.gelu(x, approximate=True)


def gelu_exact(x):
    """Exact GELU, `x * Phi(x)` with the normal CDF (the 2018 release)."""
    return keras.activations.gelu(x, approximate=False)


# Own gradients, one XLA-fused pass (a measured need:
# docs/fine_tuning_speed.md). The forward ops are tf.nn.gelu's, in its order,
# so outputs are bit-identical to `gelu` and `gelu_exact`.
_SQRT_2_OVER_PI = 0.7978845608028654
_GELU_CUBIC = 0.044715


@tf.function(jit_compile=True, autograph=False)
def _gelu_gradient(x, tanh, dy):
    slope = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_CUBIC * tf.square(x))
    return dy * (0.5 * (1.0 + tanh) + 0.5 * x * (1.0 - tf.square(tanh)) * slope)


@tf.custom_gradient
def _gelu_with_gradient(x):
    inner = _SQRT_2_OVER_PI * (x + tf.cast(_GELU_CUBIC, x.dtype) * tf.pow(x, 3))
    tanh = tf.tanh(inner)
    return 0.5 * x * (1.0 + tanh), lambda dy: _gelu_gradient(x, tanh, dy)


@tf.function(jit_compile=True, autograph=False)
def _gelu_exact_gradient(x, twice_cdf, dy):
    pdf = tf.exp(-0.5 * tf.square(x)) * (1.0 / math.sqrt(2.0 * math.pi))
    return dy * (0.5 * twice_cdf + x * pdf)


@tf.custom_gradient
def _gelu_exact_with_gradient(x):
    twice_cdf = tf.math.erfc(-x * tf.cast(0.7071067811865476, x.dtype))
    return 0.5 * x * twice_cdf, lambda dy: _gelu_exact_gradient(x, twice_cdf, dy)


_TRAINING_ACTIVATIONS = {
    "gelu": _gelu_with_gradient,
    "gelu_exact": _gelu_exact_with_gradient,
}


_ACTIVATIONS = {
    "gelu": gelu,
    "gelu_exact": gelu_exact,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "linear": keras.activations.linear,
    "": keras.activations.linear,
}

ACTIVATION_NAMES = frozenset(_ACTIVATIONS)


def get_activation(name):
    """Maps an activation name (case-insensitive) to a function.

    Args:
        name: str as in `bert_config.json`, None ("linear"), or a callable,
            which is returned unchanged.

    Returns:
        A function of one tensor.

    Raises:
        ValueError: the name is unknown.
    """
    if callable(name):
        return name
    if name is None:
        return keras.activations.linear
    key = name.lower()
    if key not in _ACTIVATIONS:
        raise ValueError(
            f"Unsupported activation {name!r}; expected one of "
            f"{sorted(n for n in _ACTIVATIONS if n)}.")
    return _ACTIVATIONS[key]


def get_training_activation(name):
    """`get_activation(name)`, with our own gradient for the two GELUs.

    Same outputs as `get_activation(name)` (bit for bit); used by the encoder's
    feed-forward layer when `training=True`.

    Raises:
        ValueError: the name is unknown.
    """
    if isinstance(name, str) and name.lower() in _TRAINING_ACTIVATIONS:
        return _TRAINING_ACTIVATIONS[name.lower()]
    return get_activation(name)
