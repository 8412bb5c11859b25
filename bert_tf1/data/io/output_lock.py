"""One writer per output_dir: a `filelock.FileLock` (an `flock`) on
`<output_dir>/.bert-lock`, whose JSON line names the holder
(docs/troubleshooting.md, "One run per output_dir"). The other workers of a
multi-worker run only `check_unlocked`; within one process the lock is
counted (it may be taken twice). filelock is imported when a lock is first
taken or checked, not at import: it registers atexit and fork hooks.
"""
import datetime
import errno
import hashlib
import json
import os
import socket
import sys
import time

from bert_tf1.data.io.atomic import is_remote, raise_write_error
from bert_tf1.data.io.errors import UserError

LOCK_NAME = ".bert-lock"
# flock's errors where a file system has none (filelock's fallback, a
# marker file, is off: the holder's line would overwrite its marker).
_NO_FLOCK = (errno.ENOSYS, errno.ENOLCK, errno.EOPNOTSUPP)


class OutputDirLockedError(UserError):
    """Another live run writes to the same output_dir."""


def lock_path(output_dir):
    """`<output_dir>/.bert-lock`."""
    return os.path.join(os.fspath(output_dir), LOCK_NAME)


def cluster_fingerprint(environ=None):
    """A short id of the `TF_CONFIG` cluster (the same for every worker of
    one job), or None without a cluster."""
    environ = os.environ if environ is None else environ
    try:
        cluster = json.loads(environ.get("TF_CONFIG") or "{}").get("cluster")
    except (ValueError, AttributeError):
        return None
    if not cluster:
        return None
    text = json.dumps(cluster, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _holder(text):
    try:
        holder = json.loads(text)
    except ValueError:
        return {}
    return holder if isinstance(holder, dict) else {}


def _read_holder(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as reader:
            return _holder(reader.read())
    except OSError:
        return {}


def _describe(holder, path):
    if "pid" not in holder:
        return f"another run (lock file {path})"
    command = holder.get("command") or ""
    if len(command) > 160:
        command = command[:157] + "..."
    text = (f"pid {holder.get('pid')} on host {holder.get('host')}, started "
            f"{holder.get('started')}")
    return f"{text}: {command}" if command else text


def _locked_error(holder, path):
    return OutputDirLockedError(
        f"output_dir {os.path.dirname(path)} is in use by {_describe(holder, path)}."
        " Two runs must not write one folder (they would overwrite each "
        "other's checkpoints): wait for it to finish, stop it, or use another "
        "--output_dir.")


def _no_lock_possible(output_dir, why):
    from absl import logging  # Not at import: absl registers an atexit.

    logging.warning("output_dir %s: %s, so it cannot be locked against a "
                    "second run; make sure no other run writes to it.",
                    output_dir, why)


def _file_lock(path):
    """This process's one `filelock.FileLock` of `path` (is_singleton): taking
    it again counts, any thread may release it. A refused take retries for a
    second: a holder that unlinks its file and releases as we open it leaves
    us a dead inode, then a new file."""
    import filelock

    return filelock.FileLock(path, timeout=1, thread_local=False,
                             is_singleton=True, fallback_to_soft=False)


def check_unlocked(output_dir, cluster=None):
    """Raises unless output_dir is free for this run (no lock, no live
    holder, this process's, or one of `cluster`); writes nothing.

    Raises:
        OutputDirLockedError: a live other run holds it (names pid, host,
            start time and command).
    """
    path = lock_path(output_dir)
    if is_remote(path) or _file_lock(path).is_locked:
        return
    from filelock import lock_descriptor

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        if lock_descriptor(fd, blocking=False):
            return
    except OSError:  # No flock on this file system: nothing to check.
        return
    finally:
        os.close(fd)  # Also drops a lock just taken.
    for _ in range(20):  # Its holder may not have written its line yet.
        holder = _read_holder(path)
        if holder:
            break
        time.sleep(0.05)
    if cluster is None or holder.get("cluster") != cluster:
        raise _locked_error(holder, path)


class OutputLock:
    """The lock of one output_dir (created when missing) for this process;
    `cluster` is `cluster_fingerprint()` or None. `acquire()`/`release()`
    or `with`."""

    def __init__(self, output_dir, cluster=None):
        self.output_dir = os.fspath(output_dir)
        self.path = lock_path(self.output_dir)
        self.cluster = cluster
        self._lock = None

    def _content(self):
        return json.dumps({
            "pid": os.getpid(), "host": socket.gethostname(),
            "cluster": self.cluster,
            "started": datetime.datetime.now().astimezone().isoformat(
                timespec="seconds"),
            "command": " ".join(sys.argv)}, sort_keys=True) + "\n"

    def acquire(self):
        """Takes the lock; returns self.

        Raises:
            OutputDirLockedError: a live other run holds it.
            bert_tf1.data.io.errors.OutputWriteError: the lock file cannot be written
                (disk full, read-only folder).
        """
        if is_remote(self.path):
            _no_lock_possible(self.output_dir, "a remote folder has no flock")
            return self
        from filelock import Timeout

        lock = _file_lock(self.path)
        try:
            lock.acquire()
            self._lock = lock
            if lock.lock_counter == 1:  # Taken now, not held already: our line.
                self._write_holder()
        except Timeout:
            raise _locked_error(_read_holder(self.path), self.path) from None
        except OSError as error:
            self.release()  # Taken, but its line could not be written.
            if error.errno in _NO_FLOCK:
                _no_lock_possible(self.output_dir, "its file system has no flock")
                return self
            raise_write_error(self.path, error)
            raise
        return self

    def _write_holder(self):
        with open(self.path, "r+", encoding="utf-8", errors="replace") as file:
            left = _holder(file.read())
            if left:
                from absl import logging
                logging.warning("Taking over the stale lock %s of %s: that "
                                "process ended without releasing it.",
                                self.path, _describe(left, self.path))
            file.seek(0)
            file.truncate()
            file.write(self._content())

    def release(self):
        """Gives the lock up (removes the file once the last user is done)."""
        lock, self._lock = self._lock, None
        if lock is None:
            return
        if lock.lock_counter == 1:
            # Unlink first, then unlock: a run waiting on the old file finds
            # it unlinked once it gets the flock, and opens anew.
            try:
                os.unlink(self.path)
            except OSError:
                pass
        lock.release()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc_info):
        self.release()
        return False
