"""`checkpoint` state files: paths stay inside their folder, a missing newest
checkpoint is an error, an Estimator's absolute paths still work."""
import shutil

import pytest

from bert_tf1.modeling import checkpoints
from bert_tf1.modeling.checkpoints import state_file


def _checkpoint(fixtures_dir, prefix):
    prefix.parent.mkdir(parents=True, exist_ok=True)
    for path in (fixtures_dir / "tf1_tiny_classifier").glob("bert_model.ckpt.*"):
        shutil.copy(path, str(prefix) + path.name[len("bert_model.ckpt"):])
    return prefix


def _state(folder, *paths):
    (folder / "checkpoint").write_text(state_file.format_state(list(paths)))


def test_relative_and_absolute_paths_inside_the_folder(fixtures_dir, tmp_path):
    out = tmp_path / "out"
    _checkpoint(fixtures_dir, out / "model.ckpt-3")
    _state(out, "model.ckpt-3")
    assert checkpoints.newest_listed(out) == str(out / "model.ckpt-3")
    # The Estimator wrote absolute paths.
    _state(out, str(out / "model.ckpt-3"))
    assert checkpoints.newest_listed(out) == str(out / "model.ckpt-3")
    assert checkpoints.resolve_checkpoint(out) == str(out / "model.ckpt-3")


def test_absolute_paths_of_a_moved_folder_mean_this_folder(fixtures_dir, tmp_path):
    out = tmp_path / "moved"
    _checkpoint(fixtures_dir, out / "model.ckpt-3")
    _state(out, "/gone/original_output/model.ckpt-3")
    assert checkpoints.newest_listed(out) == str(out / "model.ckpt-3")


@pytest.mark.parametrize("listed", ["../other/model.ckpt-3", "sub/../../other/model.ckpt-3",
                                    "ABSOLUTE"])
def test_a_path_outside_the_folder_is_refused(fixtures_dir, tmp_path, listed):
    out, other = tmp_path / "out", tmp_path / "other"
    _checkpoint(fixtures_dir, other / "model.ckpt-3")
    out.mkdir()
    if listed == "ABSOLUTE":
        listed = str(other / "model.ckpt-3")
    _state(out, listed)
    # TensorFlow itself follows it.
    import tensorflow as tf
    assert tf.train.latest_checkpoint(str(out)) is not None
    with pytest.raises(checkpoints.CheckpointStateError) as error:
        checkpoints.newest_listed(out)
    message = str(error.value)
    assert str(out / "checkpoint") in message and listed in message
    assert "outside" in message
    with pytest.raises(checkpoints.CheckpointStateError):
        checkpoints.resolve_checkpoint(out)


def test_a_symlink_out_of_the_folder_is_refused(fixtures_dir, tmp_path):
    out, other = tmp_path / "out", tmp_path / "other"
    _checkpoint(fixtures_dir, other / "model.ckpt-3")
    out.mkdir()
    (out / "link").symlink_to(other)
    _state(out, "link/model.ckpt-3")
    with pytest.raises(checkpoints.CheckpointStateError, match="outside"):
        checkpoints.newest_listed(out)


def test_a_missing_newest_checkpoint_is_an_error_not_random_weights(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    _state(out, "model.ckpt-7")
    with pytest.raises(checkpoints.CheckpointStateError,
                       match=r"model.ckpt-7 as the newest checkpoint.*index is missing"):
        checkpoints.newest_listed(out)


def test_malformed_state_file_names_the_line(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-1"\nthis is not it\n')
    with pytest.raises(checkpoints.CheckpointStateError, match=r"checkpoint, line 2"):
        checkpoints.read_state(out)
    # TensorFlow's reader takes it for no state at all (a fresh start).
    import tensorflow as tf
    assert tf.train.get_checkpoint_state(str(out)) is None


def test_format_round_trips_through_tensorflows_reader(tmp_path):
    import tensorflow as tf

    names = ["model.ckpt-1", 'odd "name" é-2']
    _state(tmp_path, *names)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == str(tmp_path / names[-1])
    assert list(state.all_model_checkpoint_paths) == [str(tmp_path / n) for n in names]
    assert checkpoints.read_state(tmp_path).listed == tuple(
        str(tmp_path / n) for n in names)


def test_parse_reads_what_tensorflow_writes(tmp_path):
    import tensorflow as tf

    out = tmp_path / "out"
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(v=tf.Variable(1.0)), str(out), max_to_keep=2,
        checkpoint_name="model.ckpt")
    manager.save(checkpoint_number=4)
    manager.save(checkpoint_number=5)
    assert "all_model_checkpoint_timestamps" in (out / "checkpoint").read_text()
    state = checkpoints.read_state(out)
    assert state.newest == str(out / "model.ckpt-5")
    assert state.listed == (str(out / "model.ckpt-4"), str(out / "model.ckpt-5"))
