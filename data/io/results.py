"""Writing the scripts' result files atomically, in the original's formats.

Imports no TensorFlow for local paths, so `python -m data.squad.evaluate`
stays light; the atomic write itself is `data.io.atomic`.
"""
import numpy as np

from data.io.atomic import write_text_atomically
from data.io.errors import UserError, cut_list

__all__ = ["NonFiniteResultError", "check_finite_rows", "check_finite_values",
           "format_value", "write_key_value_file", "write_text_atomically"]


class NonFiniteResultError(UserError):
    """A result holds NaN or infinity; the file is not written.

    A NaN `eval_loss` beside a plausible `eval_accuracy`, or rows of NaN
    probabilities, look like results but mean the model's outputs are not
    numbers (diverged weights, a checkpoint holding NaN, float16 overflow).
    """


def check_finite_values(path, results):
    """Raises unless every float in `results` (dict key -> value) is finite.

    Raises:
        NonFiniteResultError: names the file and the keys.
    """
    bad = [f"{key} = {results[key]}" for key in sorted(results)
           if isinstance(results[key], (float, np.floating))
           and not np.isfinite(results[key])]
    if bad:
        raise NonFiniteResultError(
            f"{path} not written: {cut_list(bad)} (not finite). The model's "
            "outputs are not numbers: its weights hold NaN/Inf or its "
            "computation overflowed.")


def check_finite_rows(path, rows, what="row"):
    """Raises unless every value of `rows` (array [N, ...]) is finite.

    Args:
        path: the file that would be written (for the message).
        rows: numeric array, one row per example.
        what: what a row is, e.g. "example" or "SQuAD window".

    Raises:
        NonFiniteResultError: names the file, how many rows hold NaN/Inf and
            the first few of them (0-based, in input order).
    """
    rows = np.asarray(rows)
    if rows.size == 0 or np.isfinite(rows).all():
        return
    flat = rows.reshape(len(rows), -1) if rows.ndim > 1 else rows[:, None]
    bad = np.flatnonzero(~np.isfinite(flat).all(axis=1))
    raise NonFiniteResultError(
        f"{path} not written: {len(bad)} of {len(rows)} {what}s have NaN/Inf "
        f"outputs ({what} {cut_list(bad.tolist())}). The model's weights "
        "hold NaN/Inf or its computation overflowed.")


def format_value(value):
    """A metric as the original prints it: float32 `str`, ints as ints."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(np.float32(value))


def write_key_value_file(path, results):
    """`key = value` lines with sorted keys, as the original's `eval_results.txt`.

    Raises:
        NonFiniteResultError: a value is NaN or infinite (nothing written).

    Source: the writer loop at the end of `main` in the original
    `run_classifier.py` and `run_pretraining.py`.
    """
    check_finite_values(path, results)
    lines = [f"{key} = {format_value(results[key])}\n" for key in sorted(results)]
    write_text_atomically(path, "".join(lines))
