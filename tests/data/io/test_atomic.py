"""data.io.atomic: temp files where no glob finds them, removed on failure and by the next run."""
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from data.io import atomic


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


def _dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_next_run_removes_stale_temp_files_only(tmp_path):
    out = tmp_path / "a.tfrecord"
    temp_dir = tmp_path / atomic.TEMP_DIR_NAME
    temp_dir.mkdir()
    host = atomic._host()
    dead = temp_dir / ("%d.abc.%s.partial" % (_dead_pid(), host))
    dead_ckpt = temp_dir / ("%d.abd.%s.partial.index" % (_dead_pid(), host))
    alive = temp_dir / ("%d.abe.%s.partial" % (os.getpid(), host))
    legacy = tmp_path / ".a.tfrecord.tmp-0123abcd"
    legacy2 = tmp_path / "a.tfrecord.tmp-77"
    for path in (dead, dead_ckpt, alive, legacy, legacy2):
        path.write_bytes(b"x")
    removed = atomic.remove_stale_temp_files(out)
    assert sorted(removed) == sorted(
        str(p) for p in (dead, dead_ckpt, legacy, legacy2))
    assert os.listdir(temp_dir) == [alive.name]
    # Files of other outputs' legacy names are not touched.
    other = tmp_path / ".b.tfrecord.tmp-1"
    other.write_bytes(b"x")
    atomic.remove_stale_temp_files(out)
    assert other.exists()


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
    # a live process's temp file is not taken for stale, a dead one's is.
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
    live = atomic.temp_path_for(folder + "/c.txt")
    dead = "%s/%s/%d.abc.%s.partial" % (folder, atomic.TEMP_DIR_NAME,
                                        _dead_pid(), atomic._host())
    for path in (live, dead):
        with tf.io.gfile.GFile(path, "w") as writer:
            writer.write("x")
    assert atomic.remove_stale_temp_files(folder + "/c.txt") == [dead]
    assert tf.io.gfile.exists(live)


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
