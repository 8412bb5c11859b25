"""A script's model from its `create_model(bert_config, ...)`: the stock
class (its default) or any Keras model around a `BertModel`
(docs/custom_models.md), given what the script needs of it.
"""
import types

import keras

from bert_tf1.modeling import BertModel, keras_internals
from bert_tf1.modeling.models import losses
from bert_tf1.tasks.errors import UserError


class CreateModelError(UserError, TypeError):
    """create_model() returned a model the script cannot use: the user's
    code, so one line without a traceback (a TypeError too, as before)."""


def encoder_of(model):
    """The one `BertModel` inside `model` (or `model` itself).

    Raises:
        CreateModelError: there is none, or more than one.
    """
    encoders = [layer for layer in keras_internals.all_layers(model)
                if isinstance(layer, BertModel)]
    if len(encoders) != 1:
        raise CreateModelError(
            f"create_model() must return a Keras model holding one BertModel; "
            f"{model.name!r} holds {len(encoders)}.")
    return encoders[0]


def build_script_model(create_model, args, stock_class, **loss_attributes):
    """`create_model(*args)`, checked, with the script's loss.

    Args:
        create_model: the script's `create_model` (or the stock class).
        args: its arguments, e.g. (bert_config, num_labels).
        stock_class: the script's stock model class; a model that does not
            override `compute_loss` trains on `stock_class.task_loss` (the
            original's loss), computed with `loss_attributes` (e.g.
            num_labels) in the place of the stock model's attributes.
    Returns:
        The model.
    Raises:
        CreateModelError: not a Keras model holding one `BertModel`; a
            functional model whose output's last dimension is not
            `loss_attributes["num_labels"]` (when given).
    """
    model = create_model(*args)
    if not isinstance(model, keras.Model):
        raise CreateModelError(f"create_model() must return a keras.Model, "
                               f"got {type(model).__name__}.")
    encoder_of(model)
    _check_output_width(model, loss_attributes.get("num_labels"))
    if type(model).compute_loss is keras.Model.compute_loss:
        stock = types.SimpleNamespace(**loss_attributes)

        def compute_loss(x=None, y=None, y_pred=None, sample_weight=None,
                         training=True):
            if y is None:
                return None
            return losses.scale_for_replicas(
                stock_class.task_loss(stock, x, y, y_pred, sample_weight))

        model.compute_loss = compute_loss
    return model


def _check_output_width(model, num_labels):
    """A functional model's logits must end in num_labels (a subclassed
    model's output shape is not known before a call: not checked)."""
    outputs = getattr(model, "outputs", None)
    if num_labels is None or not outputs or len(outputs) != 1:
        return
    width = outputs[0].shape[-1]
    if width is not None and width != num_labels:
        raise CreateModelError(
            f"create_model() returned {model.name!r} with outputs of shape "
            f"{tuple(outputs[0].shape)}; expected logits whose last "
            f"dimension is num_labels={num_labels}.")


def enable_lora(model, rank, alpha, targets):
    """LoRA on the encoder of `model` (`LoraMixin.enable_lora`); the layers
    around it stay trainable."""
    holder = model if hasattr(model, "enable_lora") else encoder_of(model)
    holder.enable_lora(rank, alpha, targets)
