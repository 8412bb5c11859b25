"""Which variables get weight decay: the original's rule, made placement-proof.

As the original, a variable is skipped when an exclude pattern `re.search`-
matches its TF1 name. A variable called `gamma` or `beta` (a normalization
layer's scale and offset) is also matched as `LayerNorm/gamma` or
`LayerNorm/beta`, wherever its layer sits (a root-level Keras LayerNorm's TF1
name is just `gamma`). On the original's own names this picks the same
variables.
"""
import re

import keras

from bert_tf1.modeling import keras_internals
from bert_tf1.modeling.naming import tf1_name

# The original `create_optimizer`'s exclusion list, matched with `re.search`.
DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias")

# Keras' (and TF1 layer_norm's) names for a normalization's scale and offset.
NORMALIZATION_WEIGHT_NAMES = ("gamma", "beta")


def matches_exclusion(variable, patterns):
    """True if a pattern `re.search`-matches, ignoring case (so Keras
    spellings such as `layernorm` match too), the variable's TF1 name (the
    path itself for a one-component path, the name without ":0" for a plain
    `tf.Variable`) or, for a variable called `gamma` or `beta`,
    `LayerNorm/<that name>` (see module doc).

    Args:
      variable: a `keras.Variable`, a plain `tf.Variable`, or a path string.
      patterns: iterable of regex strings.
    Returns:
      bool.
    """
    if isinstance(variable, str):
        path = variable
    else:
        path = getattr(variable, "path", None)
        if path is None:  # a plain tf.Variable
            path = variable.name.split(":")[0]
    name = tf1_name(path) if "/" in path else path
    names = [name]
    own_name = name.rsplit("/", 1)[-1]
    if own_name in NORMALIZATION_WEIGHT_NAMES:
        names.append(f"LayerNorm/{own_name}")
    return any(re.search(pattern, name, flags=re.IGNORECASE)
               for pattern in patterns for name in names)


def normalization_variables(model):
    """Every variable of every normalization layer inside `model`.

    For `exclude_from_weight_decay(var_list=...)`, whatever the layers are
    called.

    Args:
      model: a built `keras.Model` or `keras.layers.Layer`.
    Returns:
      list of `keras.Variable`.
    """
    norm_types = (keras.layers.LayerNormalization,
                  keras.layers.BatchNormalization,
                  keras.layers.GroupNormalization,
                  keras.layers.UnitNormalization,
                  keras.layers.RMSNormalization)
    found = []
    # Keras has no public recursive walk; this one includes `model` itself.
    for layer in keras_internals.all_layers(model):
        if isinstance(layer, norm_types):
            found.extend(layer.weights)
    return found
