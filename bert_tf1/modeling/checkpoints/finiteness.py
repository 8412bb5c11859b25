"""NaN and Inf in checkpoints: found by name before they reach a model
(loading refuses them unless asked).
"""
import numpy as np
from absl import logging

from bert_tf1.data.io.errors import UserError, cut_list
from bert_tf1.modeling.checkpoints.files import iter_tensors


class CheckpointNonFiniteError(UserError):
    """A checkpoint tensor holds NaN or Inf."""


def non_finite_tensors(values):
    """[(name, bad count, size)] of the float tensors with NaN or Inf.

    Args:
        values: dict name -> numpy array (any dtype; non-floats are skipped).
    """
    found = []
    for name in sorted(values):
        value = np.asarray(values[name])
        # "V": bfloat16 and other ml_dtypes floats, which np.isfinite takes.
        if value.dtype.kind not in "fcV":
            continue
        try:
            finite = np.isfinite(value)
        except TypeError:  # A structured or opaque dtype: not numbers.
            continue
        bad = int(value.size - np.count_nonzero(finite))
        if bad:
            found.append((name, bad, int(value.size)))
    return found


def describe_non_finite(found):
    """"name (k of n values), ..." cut to a few names and a count."""
    return cut_list(f"{name} ({bad} of {size} values)" for name, bad, size in found)


def check_finite(values, prefix, allow_non_finite=False):
    """Raises (or warns, when allowed) if any tensor of `values` is not finite.

    Args:
        values: dict name -> numpy array, read from checkpoint `prefix`.
        prefix: the checkpoint, for the message.
        allow_non_finite: only log a warning.

    Raises:
        CheckpointNonFiniteError: names the checkpoint and each tensor (a
            few, then a count) with its number of NaN/Inf values.
    """
    found = non_finite_tensors(values)
    if not found:
        return
    what = f"{prefix}: {len(found)} tensor(s) hold NaN or Inf: {describe_non_finite(found)}"
    if allow_non_finite:
        logging.warning("%s; loading them anyway (allow_non_finite).", what)
        return
    raise CheckpointNonFiniteError(
        f"{what}. It comes from a diverged run or is damaged; use an earlier "
        "checkpoint, or pass --allow_non_finite_checkpoint=true "
        "(allow_non_finite=True) to load it anyway.")


def check_finite_checkpoint(prefix, names, allow_non_finite=False):
    """Reads `names` from checkpoint `prefix` one by one (flat memory) and
    checks them, before any work.

    Raises:
        CheckpointNonFiniteError: see `check_finite`.
        CheckpointCorruptError: the data file is unreadable.
    """
    found = {name: value for name, value in iter_tensors(prefix, names)
             if non_finite_tensors({name: value})}
    check_finite(found, prefix, allow_non_finite)
