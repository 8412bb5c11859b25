"""bert_tf1.data.io.atomic: temp files where no glob finds them, removed on failure and by the next run."""
import os
import shutil
import subprocess
import sys

import pytest
import tensorflow as tf

from bert_tf1.data.io import atomic
from tests.conftest import REPO_ROOT


def test_write_leaves_only_the_output(tmp_path):
    out = tmp_path / "eval_results.txt"
    atomic.write_text_atomically(out, "a = 1\n")
    assert out.read_text() == "a = 1\n"
    assert os.listdir(tmp_path) == ["eval_results.txt"]
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(out).st_mode & 0o777 == 0o666 & ~umask


def test_failure_keeps_old_file_and_removes_temp(tmp_path):
    out = tmp_path / "train.tf_record"
    out.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic.atomic_output(out) as temp:
            with open(temp, "wb") as writer:
                writer.write(b"half")
            raise RuntimeError("killed")
    assert out.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["train.tf_record"]


def test_temp_file_is_invisible_to_user_globs(tmp_path):
    out = tmp_path / "part-0.tfrecord"
    temp = atomic.temp_path_for(out)
    open(temp, "wb").close()
    assert os.path.dirname(temp) == str(tmp_path / atomic.TEMP_DIR_NAME)
    assert "tfrecord" not in os.path.basename(temp)
    assert tf.io.gfile.glob(str(tmp_path / "*tfrecord*")) == []
    assert atomic.is_temp_path(temp)
    assert not atomic.is_temp_path(str(out))
    os.remove(temp)


# A writer that takes a temp name, writes a checkpoint-like family of
# files under it and reports it. Then, with `rounds`, it waits for the go
# file, makes that many atomic writes of its own (each cleans the folder's
# `.bert-tmp/` first) and reports whether its family survived; it ends when
# its stdin closes, or at once (without any cleanup) with `die`.
_WRITER = """
import os, sys, time
sys.path.insert(0, {root!r})
from bert_tf1.data.io import atomic
output = {output!r}
temp = atomic.temp_path_for(output)
family = [temp + suffix for suffix in ("", ".index", ".data-00000-of-00001")]
for path in family:
    with open(path, "w") as writer:
        writer.write("x")
print(temp, flush=True)
if {die}:
    os._exit(0)
if {rounds}:
    while not os.path.exists(output + ".go"):
        time.sleep(0.01)
    for _ in range({rounds}):
        atomic.write_text_atomically(output + ".txt", "x")
    print("LOST" if [p for p in family if not os.path.exists(p)] else "KEPT",
          flush=True)
sys.stdin.read()
"""


def _writer(output, die=False, rounds=0, argv=("{python}",)):
    code = _WRITER.format(root=str(REPO_ROOT), output=str(output), die=die,
                          rounds=rounds)
    argv = [arg.format(python=sys.executable) for arg in argv] + ["-c", code]
    process = subprocess.Popen(argv, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    return process, process.stdout.readline().strip()


def _end(process):
    if process is not None:
        process.stdin.close()
        if process.wait(timeout=60) != 0:
            process.kill()


def test_next_write_removes_temp_files_of_ended_writers_only(tmp_path):
    out = tmp_path / "a.tfrecord"
    dead, dead_temp = _writer(out, die=True)
    dead.wait()
    alive, alive_temp = _writer(out)
    try:
        own = atomic.temp_path_for(out)
        open(own, "w").close()
        temp_dir = tmp_path / atomic.TEMP_DIR_NAME
        unmarked = temp_dir / "1.abc.somehost.partial"   # no marker, fresh
        unmarked.write_bytes(b"x")
        before = set(os.listdir(temp_dir))
        removed = atomic.remove_stale_temp_files(out)
        stem = os.path.basename(dead_temp)[:-len(".partial")]
        assert sorted(os.path.basename(p) for p in removed) == sorted(
            name for name in before if name.startswith(stem + "."))
        assert len(removed) == 4   # the three files and the marker
        assert os.path.exists(alive_temp + ".index") and os.path.exists(own)
        assert unmarked.exists()
        atomic.remove_quietly(own)
    finally:
        _end(alive)


def _unshare_available():
    if shutil.which("unshare") is None:
        return "no unshare command"
    result = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc",
                             "true"], capture_output=True)
    return None if result.returncode == 0 else (
        "unshare --pid needs root: " + result.stderr.decode()[:100])


def test_writers_in_two_pid_namespaces_keep_each_others_files(tmp_path):
    # Two writers without an output_dir lock, on one host name, each in a
    # PID namespace of its own where the other's pid does not exist (the
    # second one's writer is pid 4, the first one's pid 2): each cleans the
    # folder while the other writes.
    reason = _unshare_available()
    if reason:
        pytest.skip(reason)
    unshare = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child",
               "sh", "-c"]
    first = second = None
    try:
        first, first_temp = _writer(
            tmp_path / "a.tfrecord", rounds=20,
            argv=unshare + ['"$0" "$@"; true', "{python}"])
        second, second_temp = _writer(
            tmp_path / "b.tfrecord", rounds=20,
            argv=unshare + ['sleep 600 & sleep 600 & "$0" "$@"; kill $!',
                            "{python}"])
        for output in ("a", "b"):
            (tmp_path / f"{output}.tfrecord.go").touch()
        assert first.stdout.readline().strip() == "KEPT"
        assert second.stdout.readline().strip() == "KEPT"
        for temp in (first_temp, second_temp):
            assert os.path.exists(temp + ".data-00000-of-00001")
    finally:
        _end(first)
        _end(second)
    # Once both ended, the next write removes what they left.
    atomic.write_text_atomically(tmp_path / "a.tfrecord.txt", "a")
    assert not (tmp_path / atomic.TEMP_DIR_NAME).exists()


def test_old_temp_of_another_host_is_removed_after_a_day(tmp_path):
    temp_dir = tmp_path / atomic.TEMP_DIR_NAME
    temp_dir.mkdir()
    fresh = temp_dir / "1.abc.otherhost.partial"
    old = temp_dir / "2.abc.otherhost.partial"
    fresh.write_bytes(b"x")
    old.write_bytes(b"x")
    two_days_ago = os.stat(old).st_mtime - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    assert atomic.remove_stale_temp_files(tmp_path / "x") == [str(old)]
    assert fresh.exists()


def test_multi_file_output_moves_index_last(tmp_path):
    prefix = tmp_path / "model.ckpt-3"
    with atomic.atomic_output(prefix, suffixes=(".data", ".index")) as temp:
        for suffix in (".data", ".index"):
            with open(temp + suffix, "w") as writer:
                writer.write(suffix)
    assert sorted(os.listdir(tmp_path)) == ["model.ckpt-3.data",
                                            "model.ckpt-3.index"]


def test_remote_paths_go_through_gfile():
    # TF's in-memory file system stands in for gs:// (the same tf.io.gfile
    # branch): the temp file lives under .bert-tmp/, a failure removes it,
    # a temp file is not taken for stale before it is a day old.
    folder = "ram://atomic_test_%d" % os.getpid()
    atomic.write_text_atomically(folder + "/eval_results.txt", "a = 1\n")
    with tf.io.gfile.GFile(folder + "/eval_results.txt") as reader:
        assert reader.read() == "a = 1\n"
    with pytest.raises(RuntimeError):
        with atomic.atomic_output(folder + "/b.txt") as temp:
            assert temp.startswith(folder + "/" + atomic.TEMP_DIR_NAME + "/")
            with tf.io.gfile.GFile(temp, "w") as writer:
                writer.write("half")
            raise RuntimeError("killed")
    assert not tf.io.gfile.exists(folder + "/b.txt")
    assert tf.io.gfile.glob(folder + "/" + atomic.TEMP_DIR_NAME + "/*") == []
    # No flock on remote folders: only the age rule removes temp files
    # there (this in-memory file system has no modification times: never).
    left = "%s/%s/1.abc.%s.partial" % (folder, atomic.TEMP_DIR_NAME,
                                       atomic._host())
    with tf.io.gfile.GFile(left, "w") as writer:
        writer.write("x")
    assert atomic.remove_stale_temp_files(folder + "/c.txt") == []
    assert tf.io.gfile.exists(left)


def _write_two_files(folder):
    os.makedirs(folder)
    for name in ("saved_model.pb", "config.json"):
        with open(os.path.join(folder, name), "w") as writer:
            writer.write(name)


def test_directory_appears_whole_and_is_never_replaced(tmp_path):
    out = tmp_path / "export"
    assert atomic.write_directory_atomically(str(out) + "/", _write_two_files) == str(out)
    assert sorted(os.listdir(out)) == ["config.json", "saved_model.pb"]
    assert os.listdir(tmp_path) == ["export"]
    with pytest.raises(FileExistsError, match="export already exists"):
        atomic.write_directory_atomically(out, _write_two_files)
    assert sorted(os.listdir(out)) == ["config.json", "saved_model.pb"]


def test_failed_directory_write_leaves_nothing(tmp_path):
    def fail_halfway(folder):
        _write_two_files(folder)
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        atomic.write_directory_atomically(tmp_path / "export", fail_halfway)
    assert os.listdir(tmp_path) == []
