"""The `checkpoint` state file of a folder (the `CheckpointState` text proto
the Estimator and `tf.train.CheckpointManager` keep), parsed and written with
that proto and `text_format`. Two checks of our own:
  * `tf.train.get_checkpoint_state` returns None for a malformed file (a run
    would silently start afresh); here it is an error naming the file/line;
  * `tf.train.latest_checkpoint` follows listed paths anywhere; here they
    must stay inside the folder (absolute paths into it are fine; an
    absolute path whose folder was moved means this folder's checkpoint of
    that name, if there is one).
"""
import dataclasses
import os
import posixpath

import tensorflow as tf
from google.protobuf import text_format

from bert_tf1.data.io.atomic import is_remote
from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling.keras_internals import checkpoint_state_proto

STATE_FILE_NAME = "checkpoint"


class CheckpointStateError(UserError):
    """A `checkpoint` state file is malformed, points outside its folder, or
    names a checkpoint that is not there."""


@dataclasses.dataclass(frozen=True)
class CheckpointState:
    """What a folder's `checkpoint` file lists, paths resolved in the folder.

    Attributes:
        path: the state file.
        newest: prefix of `model_checkpoint_path` (inside the folder), or None.
        listed: prefixes of `all_model_checkpoint_paths`, oldest first (the
            newest included).
    """
    path: str
    newest: str
    listed: tuple


def _join(folder, name):
    return (posixpath.join if is_remote(folder) else os.path.join)(folder, name)


def parse_state_text(text, path):
    """(model_checkpoint_path or None, [all_model_checkpoint_paths]) as written.

    Raises:
        CheckpointStateError: not a `CheckpointState` text proto (names the
            file and line).
    """
    proto = checkpoint_state_proto()()
    try:
        text_format.Merge(text, proto)
    except text_format.ParseError as error:
        reason = str(error).split(" : ", 1)[-1]
        raise CheckpointStateError(
            f"{path}, line {error.GetLine()}: not a checkpoint state file "
            f"({reason[:160]}); expected lines such as "
            'model_checkpoint_path: "model.ckpt-300"') from None
    return (proto.model_checkpoint_path or None,
            list(proto.all_model_checkpoint_paths))


def _relative_inside(folder, listed_path):
    """`listed_path` relative to `folder` if it lies inside, else None."""
    if is_remote(folder):
        base = folder.rstrip("/") + "/"
        if listed_path.startswith(base):
            listed_path = listed_path[len(base):]
        elif is_remote(listed_path):
            return None
        relative = posixpath.normpath(listed_path)
    else:
        # Absolute or relative; symlinks inside the folder may lead out.
        real_folder = os.path.realpath(folder)
        real_path = os.path.realpath(os.path.join(folder, listed_path))
        if os.path.commonpath([real_folder, real_path]) != real_folder:
            return None
        relative = os.path.relpath(real_path, real_folder)
    if relative.split("/")[0] in (os.pardir, "") or relative == os.curdir:
        return None
    return relative


def resolve_listed(folder, listed_path, state_path):
    """The prefix a state file's entry names, checked to be in `folder`
    (relative entries are relative to it; an absolute one outside it counts
    if `folder` holds a checkpoint of that name: the folder was moved).

    Returns:
        str, `<folder>/<relative path>` (the user's spelling of the folder).

    Raises:
        CheckpointStateError: the entry points outside `folder`.
    """
    relative = _relative_inside(folder, listed_path)
    if relative is not None:
        return _join(folder, relative)
    absolute = is_remote(listed_path) or os.path.isabs(listed_path)
    moved = _join(folder, posixpath.basename(listed_path))
    if absolute and tf.io.gfile.exists(moved + ".index"):
        return moved
    raise CheckpointStateError(
        f"{state_path} names the checkpoint {listed_path!r}, which is outside "
        f"{folder}. A run only uses checkpoints of its own folder: fix or "
        f"delete {state_path}, or pass that checkpoint as --init_checkpoint.")


def read_state(folder):
    """The folder's `checkpoint` state, entries resolved and checked.

    Returns:
        CheckpointState, or None when the folder has no state file.

    Raises:
        CheckpointStateError: malformed, or an entry points outside.
    """
    folder = os.fspath(folder)
    path = _join(folder, STATE_FILE_NAME)
    if not tf.io.gfile.exists(path) or tf.io.gfile.isdir(path):
        return None
    with tf.io.gfile.GFile(path, "rb") as reader:
        raw = reader.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CheckpointStateError(f"{path}: not a text file (expected a "
                                   "checkpoint state file)") from None
    newest, listed = parse_state_text(text, path)
    listed = [resolve_listed(folder, entry, path) for entry in listed]
    if newest is not None:
        newest = resolve_listed(folder, newest, path)
        if newest not in listed:
            listed.append(newest)
    return CheckpointState(path, newest, tuple(listed))


def newest_listed(folder):
    """The prefix a folder's state file names as newest (its `.index`
    exists), or None without a state file or `model_checkpoint_path`.

    Raises:
        CheckpointStateError: malformed, an entry outside the folder, or the
            newest entry's `.index` is missing.
    """
    state = read_state(folder)
    if state is None or state.newest is None:
        return None
    if not tf.io.gfile.exists(state.newest + ".index"):
        raise CheckpointStateError(
            f"{state.path} names {os.path.basename(state.newest)} as the newest "
            f"checkpoint, but {state.newest}.index is missing. Restore that "
            f"checkpoint, or fix or delete {state.path}.")
    return state.newest


def format_state(names):
    """The state file's text for `names` (relative, oldest first)."""
    proto = checkpoint_state_proto()(model_checkpoint_path=names[-1],
                                 all_model_checkpoint_paths=names)
    return text_format.MessageToString(proto, as_utf8=True)
