"""Writing a directory all at once: a temporary sibling, then one rename."""
import os

import tensorflow as tf


def write_directory_atomically(output_dir, write):
    """Calls `write(tmp_dir)` on a fresh sibling directory, then renames it to
    `output_dir`, so `output_dir` is either complete or absent.

    Args:
        output_dir: the directory to create (local path or any tf.io.gfile
            file system that renames directories).
        write: callable taking the temporary directory path; it writes the
            files. It may also create the directory itself
            (tf.saved_model.save does).

    Returns:
        str, output_dir without a trailing "/".

    Raises:
        FileExistsError: output_dir exists (a user's files are never
            replaced).
    """
    output_dir = os.fspath(output_dir).rstrip("/")
    if tf.io.gfile.exists(output_dir):
        raise FileExistsError(f"Output {output_dir} already exists; not "
                              "overwriting it. Choose a new path.")
    parent = os.path.dirname(output_dir)
    if parent:
        tf.io.gfile.makedirs(parent)
    tmp_dir = f"{output_dir}.tmp-{os.getpid()}"
    if tf.io.gfile.exists(tmp_dir):
        tf.io.gfile.rmtree(tmp_dir)
    try:
        write(tmp_dir)
        tf.io.gfile.rename(tmp_dir, output_dir)
    finally:
        if tf.io.gfile.exists(tmp_dir):
            tf.io.gfile.rmtree(tmp_dir)
    return output_dir
