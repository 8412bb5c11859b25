"""A kill between a complete checkpoint and the state-file update: the rerun
adopts that checkpoint instead of deleting it."""
import os
import shutil

from bert_tf1.modeling import checkpoints, optimization, training
from bert_tf1.modeling.checkpoints import state_file
from tests.helpers.fixture_models import build_model


def _copy(fixture, prefix):
    for path in fixture.glob("bert_model.ckpt.*"):
        shutil.copy(path, str(prefix) + path.name[len("bert_model.ckpt"):])


def test_complete_unlisted_newest_checkpoint_is_adopted(fixtures_dir, tmp_path):
    fixture = fixtures_dir / "tf1_tiny_classifier"
    for step in (2, 4, 6):
        _copy(fixture, tmp_path / f"model.ckpt-{step}")
    # model.ckpt-6 was cut short by the kill: not complete, not adopted.
    data = tmp_path / "model.ckpt-6.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:1000])
    (tmp_path / "checkpoint").write_text(state_file.format_state(["model.ckpt-2"]))

    choice = training.choose_start(str(tmp_path))
    assert choice == training.CheckpointChoice(str(tmp_path / "model.ckpt-4"),
                                               "output_dir", listed=False)
    assert "adopted" in choice.describe()

    model = build_model(fixture)
    optimizer = optimization.create_optimizer(1e-4, 10, 1)
    training.restore_for_training(model, optimizer, choice)
    # Listed as the newest; the cut one and nothing else removed.
    assert checkpoints.read_state(tmp_path).listed == (
        str(tmp_path / "model.ckpt-2"), str(tmp_path / "model.ckpt-4"))
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index",
        "model.ckpt-4.data-00000-of-00001", "model.ckpt-4.index"]


def test_without_a_state_file_the_newest_complete_checkpoint_is_adopted(
        fixtures_dir, tmp_path):
    # Killed between the first checkpoint's rename and the first state write.
    _copy(fixtures_dir / "tf1_tiny_classifier", tmp_path / "model.ckpt-3")
    choice = training.choose_start(str(tmp_path), init_checkpoint=None)
    assert (choice.path, choice.source, choice.listed) == (
        str(tmp_path / "model.ckpt-3"), "output_dir", False)


def test_an_older_unlisted_checkpoint_is_still_removed(fixtures_dir, tmp_path):
    for step in (2, 4):
        _copy(fixtures_dir / "tf1_tiny_classifier", tmp_path / f"model.ckpt-{step}")
    (tmp_path / "checkpoint").write_text(state_file.format_state(["model.ckpt-4"]))
    choice = training.choose_start(str(tmp_path))
    assert choice.listed and choice.path == str(tmp_path / "model.ckpt-4")
