"""Writing the scripts' result files atomically, in the original's formats."""
import os
import uuid

import numpy as np
import tensorflow as tf


def write_text_atomically(path, text):
    """Writes `text` to `path` via a temporary file in the same folder.

    A crash leaves either the old file or the new one, never half a file.
    Works for local and gs:// paths (tf.io.gfile).
    """
    path = os.fspath(path)
    tmp = f"{path}.tmp-{uuid.uuid4().hex}"
    try:
        with tf.io.gfile.GFile(tmp, "w") as writer:
            writer.write(text)
        tf.io.gfile.rename(tmp, path, overwrite=True)
    finally:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.remove(tmp)


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
