"""The one atomic-write rule of the project: write a temp file, then rename.

Every output (TFRecords, checkpoints, configs, result files, JSON lines) is
first written to a temporary file and moved onto its final name only when
complete, so a reader never sees half a file and a kill leaves the previous
file (or none) in place.

Where temporary files live: in a hidden folder `.bert-tmp/` inside the
output's folder, named `<pid>.<random>.<host>.partial`. The name carries
neither the output's name nor its extension, and the folder is one level
down, so no user glob such as `out/*tfrecord*` or `out/*` (files) matches a
half-written file. The rename stays inside one folder tree (one file system,
atomic for local paths; a copy + delete on gs://, as tf.io.gfile does).

Cleanup: a failure removes its temp files (try/finally); a kill -9 cannot,
so `remove_stale_temp_files` (called before each write) deletes temp files
whose process is gone (same host) or that are older than a day (another
host, or gs://). Names of older versions of this project
(`<name>.tmp-*`, `.<name>.tmp-*` beside the output) are removed too.

Failures: an operating-system error while writing (disk full, quota, a
read-only or failing disk; also TensorFlow's `ResourceExhaustedError` and
the like from its own writers) becomes one `OutputWriteError` naming the
output and the cause (`write_failure`); every temp file of that write is
removed at once, including the `*.tempstate*` files TensorFlow's savers
make beside the temp name.

Local paths need no TensorFlow (so light tools such as
`python -m data.squad.evaluate` stay light); remote paths (`gs://...`) use
tf.io.gfile, as the original's tf.gfile did.
"""
import contextlib
import errno
import os
import socket
import time
import uuid

from data.io.errors import OutputExistsError, OutputWriteError, UserError

TEMP_DIR_NAME = ".bert-tmp"
TEMP_SUFFIX = ".partial"
# Temp files of another host (or on gs://) are taken as abandoned after this.
STALE_AFTER_SECONDS = 24 * 3600

__all__ = [
    "TEMP_DIR_NAME",
    "temp_path_for",
    "is_temp_path",
    "replace_file",
    "remove_quietly",
    "remove_stale_temp_files",
    "remove_empty_temp_dir",
    "atomic_output",
    "write_text_atomically",
    "write_bytes_atomically",
    "write_directory_atomically",
    "write_failure",
    "raise_write_error",
    "remove_temp_family",
    "OutputExistsError",
]

# Errors of a write that the user fixes (space, quota, permissions, disk).
WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS,
                errno.EIO, errno.EACCES, errno.EPERM)
# TensorFlow's C++ writers report the same causes in their messages.
_WRITE_CAUSES = tuple(os.strerror(code) for code in WRITE_ERRNOS)


def write_failure(error):
    """The cause of a failed write a user can fix, or None (then a bug).

    Args:
      error: an exception raised while writing.

    Returns:
      str, e.g. "No space left on device", for an `OSError` whose errno is
      one of `WRITE_ERRNOS`, or a TensorFlow error (ResourceExhaustedError,
      PermissionDeniedError, ...) whose message names such a cause; None for
      anything else.
    """
    if isinstance(error, OutputWriteError):
        return None
    if isinstance(error, OSError) and error.errno in WRITE_ERRNOS:
        cause = error.strerror or os.strerror(error.errno)
        if error.filename:
            cause += f" ({error.filename})"
        return cause
    if type(error).__module__.startswith("tensorflow"):
        message = str(getattr(error, "message", error))
        for cause in _WRITE_CAUSES:
            if cause in message:
                return cause
    return None


def raise_write_error(path, error):
    """Re-raises `error` as `OutputWriteError` naming `path`, if it is one.

    Returns without raising when `error` is not a write failure (the caller
    then re-raises it as it is).
    """
    cause = write_failure(error)
    if cause is not None:
        raise OutputWriteError(
            f"could not write {path}: {cause}. Earlier outputs are intact and "
            "the partial file was removed; fix this (e.g. free space) and run "
            "the same command again.") from error


def _is_remote(path):
    return "://" in path


def _gfile():
    import tensorflow as tf  # Only remote paths need TensorFlow here.
    return tf.io.gfile


def _host():
    # Dots separate the fields of a temp name; keep the host name dot-free.
    return socket.gethostname().replace(".", "_") or "host"


def _makedirs(folder):
    if not folder:
        return
    if _is_remote(folder):
        _gfile().makedirs(folder)
    else:
        os.makedirs(folder, exist_ok=True)


def temp_path_for(path):
    """A fresh temporary path for an output `path` (created folder included).

    Args:
      path: str or os.PathLike, the final output path (local or gs://).

    Returns:
      str, `<folder of path>/.bert-tmp/<pid>.<hex>.<host>.partial`; its folder
      exists on return.
    """
    path = os.fspath(path)
    folder = os.path.dirname(path)
    temp_dir = os.path.join(folder, TEMP_DIR_NAME) if folder else TEMP_DIR_NAME
    _makedirs(temp_dir)
    name = "%d.%s.%s%s" % (os.getpid(), uuid.uuid4().hex[:12], _host(),
                           TEMP_SUFFIX)
    return os.path.join(temp_dir, name)


def is_temp_path(path):
    """True for a temp file of this project (current or older naming).

    Readers use it to skip files a glob matched that are not finished
    outputs: anything under a `.bert-tmp` folder, and the older
    `<name>.tmp-<id>` / `.<name>.tmp-<id>` names.
    """
    path = os.fspath(path).replace("\\", "/")
    parts = path.split("/")
    if TEMP_DIR_NAME in parts[:-1]:
        return True
    name = parts[-1]
    return ".tmp-" in name or (name.startswith(".") and name.endswith(".tmp"))


def replace_file(temp_path, path):
    """Moves a finished temp file onto `path`, replacing any file there."""
    if _is_remote(path):
        _gfile().rename(temp_path, path, overwrite=True)
    else:
        os.replace(temp_path, path)


def remove_quietly(path):
    """Deletes `path` if it exists (cleanup after a failure)."""
    try:
        if _is_remote(path):
            _gfile().remove(path)
        else:
            os.remove(path)
    except OSError:
        pass
    except Exception as error:  # tf.errors.NotFoundError for gs:// paths.
        if type(error).__name__ != "NotFoundError":
            raise


def remove_empty_temp_dir(temp_dir):
    """Removes a `.bert-tmp` folder once it is empty (local paths only)."""
    # Local only (remote folders are virtual). Another process may be
    # starting a write there: rmdir refuses a non-empty folder, and a writer
    # whose folder vanished recreates it (see atomic_output).
    if not _is_remote(temp_dir):
        try:
            os.rmdir(temp_dir)
        except OSError:
            pass


def remove_temp_family(temp):
    """Removes `temp` and every file named `temp` + anything (e.g. the
    `.index`, `.data-*` and `*.tempstate*` files of a checkpoint temp)."""
    folder, name = os.path.split(temp)
    try:
        names = (_gfile().listdir(folder) if _is_remote(temp)
                 else os.listdir(folder or "."))
    except Exception:  # No temp folder any more: nothing to remove.
        return
    for other in names:
        if other.rstrip("/").startswith(name):
            path = os.path.join(folder, other.rstrip("/"))
            if not _is_remote(path) and os.path.isdir(path):
                import shutil
                shutil.rmtree(path, ignore_errors=True)
            else:
                remove_quietly(path)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_stale(temp_dir, name, now):
    """True when the temp file `name` belongs to no running writer."""
    fields = name[:-len(TEMP_SUFFIX)].split(".", 2) if name.endswith(
        TEMP_SUFFIX) else name.split(".")
    path = os.path.join(temp_dir, name)
    if len(fields) == 3 and fields[0].isdigit() and fields[2] == _host():
        # Written from this host (local or remote folder): stale once its
        # process is gone.
        return not _pid_alive(int(fields[0]))
    try:
        if _is_remote(temp_dir):
            mtime = _gfile().stat(path).mtime_nsec / 1e9
        else:
            mtime = os.stat(path).st_mtime
    except Exception:  # Gone meanwhile.
        return False
    # A file system without modification times (0) never looks stale.
    return mtime > 0 and now - mtime > STALE_AFTER_SECONDS


def remove_stale_temp_files(path):
    """Deletes abandoned temp files of earlier (killed) runs near `path`.

    Args:
      path: an output path; its folder's `.bert-tmp/` is cleaned (files of
        dead processes on this host, or older than a day), and the older
        temp names of exactly this output (`<path>.tmp-*`,
        `.<name>.tmp-*`) are removed.

    Returns:
      list of str, the paths removed.
    """
    path = os.fspath(path)
    folder = os.path.dirname(path)
    temp_dir = os.path.join(folder, TEMP_DIR_NAME) if folder else TEMP_DIR_NAME
    remote = _is_remote(path)
    removed = []
    now = time.time()
    try:
        names = (_gfile().listdir(temp_dir) if remote
                 else os.listdir(temp_dir))
    except Exception:  # No temp folder: nothing to clean.
        names = []
    for name in names:
        name = name.rstrip("/")
        # Checkpoint temps have suffixes (.index, .data-...) after .partial.
        stem = name.split(TEMP_SUFFIX)[0] + TEMP_SUFFIX
        if _is_stale(temp_dir, stem, now):
            remove_quietly(os.path.join(temp_dir, name))
            removed.append(os.path.join(temp_dir, name))
    base = os.path.basename(path)
    legacy = [os.path.join(folder, base + ".tmp-*"),
              os.path.join(folder, "." + base + ".tmp-*"),
              os.path.join(folder, "." + base + ".*.tmp")]
    for pattern in legacy:
        if remote:
            matches = _gfile().glob(pattern)
        else:
            import glob
            matches = glob.glob(pattern)
        for match in matches:
            remove_quietly(match)
            removed.append(match)
    if names:
        remove_empty_temp_dir(temp_dir)
    return removed


@contextlib.contextmanager
def atomic_output(path, suffixes=("",), clean_stale=True):
    """Yields a temp path to write; on success it is moved onto `path`.

    Args:
      path: str or os.PathLike, the final output (local or gs://).
      suffixes: the files written under the temp name, in the order they are
        moved into place; e.g. (".data-00000-of-00001", ".index") for a
        checkpoint prefix (index last, so a reader never finds an index
        without its data). Default: the single file itself.
      clean_stale: first remove abandoned temp files of killed runs.

    Yields:
      str, the temp path (the prefix, when `suffixes` is given).

    Raises:
      OutputWriteError: writing failed for a reason the user fixes (disk
        full, quota, permissions; see `write_failure`), naming `path`.
      Otherwise whatever the `with` body raises. Either way every temp file
      of this write is removed and `path` is left as it was.
    """
    path = os.fspath(path)
    moved = False
    temp = None
    try:
        if clean_stale:
            remove_stale_temp_files(path)
        temp = temp_path_for(path)
        yield temp
        for suffix in suffixes:
            replace_file(temp + suffix, path + suffix)
        moved = True
    except Exception as error:  # noqa: BLE001 (re-raised, translated or not)
        if temp is not None:
            remove_temp_family(temp)
        raise_write_error(path, error)
        raise
    finally:
        if temp is not None:
            if not moved:
                remove_temp_family(temp)
            remove_empty_temp_dir(os.path.dirname(temp))


def _open_text(path, mode):
    if _is_remote(path):
        return _gfile().GFile(path, mode)
    return open(path, mode, encoding="utf-8")


def write_text_atomically(path, text):
    """Writes `text` (UTF-8) to `path` atomically (see `atomic_output`).

    A crash leaves either the old file or the new one, never half a file.
    The file gets the usual mode (0666 minus umask).
    """
    with atomic_output(path) as temp:
        with _open_text(temp, "w") as writer:
            writer.write(text)


def write_bytes_atomically(path, data):
    """Writes `data` (bytes) to `path` atomically (see `atomic_output`)."""
    with atomic_output(path) as temp:
        opener = _gfile().GFile if _is_remote(path) else open
        with opener(temp, "wb") as writer:
            writer.write(data)


def _remove_tree(path, remote):
    try:
        if remote:
            _gfile().rmtree(path)
        else:
            import shutil
            shutil.rmtree(path, ignore_errors=True)
    except Exception:  # Already gone.
        pass


def write_directory_atomically(output_dir, write):
    """Calls `write(temp_dir)`, then renames `temp_dir` to `output_dir`, so
    `output_dir` is either complete or absent (SavedModels, converted models).

    The temporary directory lives in `.bert-tmp/` beside `output_dir` (same
    rules as files: removed on failure, and by the next run after a kill).

    Args:
      output_dir: str or os.PathLike, the directory to create (local or any
        tf.io.gfile file system that renames directories).
      write: callable taking the temporary directory's path; it writes the
        files, and may create the directory itself (tf.saved_model.save does).

    Returns:
      str, `output_dir` without a trailing "/".

    Raises:
      OutputExistsError (a FileExistsError): `output_dir` exists (a user's
        files are never replaced).
      OutputWriteError: writing failed for a reason the user fixes (see
        `write_failure`); the temporary directory is removed.
    """
    output_dir = os.fspath(output_dir).rstrip("/")
    remote = _is_remote(output_dir)
    exists = _gfile().exists if remote else os.path.exists
    if exists(output_dir):
        raise OutputExistsError(f"Output {output_dir} already exists; not "
                                "overwriting it. Choose a new path.")
    temp_dir = None
    try:
        remove_stale_temp_files(output_dir)
        temp_dir = temp_path_for(output_dir)
        write(temp_dir)
        if remote:
            _gfile().rename(temp_dir, output_dir)
        else:
            os.rename(temp_dir, output_dir)
    except Exception as error:  # noqa: BLE001 (re-raised, translated or not)
        if temp_dir is not None:
            _remove_tree(temp_dir, remote)
        raise_write_error(output_dir, error)
        raise
    finally:
        if temp_dir is not None:
            if exists(temp_dir):
                _remove_tree(temp_dir, remote)
            remove_empty_temp_dir(os.path.dirname(temp_dir))
    return output_dir
