"""Writing the scripts' result files atomically, in the original's formats.

Imports no TensorFlow for local paths, so `python -m data.squad.evaluate`
stays light; the atomic write itself is `data.io.atomic`.
"""
import numpy as np

from data.io.atomic import write_text_atomically

__all__ = ["format_value", "write_key_value_file", "write_text_atomically"]


def format_value(value):
    """A metric as the original prints it: float32 `str`, ints as ints."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(np.float32(value))


def write_key_value_file(path, results):
    """`key = value` lines with sorted keys, as the original's `eval_results.txt`.

    Source: the writer loop at the end of `main` in the original
    `run_classifier.py` and `run_pretraining.py`.
    """
    lines = [f"{key} = {format_value(results[key])}\n" for key in sorted(results)]
    write_text_atomically(path, "".join(lines))
