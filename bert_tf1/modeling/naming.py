"""The one rule that turns a Keras weight path into its TF1 variable name.

Our models name their layers after the original's variable scopes and build
every weight when constructed, so a weight's path is `<model name>/<TF1
name>` (`bert_squad/cls/squad/output_weights` -> `cls/squad/output_weights`),
and an encoder's, wherever it sits, `<encoder name>/bert/...`. A layer of a
model built around a `BertModel` (a functional head, docs/custom_models.md)
keeps its whole path under the model (`my_hidden/kernel`), so its name must
be its own: an auto-generated one (`dense_2`) is refused.
"""
import re

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling import keras_internals

#: The scope of every encoder weight's TF1 name.
ENCODER_SCOPE = "bert/"


class AutoNamedLayerError(UserError):
    """A layer whose weights would be saved has a name Keras made up."""


def tf1_name(variable, model=None):
    """TF1 variable name of a Keras weight.

    Args:
        variable: a Keras variable, or its path as a string.
        model: the model holding it, or None. Given, a weight whose path
            starts neither with the model's name nor with an encoder's
            `<name>/bert/` keeps its whole path (a layer added around the
            encoder); without it, the path minus its first component.
    Returns:
        str, e.g. "bert/embeddings/word_embeddings", "output_weights",
        "my_hidden/kernel".
    Raises:
        ValueError: the path has a single component (a weight created outside
            any model).
    """
    path = variable if isinstance(variable, str) else variable.path
    head, sep, rest = path.partition("/")
    if not sep or not rest:
        raise ValueError(
            f"Weight path {path!r} has no model prefix; cannot derive its TF1 "
            "name.")
    if (model is None or head == model.name
            or rest.startswith(ENCODER_SCOPE)):
        return rest
    return path


def _auto_name(layer):
    """The match when `layer.name` is what Keras names an unnamed layer of
    its class (the class in snake case, `_<n>` from the second on), else
    None."""
    snake = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", type(layer).__name__)
    snake = re.sub(r"([a-z])([A-Z])", r"\1_\2", snake).lower()
    return re.fullmatch(re.escape(snake) + r"(_\d+)?", layer.name)


def check_layer_names(model):
    """Refuses a layer of `model` outside its encoders whose Keras-made
    name (`dense_2`, it depends on what the process built before) would be
    part of a TF1 name: a checkpoint saved under it would not load back.
    A name without a number counts only for a layer around the encoder
    (the stock heads name a layer `dense` after the original's scope).

    Raises:
        AutoNamedLayerError: one line naming the layer and its class.
    """
    for layer in keras_internals.all_layers(model)[1:]:
        match = _auto_name(layer)
        if match is None:
            continue
        component = "/" + layer.name + "/"
        for variable in layer.weights:
            name = tf1_name(variable, model)
            if (not name.startswith(ENCODER_SCOPE)
                    and component in "/" + name
                    and (match.group(1) or name == variable.path)):
                raise AutoNamedLayerError(
                    f"Layer {layer.name!r} ({type(layer).__name__}) of model "
                    f"{model.name!r} has a name Keras made up, which changes "
                    f"with what was built before; give it name= (its weight "
                    f"{name!r} is saved under that name).")


def encoder_weight_shapes(config):
    """{TF1 name: shape} of every `BertModel` weight for `config`, in the
    model's order, without building a model (a converter's template).

    Args:
        config: BertConfig.
    Returns:
        dict of str -> tuple of int, e.g.
        "bert/encoder/layer_0/intermediate/dense/kernel" -> (H, I).
    """
    hidden, inner = config.hidden_size, config.intermediate_size
    shapes = {
        "bert/embeddings/word_embeddings": (config.vocab_size, hidden),
        "bert/embeddings/token_type_embeddings": (config.type_vocab_size,
                                                  hidden),
        "bert/embeddings/position_embeddings": (
            config.max_position_embeddings, hidden),
        "bert/embeddings/LayerNorm/gamma": (hidden,),
        "bert/embeddings/LayerNorm/beta": (hidden,),
    }
    dense = {"attention/self/query": (hidden, hidden),
             "attention/self/key": (hidden, hidden),
             "attention/self/value": (hidden, hidden),
             "attention/output/dense": (hidden, hidden),
             "attention/output/LayerNorm": None,
             "intermediate/dense": (hidden, inner),
             "output/dense": (inner, hidden),
             "output/LayerNorm": None}
    for layer in range(config.num_hidden_layers):
        for scope, kernel in dense.items():
            prefix = f"bert/encoder/layer_{layer}/{scope}"
            if kernel is None:
                shapes[prefix + "/gamma"] = shapes[prefix + "/beta"] = (hidden,)
            else:
                shapes[prefix + "/kernel"] = kernel
                shapes[prefix + "/bias"] = (kernel[1],)
    shapes["bert/pooler/dense/kernel"] = (hidden, hidden)
    shapes["bert/pooler/dense/bias"] = (hidden,)
    return shapes
