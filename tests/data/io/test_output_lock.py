"""One writer per output_dir: the lock file, its holder, stale locks, clusters."""
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from bert_tf1.data.io import output_lock
from tests.conftest import REPO_ROOT

# A second process that takes the lock and waits (or fails) as a run would.
_HOLDER = """
import sys, time
sys.path.insert(0, {root!r})
from bert_tf1.data.io import output_lock
lock = output_lock.OutputLock({folder!r}, cluster={cluster!r})
try:
    lock.acquire()
except output_lock.OutputDirLockedError as error:
    print("LOCKED", error, flush=True)
    sys.exit(3)
print("HELD", flush=True)
time.sleep({sleep})
lock.release()
"""


def _holder(folder, sleep=60, cluster=None):
    code = _HOLDER.format(root=str(REPO_ROOT), folder=str(folder),
                          cluster=cluster, sleep=sleep)
    return subprocess.Popen([sys.executable, "-c", code],
                            stdout=subprocess.PIPE, text=True)


def _wait_held(process):
    line = process.stdout.readline()
    assert line.startswith("HELD"), line


def _dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _write_lock(folder, **holder):
    folder.mkdir(exist_ok=True)
    (folder / output_lock.LOCK_NAME).write_text(json.dumps(holder))


def test_lock_file_names_pid_and_host_and_goes_on_release(tmp_path):
    folder = tmp_path / "out"
    lock = output_lock.OutputLock(folder).acquire()
    holder = json.loads((folder / output_lock.LOCK_NAME).read_text())
    assert holder["pid"] == os.getpid()
    assert holder["host"] == socket.gethostname()
    lock.release()
    assert not (folder / output_lock.LOCK_NAME).exists()
    assert os.listdir(folder) == []


def test_a_second_process_is_refused_naming_the_first(tmp_path):
    folder = tmp_path / "out"
    first = _holder(folder)
    try:
        _wait_held(first)
        with pytest.raises(output_lock.OutputDirLockedError) as error:
            output_lock.OutputLock(folder).acquire()
        message = str(error.value)
        assert f"pid {first.pid} on host {socket.gethostname()}" in message
        assert str(folder) in message and "\n" not in message
        # The read-only check (before any write) says the same.
        with pytest.raises(output_lock.OutputDirLockedError, match=str(first.pid)):
            output_lock.check_unlocked(folder)
        # And a second process is refused too.
        second = _holder(folder, sleep=0)
        assert second.wait(timeout=60) == 3
        assert str(first.pid) in second.stdout.read()
    finally:
        first.kill()
        first.wait()


def test_lock_of_a_killed_process_is_taken_over_with_a_warning(tmp_path, caplog):
    folder = tmp_path / "out"
    first = _holder(folder)
    _wait_held(first)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    # kill -9 left the file; the kernel dropped the flock.
    assert (folder / output_lock.LOCK_NAME).exists()
    output_lock.check_unlocked(folder)
    with caplog.at_level("WARNING"):
        lock = output_lock.OutputLock(folder).acquire()
    assert f"pid {first.pid}" in caplog.text and "stale" in caplog.text
    assert json.loads((folder / output_lock.LOCK_NAME).read_text())["pid"] == os.getpid()
    lock.release()


def test_stale_lock_of_a_dead_pid_on_this_host_is_taken_over(tmp_path, caplog):
    folder = tmp_path / "out"
    pid = _dead_pid()
    _write_lock(folder, pid=pid, host=socket.gethostname(), started="earlier")
    with caplog.at_level("WARNING"):
        with output_lock.OutputLock(folder):
            pass
    assert f"stale lock {folder / output_lock.LOCK_NAME} of pid {pid}" in caplog.text


def test_a_lock_file_nobody_holds_is_taken_over_whatever_its_host(tmp_path, caplog):
    # Only a live flock counts: the file of another host's run that ended
    # (e.g. a chief rescheduled elsewhere) does not block.
    folder = tmp_path / "out"
    _write_lock(folder, pid=1, host="some-other-host", cluster="c1",
                started="earlier", command="run_classifier.py --x")
    output_lock.check_unlocked(folder)
    with caplog.at_level("WARNING"):
        with output_lock.OutputLock(folder, cluster="c2"):
            holder = json.loads((folder / output_lock.LOCK_NAME).read_text())
            assert holder["pid"] == os.getpid() and holder["cluster"] == "c2"
    assert "pid 1 on host some-other-host" in caplog.text
    assert "run_classifier.py --x" in caplog.text


def test_a_remote_folder_is_not_locked_and_the_log_says_so(caplog):
    folder = "ram://output_lock_test_%d" % os.getpid()
    with caplog.at_level("WARNING"):
        with output_lock.OutputLock(folder):
            output_lock.check_unlocked(folder)
    assert f"output_dir {folder}: a remote folder has no flock" in caplog.text
    import tensorflow as tf
    assert not tf.io.gfile.exists(folder + "/" + output_lock.LOCK_NAME)


def test_importing_registers_nothing_at_exit():
    code = ("import atexit; before = atexit._ncallbacks(); "
            "import bert_tf1.data.io.output_lock, bert_tf1.data.io.atomic; "
            "print(atexit._ncallbacks() - before)")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "0"


def test_workers_of_the_chiefs_cluster_are_not_refused(tmp_path):
    folder = tmp_path / "out"
    chief = _holder(folder, cluster="job-a")
    try:
        _wait_held(chief)
        output_lock.check_unlocked(folder, cluster="job-a")  # its own worker
        with pytest.raises(output_lock.OutputDirLockedError):
            output_lock.check_unlocked(folder, cluster="job-b")
        with pytest.raises(output_lock.OutputDirLockedError):
            output_lock.check_unlocked(folder)
    finally:
        chief.kill()
        chief.wait()


def test_cluster_fingerprint_ignores_the_task():
    cluster = {"worker": ["a:1", "b:2"]}
    first = output_lock.cluster_fingerprint(
        {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}})})
    second = output_lock.cluster_fingerprint(
        {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}})})
    other = output_lock.cluster_fingerprint(
        {"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1", "c:3"]}})})
    assert first == second and first != other
    assert output_lock.cluster_fingerprint({}) is None


def test_one_process_shares_its_lock(tmp_path):
    folder = tmp_path / "out"
    first = output_lock.OutputLock(folder).acquire()
    second = output_lock.OutputLock(folder).acquire()  # e.g. a second task object
    first.release()
    assert (folder / output_lock.LOCK_NAME).exists()
    second.release()
    assert not (folder / output_lock.LOCK_NAME).exists()


def test_a_released_lock_lets_the_next_run_in_at_once(tmp_path):
    folder = tmp_path / "out"
    first = _holder(folder, sleep=0.5)
    _wait_held(first)
    assert first.wait(timeout=30) == 0
    start = time.monotonic()
    with output_lock.OutputLock(folder):
        pass
    assert time.monotonic() - start < 5
