"""Folding the choice axis into the batch axis and back (`BertMultipleChoice`).

The encoder takes [batch, seq] inputs, so a multiple-choice batch
[batch, num_choices, seq] is run as [batch * num_choices, seq] (row
i * num_choices + k is choice k of example i), and the per-row scores
[batch * num_choices] (or [batch * num_choices, 1]) are folded back to
[batch, num_choices] before the softmax over the choices.

Source: the recipe of the BERT author for SWAG (BERT paper §4.4); the
original repository has no code for it.
"""
from keras import ops


def _dims(x):
    """Static sizes where known, dynamic scalars elsewhere."""
    static = tuple(x.shape)
    dynamic = ops.shape(x)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def flatten_choices(x):
    """[batch, num_choices, *rest] -> [batch * num_choices, *rest].

    Args:
      x: a tensor (or array) of rank >= 2, any dtype; e.g. int32 input_ids
        [batch, num_choices, max_seq_length].

    Returns:
      A tensor of x's dtype, choice k of example i at row i * num_choices + k.

    Raises:
      ValueError: rank < 2.
    """
    x = ops.convert_to_tensor(x)
    if len(x.shape) < 2:
        raise ValueError("flatten_choices expects [batch, num_choices, ...], "
                         "got shape %s" % (tuple(x.shape),))
    dims = _dims(x)
    return ops.reshape(x, [-1] + dims[2:])


def unflatten_choices(x, num_choices):
    """[batch * num_choices, *rest] -> [batch, num_choices, *rest].

    The inverse of `flatten_choices`; e.g. per-row scores float32
    [batch * num_choices] -> [batch, num_choices] (a trailing axis of 1 is
    kept: [batch * num_choices, 1] -> [batch, num_choices, 1]).

    Args:
      x: a tensor (or array) of rank >= 1 whose first size is a multiple of
        num_choices.
      num_choices: int >= 1.

    Returns:
      A tensor of x's dtype.

    Raises:
      ValueError: rank 0, num_choices < 1, or a known first size that is
        not a multiple of num_choices (an unknown one fails in the reshape).
    """
    num_choices = int(num_choices)
    if num_choices < 1:
        raise ValueError("num_choices must be >= 1, got %d" % num_choices)
    x = ops.convert_to_tensor(x)
    if len(x.shape) < 1:
        raise ValueError("unflatten_choices expects [batch * num_choices, "
                         "...], got a scalar")
    rows = x.shape[0]
    if rows is not None and rows % num_choices:
        raise ValueError("unflatten_choices: %d rows is not a multiple of "
                         "num_choices=%d" % (rows, num_choices))
    dims = _dims(x)
    return ops.reshape(x, [-1, num_choices] + dims[1:])
