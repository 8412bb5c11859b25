"""Folding the choice axis into the batch axis (`BertMultipleChoice`).

The encoder takes [batch, seq] inputs, so a multiple-choice batch
[batch, num_choices, seq] is run as [batch * num_choices, seq] (row
i * num_choices + k is choice k of example i); the model folds the per-row
scores back to [batch, num_choices] before the softmax over the choices.

Source: the recipe of the BERT author for SWAG (BERT paper §4.4); the
original repository has no code for it.
"""
from keras import ops


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
    # Static sizes where known, dynamic scalars elsewhere.
    rest = [size if size is not None else dynamic for size, dynamic
            in zip(tuple(x.shape)[2:], ops.shape(x)[2:])]
    return ops.reshape(x, [-1] + rest)
