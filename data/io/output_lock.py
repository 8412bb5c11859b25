"""One writer per output_dir: a lock file holding the writer's pid and host.

Two runs pointed at one `--output_dir` would both train, write the same
checkpoint names and resume from each other's files. So a run takes
`<output_dir>/.bert-lock` before its first write and keeps it until it ends;
a second run stops with one line naming the first (pid, host, start time,
command).

How the lock is held: the file is opened and `flock`ed (exclusive, released
by the kernel when the process dies, however it dies), and it holds JSON
with `pid`, `host`, `started`, `command` and `cluster` for the messages.
A file left by a dead process is stale and taken over with a warning: on
this host when its pid is gone (or no longer holds the flock); on another
host only when its `cluster` is this run's (a rescheduled chief of the same
`TF_CONFIG` cluster), since a pid on another host cannot be checked. Where
`flock` is not available (some network file systems, `gs://`) the pid and
host alone decide.

Multi-worker runs (`TF_CONFIG`): the chief takes the lock; the other
workers write nothing to output_dir and only check that the lock, if any,
belongs to their own cluster (`check_unlocked`), so they are never refused
by their chief.

Within one process the lock is shared (counted): a task that trains and a
second task object that then evaluates the same folder do not block each
other.
"""
import atexit
import datetime
import hashlib
import json
import os
import socket
import sys
import threading

from data.io.errors import UserError

LOCK_NAME = ".bert-lock"

__all__ = ["LOCK_NAME", "OutputDirLockedError", "OutputLock",
           "check_unlocked", "cluster_fingerprint", "lock_path"]


class OutputDirLockedError(UserError):
    """Another live run writes to the same output_dir."""


def lock_path(output_dir):
    """`<output_dir>/.bert-lock`."""
    return os.path.join(os.fspath(output_dir), LOCK_NAME)


def cluster_fingerprint(environ=None):
    """A short id of the `TF_CONFIG` cluster, or None without a cluster.

    Every worker of one multi-worker job has the same `cluster` (only their
    `task` differs), so this tells a worker of the chief's own job from an
    unrelated run.
    """
    environ = os.environ if environ is None else environ
    try:
        cluster = json.loads(environ.get("TF_CONFIG") or "{}").get("cluster")
    except (ValueError, AttributeError):
        return None
    if not cluster:
        return None
    text = json.dumps(cluster, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _is_remote(path):
    return "://" in path


def _host():
    return socket.gethostname() or "localhost"


def _pid_alive(pid):
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError, TypeError):
        return True
    return True


def _describe(holder, path):
    if not holder:
        return f"another run (lock file {path})"
    command = holder.get("command") or ""
    if len(command) > 160:
        command = command[:157] + "..."
    text = (f"pid {holder.get('pid')} on host {holder.get('host')}, started "
            f"{holder.get('started')}")
    if command:
        text += f": {command}"
    return text


def _parse(text):
    try:
        holder = json.loads(text)
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def _read(path):
    if _is_remote(path):
        import tensorflow as tf  # Remote folders only.
        if not tf.io.gfile.exists(path):
            return None
        with tf.io.gfile.GFile(path) as reader:
            return _parse(reader.read())
    try:
        with open(path, encoding="utf-8", errors="replace") as reader:
            return _parse(reader.read())
    except FileNotFoundError:
        return None


def _stale_reason(holder, cluster, flock_free=None):
    """Why `holder`'s lock may be taken over, or None (it may be alive).

    Args:
        holder: the lock file's content (dict, maybe empty).
        cluster: this run's `cluster_fingerprint()`, or None.
        flock_free: True/False when an flock on the file could/could not be
            taken, None where the file system has no flock.
    """
    if flock_free is False:
        return None  # A live process holds the flock.
    if not holder or "pid" not in holder:
        return "it names no process"
    if holder.get("host") == _host():
        if not _pid_alive(holder["pid"]):
            return f"pid {holder['pid']} is no longer running"
        if flock_free:
            return (f"pid {holder['pid']} is a different process now (the "
                    "lock's holder ended)")
        return None
    if cluster is not None and holder.get("cluster") == cluster:
        return (f"it was taken by host {holder.get('host')} of this run's own "
                "TF_CONFIG cluster (a restarted chief)")
    # A pid on another host cannot be checked, and flocks on network file
    # systems are not always shared between hosts.
    return None


def _locked_error(holder, path):
    return OutputDirLockedError(
        f"output_dir {os.path.dirname(path)} is in use by {_describe(holder, path)}."
        " Two runs must not write one folder (they would overwrite each "
        "other's checkpoints): wait for it to finish, stop it, or use another "
        f"--output_dir. If that run is gone, delete {path}.")


def check_unlocked(output_dir, cluster=None):
    """Raises unless output_dir is free for this run (nothing is written).

    Free: no lock file, a stale one (see the module docstring), one of this
    process, or (with `cluster`) one taken by a worker of the same cluster.

    Raises:
        OutputDirLockedError: a live other run holds it (names pid, host,
            start time and command).
    """
    path = lock_path(output_dir)
    if not _is_remote(path) and os.path.realpath(path) in _HELD:
        return
    holder = _read(path)
    if holder is None:
        return
    if holder.get("pid") == os.getpid() and holder.get("host") == _host():
        return
    if cluster is not None and holder.get("cluster") == cluster:
        return
    flock_free = None if _is_remote(path) else _flock_free(path)
    if _stale_reason(holder, cluster, flock_free) is None:
        raise _locked_error(holder, path)


def _flock_free(path):
    """True/False: whether an flock on `path` could be taken; None: unknown."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    finally:
        os.close(fd)  # Also drops the lock just taken.
    return True


# realpath -> [OutputLock, count] of the locks this process holds.
_HELD = {}
_HELD_GUARD = threading.Lock()


class OutputLock:
    """The lock of one output_dir, for this process.

    Args:
        output_dir: the folder (created by `acquire` when missing).
        cluster: `cluster_fingerprint()` of a multi-worker run, else None.

    Use `acquire()` / `release()` or `with OutputLock(...):`.
    """

    def __init__(self, output_dir, cluster=None):
        self.output_dir = os.fspath(output_dir)
        self.path = lock_path(self.output_dir)
        self.cluster = cluster
        self._fd = None
        self._key = None

    def _content(self):
        return json.dumps({
            "pid": os.getpid(), "host": _host(), "cluster": self.cluster,
            "started": datetime.datetime.now().astimezone().isoformat(
                timespec="seconds"),
            "command": " ".join(sys.argv)}, sort_keys=True) + "\n"

    def acquire(self):
        """Takes the lock; returns self.

        Raises:
            OutputDirLockedError: a live other run holds it.
            data.io.errors.OutputWriteError: the lock file cannot be written
                (disk full, read-only folder).
        """
        from data.io import atomic

        if _is_remote(self.path):
            self._acquire_remote()
            return self
        try:
            os.makedirs(self.output_dir, exist_ok=True)
            key = os.path.realpath(self.path)
            with _HELD_GUARD:
                if key in _HELD:
                    _HELD[key][1] += 1
                    self._key = key
                    return self
                self._acquire_local()
                self._key = key
                _HELD[key] = [self, 1]
        except OSError as error:
            atomic.raise_write_error(self.path, error)
            raise
        return self

    def _acquire_local(self):
        import fcntl

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                have_flock = True
            except BlockingIOError:
                os.close(fd)
                raise _locked_error(_read(self.path), self.path) from None
            except OSError:  # No flock on this file system: pids decide.
                have_flock = False
            try:
                same_file = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same_file = False
            if same_file:
                break
            # Its holder removed the file between our open and flock.
            os.close(fd)
        text = os.pread(fd, 1 << 16, 0).decode("utf-8", "replace")
        if text.strip():
            holder = _parse(text)
            reason = _stale_reason(holder, self.cluster,
                                   True if have_flock else None)
            if reason is None:
                os.close(fd)
                raise _locked_error(holder, self.path)
            _warn_taking_over(self.path, holder, reason)
        content = self._content().encode("utf-8")
        os.ftruncate(fd, 0)
        os.pwrite(fd, content, 0)
        os.fsync(fd)
        self._fd = fd

    def _acquire_remote(self):
        import tensorflow as tf

        holder = _read(self.path)
        if holder is not None:
            reason = _stale_reason(holder, self.cluster, None)
            if reason is None:
                raise _locked_error(holder, self.path)
            _warn_taking_over(self.path, holder, reason)
        tf.io.gfile.makedirs(self.output_dir)
        with tf.io.gfile.GFile(self.path, "w") as writer:
            writer.write(self._content())
        self._key = self.path

    def release(self):
        """Gives the lock up (removes the file once the last user is done)."""
        if self._key is None:
            return
        if _is_remote(self.path):
            import tensorflow as tf
            holder = _read(self.path) or {}
            if holder.get("pid") == os.getpid():
                tf.io.gfile.remove(self.path)
            self._key = None
            return
        with _HELD_GUARD:
            entry = _HELD.get(self._key)
            key, self._key = self._key, None
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] > 0:
                return
            del _HELD[key]
            owner = entry[0]
        owner._unlock()

    def _unlock(self):
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            # Unlink first, then close (which drops the flock): a run
            # waiting on the old file sees it replaced and opens anew.
            os.unlink(self.path)
        except OSError:
            pass
        os.close(fd)

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc_info):
        self.release()
        return False


def _warn_taking_over(path, holder, reason):
    from absl import logging

    logging.warning("Taking over the stale lock %s of %s: %s.", path,
                    _describe(holder, path), reason)


@atexit.register
def _release_all():
    # A process that ends without releasing (an API user who never closed
    # the task) removes its lock files; the kernel drops the flocks anyway.
    with _HELD_GUARD:
        owners = [entry[0] for entry in _HELD.values()]
        _HELD.clear()
    for owner in owners:
        owner._unlock()
