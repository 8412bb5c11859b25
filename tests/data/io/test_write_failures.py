"""Disk full and other OS errors while writing: one error naming the path and
the cause, the earlier file intact, every temp file of the failed write gone.

The full-disk cases mount a small tmpfs (root only; skipped elsewhere with the
reason); the same rules are also checked by raising the OS error by hand.
"""
import errno
import os
import subprocess
import uuid

import pytest

from bert_tf1.data.io import atomic
from bert_tf1.data.io.errors import OutputWriteError


@pytest.fixture
def full_disk(tmp_path):
    """An 8 MiB tmpfs (fill it with `_fill`); yields its path."""
    mount_point = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (disk-full test)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs",
                           str(mount_point)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)


def _fill(folder, leave=8 * 1024):
    stat = os.statvfs(folder)
    free = stat.f_bavail * stat.f_frsize
    with open(folder / "filler", "wb") as writer:
        writer.write(b"\0" * max(0, free - leave))


def _temp_files(folder):
    temp_dir = folder / atomic.TEMP_DIR_NAME
    return sorted(os.listdir(temp_dir)) if temp_dir.exists() else []


def test_full_disk_text_write_names_path_and_cause_and_keeps_old_file(full_disk):
    path = full_disk / "eval_results.txt"
    atomic.write_text_atomically(path, "old\n")
    _fill(full_disk)
    with pytest.raises(OutputWriteError) as error:
        atomic.write_text_atomically(path, "x" * 200_000)
    message = str(error.value)
    assert str(path) in message and "No space left on device" in message
    assert "\n" not in message
    assert path.read_text() == "old\n"
    assert _temp_files(full_disk) == []
    assert not (full_disk / atomic.TEMP_DIR_NAME).exists()


def test_full_disk_record_file_is_named_and_its_temp_file_removed(full_disk):
    from bert_tf1.data.io.tfrecord import RecordFileWriter

    path = full_disk / "train.tf_record"
    _fill(full_disk)
    with pytest.raises(OutputWriteError, match="train.tf_record.*No space left"):
        with RecordFileWriter(path) as writer:
            for _ in range(1000):
                writer.write(b"r" * 1000)
            writer.commit()
    assert not path.exists()
    assert _temp_files(full_disk) == []


def test_full_disk_checkpoint_save_keeps_the_last_one(full_disk, fixtures_dir):
    from bert_tf1.modeling import optimization, training
    from tests.helpers.fixture_models import build_model

    model = build_model(fixtures_dir / "tf1_tiny_classifier")
    optimizer = optimization.create_optimizer(1e-3, 10, 1)
    optimizer.build(model.trainable_variables)
    first = training.save_training_checkpoint(model, optimizer, str(full_disk))
    state = (full_disk / "checkpoint").read_text()
    optimizer.iterations.assign(1)
    _fill(full_disk)
    with pytest.raises(OutputWriteError) as error:
        training.save_training_checkpoint(model, optimizer, str(full_disk))
    assert "model.ckpt-1" in str(error.value)
    assert "No space left on device" in str(error.value)
    assert (full_disk / "checkpoint").read_text() == state
    assert training.latest_training_checkpoint(str(full_disk)) == first
    # Including the `.tempstate` files of TensorFlow's own saver.
    assert _temp_files(full_disk) == []
    assert sorted(p.name for p in full_disk.glob("model.ckpt-*")) == [
        "model.ckpt-0.data-00000-of-00001", "model.ckpt-0.index"]


def test_os_error_while_writing_is_one_error_and_every_temp_goes(tmp_path):
    path = tmp_path / "model.ckpt-5"
    with pytest.raises(OutputWriteError) as error:
        with atomic.atomic_output(path, suffixes=(".data-00000-of-00001",
                                                  ".index")) as temp:
            # What a saver leaves behind when the disk fills mid-write.
            open(temp + ".data-00000-of-00001.tempstate123", "wb").close()
            open(temp + ".index", "wb").close()
            raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), temp)
    assert str(path) in str(error.value)
    assert os.strerror(errno.EDQUOT) in str(error.value)
    assert os.listdir(tmp_path) == []


def test_a_bug_in_the_writer_stays_a_bug(tmp_path):
    path = tmp_path / "out.txt"
    with pytest.raises(TypeError):
        with atomic.atomic_output(path) as temp:
            open(temp, "w").close()
            raise TypeError("our own mistake")
    # Not turned into a user error, but cleaned up all the same.
    assert os.listdir(tmp_path) == []
    assert atomic.write_failure(FileNotFoundError(errno.ENOENT, "missing")) is None


def test_tensorflow_write_errors_are_recognised():
    import tensorflow as tf

    error = tf.errors.ResourceExhaustedError(
        None, None, "/x/.bert-tmp/1.a.h.partial.data; No space left on device")
    assert atomic.write_failure(error) == "No space left on device"
    assert atomic.write_failure(tf.errors.InvalidArgumentError(None, None, "bad")) is None
