"""Activation functions by the names `bert_config.json` uses.

Source: `gelu` and `get_activation` in the original `modeling.py`. The original at
HEAD computes gelu in its tanh form (commit bee6030, 2019-02-07); the 2018-10-31
release used the exact erf form, available here as "gelu_exact".
"""
import keras


def gelu(x):
    """Tanh-approximated GELU: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`."""
    return keras.activations.gelu(x, approximate=True)


def gelu_exact(x):
    """Exact GELU, `x * Phi(x)` with the normal CDF (the 2018 release)."""
    return keras.activations.gelu(x, approximate=False)


def _linear(x):
    return x


_ACTIVATIONS = {
    "gelu": gelu,
    "gelu_exact": gelu_exact,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "linear": _linear,
    "": _linear,
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
        return _linear
    key = name.lower()
    if key not in _ACTIVATIONS:
        raise ValueError(
            f"Unsupported activation {name!r}; expected one of "
            f"{sorted(n for n in _ACTIVATIONS if n)}.")
    return _ACTIVATIONS[key]
