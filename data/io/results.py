"""Writing the scripts' result files atomically, in the original's formats.

Imports no TensorFlow for local paths, so `python -m data.squad.evaluate`
stays light; remote paths (gs://, as the original's tf.gfile allowed) go
through tf.io.gfile.
"""
import os
import tempfile

import numpy as np


def write_text_atomically(path, text):
    """Writes `text` (UTF-8) to `path` via a temporary file in the same folder.

    A crash leaves either the old file or the new one, never half a file; on
    failure the temporary file is removed.
    """
    path = os.fspath(path)
    if "://" in path:
        _write_remote_text(path, text)
        return
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp_path = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as writer:
            writer.write(text)
        # mkstemp makes the file private (0600); give it the usual mode.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp_path, 0o666 & ~umask)
        os.replace(tmp_path, path)
    except BaseException:
        if os.path.exists(tmp_path):
            os.remove(tmp_path)
        raise


def _write_remote_text(path, text):
    import tensorflow as tf  # Only remote paths need TensorFlow here.

    tmp_path = "%s.tmp-%d" % (path, os.getpid())
    try:
        with tf.io.gfile.GFile(tmp_path, "w") as writer:
            writer.write(text)
        tf.io.gfile.rename(tmp_path, path, overwrite=True)
    finally:
        if tf.io.gfile.exists(tmp_path):
            tf.io.gfile.remove(tmp_path)


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
