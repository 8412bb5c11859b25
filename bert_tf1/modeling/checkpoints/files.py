"""Finding and reading TF1 checkpoint files: prefixes, the index, tensors.

A TF1 checkpoint is `<prefix>.index` plus `<prefix>.data-*`. Damaged or
missing files raise errors that name the file.
"""
import os
import re

import numpy as np
import tensorflow as tf

from bert_tf1.data.io.errors import MissingFileError, UserError
from bert_tf1.modeling.checkpoints.state_file import newest_listed

# Names in TF1 checkpoints that hold optimizer or bookkeeping state, not weights.
_NON_WEIGHT_PATTERN = re.compile(
    r"(/adam_[mv]$|/Adam(_\d+)?$|/Momentum$|/Adagrad$|/Lamb(_\d+)?$|"
    r"^global_step$|^beta[12]_power$|^_CHECKPOINTABLE_OBJECT_GRAPH$|"
    r"AdamWeightDecayOptimizer|^good_steps$|^loss_scale$|^current_loss_scale$|"
    r"^lora/)")

GLOBAL_STEP = "global_step"
SLOT_NAMES = ("adam_m", "adam_v")
RELEASED_CHECKPOINT_NAME = "bert_model.ckpt"


class CheckpointNotFoundError(MissingFileError):
    """Nothing checkpoint-like is at the path a user gave."""


class CheckpointCorruptError(UserError):
    """A checkpoint file is truncated or damaged (names the file)."""


def _data_files(prefix):
    return sorted(tf.io.gfile.glob(prefix + ".data-*")) or [
        prefix + ".data-00000-of-00001"]


def read_variables(prefix):
    """`tf.train.list_variables`, with a clear error for a damaged index."""
    try:
        return dict(tf.train.list_variables(prefix))
    except (tf.errors.OpError, IndexError, ValueError) as error:
        raise CheckpointCorruptError(
            f"{prefix}.index: not a readable checkpoint index; the file is "
            f"truncated or corrupt ({str(error).splitlines()[0]}). Copy or "
            "download the checkpoint again.") from None


def check_data_size(prefix, shapes):
    """The `.data-*` files hold at least the bytes the index's fixed-size
    tensors need (a cut copy is found before any tensor is read).

    Raises:
        CheckpointCorruptError: fewer bytes than needed (names the files).
    """
    dtypes = tf.train.load_checkpoint(prefix).get_variable_to_dtype_map()
    needed = sum(int(np.prod(shape)) * dtypes[name].size
                 for name, shape in shapes.items()
                 if dtypes[name] != tf.string)
    files = _data_files(prefix)
    missing = [path for path in files if not tf.io.gfile.exists(path)]
    if missing and needed:
        raise CheckpointCorruptError(
            f"{', '.join(missing)}: checkpoint data file is missing (the index "
            f"{prefix}.index lists tensors stored there). Copy the whole "
            "checkpoint: the .index and every .data-* file.")
    found = sum(tf.io.gfile.stat(path).length for path in files
                if tf.io.gfile.exists(path))
    if found < needed:
        raise CheckpointCorruptError(
            f"{', '.join(files)}: checkpoint data is truncated or corrupt "
            f"({found} bytes, expected at least {needed} for the tensors its "
            "index lists). "
            "Copy or download the checkpoint again.")


def iter_tensors(prefix, names):
    """Yields (name, numpy array) for `names`, one tensor at a time.

    Raises:
        CheckpointCorruptError: a `.data-*` file is short or fails its
            checksum (TF raises a bare IndexError or DataLossError).
    """
    reader = tf.train.load_checkpoint(prefix)
    for name in names:
        try:
            value = reader.get_tensor(name)
        except (tf.errors.OpError, IndexError) as error:
            raise CheckpointCorruptError(
                f"{', '.join(_data_files(prefix))}: checkpoint data is "
                f"truncated or corrupt (reading {name!r} failed: "
                f"{str(error).splitlines()[0]}). Copy or download the "
                "checkpoint again.") from None
        yield name, value


def is_optimizer_state(name):
    """True for checkpoint entries that are optimizer state or bookkeeping."""
    return bool(_NON_WEIGHT_PATTERN.search(name))


def resolve_checkpoint(path):
    """Turns what a user passes as `--init_checkpoint` into a checkpoint prefix:
    a prefix (or its `.index`/`.data-*` file), a directory with a
    `checkpoint` state file (its newest), or one holding
    `bert_model.ckpt.index`.

    Returns:
        str, a prefix whose `.index` file exists.

    Raises:
        CheckpointNotFoundError: nothing checkpoint-like is at `path`.
        state_file.CheckpointStateError: the directory's `checkpoint` file
            names a path outside it, or a checkpoint that is missing.
    """
    path = os.fspath(path)
    if tf.io.gfile.isdir(path):
        latest = newest_listed(path)
        if latest:
            return latest
        released = os.path.join(path, RELEASED_CHECKPOINT_NAME)
        if tf.io.gfile.exists(released + ".index"):
            return released
        raise CheckpointNotFoundError(
            f"No checkpoint in directory {path}: expected a `checkpoint` state "
            f"file or `{RELEASED_CHECKPOINT_NAME}.index`.")
    if tf.io.gfile.exists(path + ".index"):
        return path
    # The index or a data file named instead of the prefix
    # (model.ckpt.index, model.ckpt.data-00000-of-00001).
    stem = re.sub(r"\.(index|data-\d+-of-\d+)$", "", path)
    if stem != path and tf.io.gfile.exists(stem + ".index"):
        return stem
    raise CheckpointNotFoundError(
        f"Checkpoint not found: {path} (looked for {path}.index, or a directory "
        "holding one).")


def list_checkpoint(path):
    """`{name: shape list}` of every tensor in a checkpoint (the index suffices)."""
    return read_variables(resolve_checkpoint(path))
