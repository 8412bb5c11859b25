"""Atomic outputs: write a temp file under `<folder>/.bert-tmp/`, then rename
(TensorFlow is imported only for gs:// paths). Temp names, their flocked
markers and the cleanup of killed runs: docs/troubleshooting.md, "Temporary
files". A write failure the user can fix becomes one `OutputWriteError`.
"""
import contextlib
import errno
import fcntl
import os
import shutil
import socket
import tempfile
import threading
import time
import uuid

from bert_tf1.data.io.errors import OutputExistsError, OutputWriteError

TEMP_DIR_NAME = ".bert-tmp"
TEMP_SUFFIX = ".partial"
_MARKER_SUFFIX = ".lock"
# Temp files without a live marker of this host are abandoned after this.
STALE_AFTER_SECONDS = 24 * 3600

# Errors of a write that the user fixes (space, quota, permissions, disk).
WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS,
                errno.EIO, errno.EACCES, errno.EPERM)
# TensorFlow's C++ writers report the same causes in their messages.
_WRITE_CAUSES = tuple(os.strerror(code) for code in WRITE_ERRNOS)


def write_failure(error):
    """str cause (e.g. "No space left on device") of a write failure a user
    can fix (an OSError with an errno in `WRITE_ERRNOS`, or a TensorFlow error
    naming such a cause), or None (a bug)."""
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
    """Raises OutputWriteError naming `path` if `error` is a write failure;
    otherwise returns (the caller re-raises `error`)."""
    cause = write_failure(error)
    if cause is not None:
        raise OutputWriteError(
            f"could not write {path}: {cause}. Earlier outputs are intact and "
            "the partial file was removed; fix this (e.g. free space) and run "
            "the same command again.") from error


def is_remote(path):
    """True for a URL-style path (`gs://...`): written through tf.io.gfile,
    with no local rename, lock or realpath."""
    return "://" in path


def _gfile():
    import tensorflow as tf  # Only remote paths need TensorFlow here.
    return tf.io.gfile


def _host():
    # Dots separate the fields of a temp name; keep the host name dot-free.
    return socket.gethostname().replace(".", "_") or "host"


def _temp_dir(path):
    return os.path.join(os.path.dirname(path), TEMP_DIR_NAME)


def try_flock(fd):
    """True: taken; False: another process holds it; None: no flock here."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True


# temp path -> (fd, marker path) of the temp names this process holds.
_CLAIMS = {}
_CLAIMS_GUARD = threading.Lock()


def temp_path_for(path):
    """str `<folder of path>/.bert-tmp/tmp<random>.<host>.partial` (folder
    created, file not), held by this process until `release_temp`."""
    temp_dir = _temp_dir(os.fspath(path))
    suffix = f".{_host()}"
    if is_remote(temp_dir):
        _gfile().makedirs(temp_dir)
        return os.path.join(temp_dir,
                            f"tmp{uuid.uuid4().hex[:12]}{suffix}{TEMP_SUFFIX}")
    while True:
        os.makedirs(temp_dir, exist_ok=True)
        try:
            fd, marker = tempfile.mkstemp(suffix + _MARKER_SUFFIX, dir=temp_dir)
        except FileNotFoundError:  # Another writer removed the empty folder.
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # No flock on this file system: the age rule holds.
            pass
        if os.fstat(fd).st_nlink:
            break
        os.close(fd)  # That cleanup took it for abandoned: a new name.
    temp = marker[:-len(_MARKER_SUFFIX)] + TEMP_SUFFIX
    with _CLAIMS_GUARD:
        _CLAIMS[temp] = (fd, marker)
    return temp


def release_temp(temp):
    """Gives up the temp name `temp` (its marker goes); no-op otherwise."""
    with _CLAIMS_GUARD:
        claim = _CLAIMS.pop(os.fspath(temp), None)
    if claim is not None:
        remove_quietly(claim[1])
        os.close(claim[0])


def is_temp_path(path):
    """True for anything under a `.bert-tmp/` folder."""
    return TEMP_DIR_NAME in os.fspath(path).replace("\\", "/").split("/")[:-1]


def replace_file(temp_path, path):
    """Moves a finished temp file onto `path`, replacing any file there."""
    if is_remote(path):
        _gfile().rename(temp_path, path, overwrite=True)
    else:
        os.replace(temp_path, path)
    release_temp(temp_path)


def remove_quietly(path):
    """Deletes `path` if it exists (cleanup after a failure)."""
    try:
        if is_remote(path):
            _gfile().remove(path)
        else:
            os.remove(path)
    except OSError:
        pass
    except Exception as error:  # tf.errors.NotFoundError for gs:// paths.
        if type(error).__name__ != "NotFoundError":
            raise
    release_temp(path)


def remove_empty_temp_dir(temp_dir):
    """Removes a `.bert-tmp` folder once it is empty (local paths only)."""
    # rmdir refuses a non-empty folder; temp_path_for recreates a vanished one.
    if not is_remote(temp_dir):
        try:
            os.rmdir(temp_dir)
        except OSError:
            pass


def remove_temp_family(temp):
    """Removes `temp` and every file named `temp` + anything (e.g. the
    `.index`, `.data-*` and `*.tempstate*` files of a checkpoint temp)."""
    folder, name = os.path.split(temp)
    try:
        names = (_gfile().listdir(folder) if is_remote(temp)
                 else os.listdir(folder or "."))
    except Exception:  # No temp folder any more: nothing to remove.
        return []
    removed = []
    for other in names:
        if other.rstrip("/").startswith(name):
            path = os.path.join(folder, other.rstrip("/"))
            _remove_file_or_tree(path)
            removed.append(path)
    return removed


def _remove_file_or_tree(path):
    """Removes the file or folder `path` (local or remote) if it exists."""
    remote = is_remote(path)
    try:
        if not (_gfile().isdir(path) if remote else os.path.isdir(path)):
            remove_quietly(path)
        elif remote:
            _gfile().rmtree(path)
        else:
            shutil.rmtree(path, ignore_errors=True)
    except Exception:  # noqa: BLE001 (gone meanwhile)
        pass


def _older_than_a_day(path, now):
    try:
        if is_remote(path):
            mtime = _gfile().stat(path).mtime_nsec / 1e9
        else:
            mtime = os.stat(path).st_mtime
    except Exception:  # Gone meanwhile.
        return False
    # A file system without modification times (0) never looks stale.
    return mtime > 0 and now - mtime > STALE_AFTER_SECONDS


def _remove_if_abandoned(temp_dir, marker_name):
    """Paths removed for a free marker of this host, or None if it is held."""
    stem = marker_name[:-len(_MARKER_SUFFIX)]
    marker = os.path.join(temp_dir, marker_name)
    if not stem.endswith("." + _host()):
        return []  # Another host's: the age rule decides.
    try:
        fd = os.open(marker, os.O_RDONLY)
    except OSError:
        return []
    try:
        taken = try_flock(fd)
        if taken is False:
            return None
        if taken is None or not os.fstat(fd).st_nlink:
            return []  # No flock here (the age rule decides), or released.
        removed = remove_temp_family(os.path.join(temp_dir, stem + TEMP_SUFFIX))
        # Its writer, if it is starting, sees the marker gone and renames.
        remove_quietly(marker)
        return removed + [marker]
    finally:
        os.close(fd)


def remove_stale_temp_files(path):
    """Deletes abandoned temp files in `path`'s folder (the module's rules);
    returns the list of paths removed."""
    temp_dir = _temp_dir(os.fspath(path))
    remote = is_remote(temp_dir)
    try:
        names = [name.rstrip("/") for name in
                 (_gfile().listdir(temp_dir) if remote else os.listdir(temp_dir))]
    except Exception:  # No temp folder: nothing to clean.
        return []
    removed, live = [], set()
    for name in names:
        if name.endswith(_MARKER_SUFFIX) and not remote:
            gone = _remove_if_abandoned(temp_dir, name)
            if gone is None:
                live.add(name[:-len(_MARKER_SUFFIX)])
            else:
                removed += gone
    now = time.time()
    for name in names:
        path = os.path.join(temp_dir, name)
        if path in removed or name.split(TEMP_SUFFIX)[0] in live or \
                name[:-len(_MARKER_SUFFIX)] in live:
            continue
        if _older_than_a_day(path, now):
            _remove_file_or_tree(path)
            removed.append(path)
    if names:
        remove_empty_temp_dir(temp_dir)
    return removed


@contextlib.contextmanager
def atomic_output(path, suffixes=("",)):
    """Yields a temp path to write; on success it is moved onto `path`.

    First removes what killed runs left (`remove_stale_temp_files`).

    Args:
      path: str or os.PathLike, the final output (local or gs://).
      suffixes: the files written under the temp name, in the order they
        are moved into place (e.g. a checkpoint's data, then its index).

    Yields:
      str, the temp path (the prefix, when `suffixes` is given).

    Raises:
      OutputWriteError: a failure the user fixes (`write_failure`), naming
        `path`; else what the body raises. Either way the temp files go and
        `path` is left as it was.
    """
    path = os.fspath(path)
    moved = False
    temp = None
    try:
        remove_stale_temp_files(path)
        temp = temp_path_for(path)
        yield temp
        for suffix in suffixes:
            replace_file(temp + suffix, path + suffix)
        moved = True
    except Exception as error:  # noqa: BLE001 (re-raised, translated or not)
        raise_write_error(path, error)
        raise
    finally:
        if temp is not None:
            if not moved:
                remove_temp_family(temp)
            release_temp(temp)
            remove_empty_temp_dir(os.path.dirname(temp))


def write_text_atomically(path, text):
    """Writes `text` (UTF-8) to `path` atomically (see `atomic_output`)."""
    write_bytes_atomically(path, text.encode("utf-8"))


def write_bytes_atomically(path, data):
    """Writes `data` (bytes) to `path` atomically (see `atomic_output`)."""
    with atomic_output(path) as temp:
        opener = _gfile().GFile if is_remote(temp) else open
        with opener(temp, "wb") as writer:
            writer.write(data)


def write_directory_atomically(output_dir, write):
    """Calls `write(temp_dir)`, then renames `temp_dir` to `output_dir`, so
    `output_dir` is either complete or absent (SavedModels, converted models).

    `write` may create the directory itself (tf.saved_model.save does).

    Returns:
      str, `output_dir` without a trailing "/".

    Raises:
      OutputExistsError: `output_dir` exists (never replaced).
      OutputWriteError: a failure the user fixes (`write_failure`); the
        temporary directory is removed.
    """
    output_dir = os.fspath(output_dir).rstrip("/")
    exists = _gfile().exists if is_remote(output_dir) else os.path.exists
    if exists(output_dir):
        raise OutputExistsError(f"Output {output_dir} already exists; not "
                                "overwriting it. Choose a new path.")
    # The folder is renamed as a file would be; a failure removes its tree.
    with atomic_output(output_dir) as temp_dir:
        write(temp_dir)
    return output_dir
