"""model.fit training writes the Estimator's checkpoints and resumes exactly."""
import numpy as np
import pytest
import tensorflow as tf

from modeling import BertClassifier, BertConfig, checkpoints
from modeling.naming import tf1_name
from modeling.optimization import create_optimizer
from modeling.runtime import RuntimeOptions
from modeling.training import latest_training_checkpoint, run_training


def _dataset(config, batch_size=4, seq_length=8, seed=0):
    rng = np.random.default_rng(seed)
    count = 16
    features = {
        "input_ids": rng.integers(1, config.vocab_size, (count, seq_length)).astype("int32"),
        "input_mask": np.ones((count, seq_length), "int32"),
        "segment_ids": np.zeros((count, seq_length), "int32"),
    }
    labels = rng.integers(0, 3, (count,)).astype("int32")
    return tf.data.Dataset.from_tensor_slices((features, labels)).repeat().batch(
        batch_size, drop_remainder=True)


def _train(fixtures_dir, output_dir, steps, total_steps=6):
    config = BertConfig.from_json_file(fixtures_dir / "tf1_tiny_classifier/bert_config.json")
    model = BertClassifier(config, num_labels=3)
    optimizer = create_optimizer(1e-3, total_steps, 2)
    options = RuntimeOptions(save_checkpoints_steps=2, keep_checkpoint_max=2)
    result = run_training(model, optimizer, _dataset(config).take(steps), steps,
                          str(output_dir), options, batch_size=4,
                          init_checkpoint=str(fixtures_dir / "tf1_tiny_classifier"),
                          verbose=0)
    return model, optimizer, result


def test_checkpoints_have_original_names_and_resume(fixtures_dir, tmp_path):
    model, optimizer, result = _train(fixtures_dir, tmp_path, steps=3)
    assert result["global_step"] == 3
    latest = latest_training_checkpoint(str(tmp_path))
    assert latest == str(tmp_path / "model.ckpt-3")
    # keep_checkpoint_max=2: model.ckpt-2 and -3 remain.
    assert sorted(p.name for p in tmp_path.glob("model.ckpt-*.index")) == [
        "model.ckpt-2.index", "model.ckpt-3.index"]
    names = dict(tf.train.list_variables(latest))
    original = dict(tf.train.list_variables(str(fixtures_dir / "tf1_tiny_classifier/bert_model.ckpt")))
    assert set(names) == set(original)  # weights, adam_m/adam_v slots, global_step
    reader = tf.train.load_checkpoint(latest)
    assert int(reader.get_tensor("global_step")) == 3
    for variable in model.trainable_weights:
        name = tf1_name(variable)
        np.testing.assert_array_equal(reader.get_tensor(name), variable.numpy())
        slots = optimizer.slot_variables(variable)
        np.testing.assert_array_equal(reader.get_tensor(name + "/adam_m"), slots["adam_m"].numpy())

    # A restore of model.ckpt-3 gives back weights, slots and step exactly.
    check_model = BertClassifier(model.config, num_labels=3)
    check_optimizer = create_optimizer(1e-3, 6, 2)
    check_optimizer.build(check_model.trainable_variables)
    status = checkpoints.load_tf1_checkpoint(check_model, latest,
                                             optimizer=check_optimizer, verbose=False)
    assert status.optimizer_restored
    assert int(check_optimizer.iterations.numpy()) == 3
    for variable, restored in zip(model.trainable_weights, check_model.trainable_weights):
        np.testing.assert_array_equal(variable.numpy(), restored.numpy())
        np.testing.assert_array_equal(
            optimizer.slot_variables(variable)["adam_v"].numpy(),
            check_optimizer.slot_variables(restored)["adam_v"].numpy())

    # The same command again with more steps resumes from step 3.
    _, _, resumed = _train(fixtures_dir, tmp_path, steps=5)
    assert resumed["global_step"] == 5
    assert latest_training_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-5")
    assert sorted(p.name for p in tmp_path.glob("model.ckpt-*.index")) == [
        "model.ckpt-4.index", "model.ckpt-5.index"]
    assert list(tmp_path.glob("events.out.tfevents.*")) or list(tmp_path.glob("train/events*"))


def test_nothing_to_do_when_checkpoint_is_past_num_train_steps(fixtures_dir, tmp_path):
    _train(fixtures_dir, tmp_path, steps=2)
    _, _, result = _train(fixtures_dir, tmp_path, steps=2)
    assert result == {"loss": None, "global_step": 2}


def test_resuming_from_another_models_output_dir_says_so(fixtures_dir, tmp_path):
    _train(fixtures_dir, tmp_path, steps=1)
    config = BertConfig.from_dict(dict(
        BertConfig.from_json_file(fixtures_dir / "tf1_tiny_classifier/bert_config.json").to_dict(),
        hidden_size=32))
    model = BertClassifier(config, num_labels=3)
    with pytest.raises(checkpoints.CheckpointMismatchError) as error:
        run_training(model, create_optimizer(1e-3, 4, 1), _dataset(config), 4,
                     str(tmp_path), RuntimeOptions(), batch_size=4, verbose=0)
    assert "Use a fresh --output_dir" in str(error.value)
    assert "model.ckpt-1" in str(error.value)


def test_saver_catches_multiples_passed_between_callbacks(monkeypatch):
    # With steps_per_execution > 1 (TPU iterations_per_loop) the callback
    # sees every k-th step only; a save is still due whenever a multiple of
    # save_checkpoints_steps was passed.
    from modeling import training

    saved = []
    monkeypatch.setattr(training, "save_training_checkpoint",
                        lambda model, optimizer, output_dir, keep: saved.append(
                            int(optimizer.iterations.numpy())))

    class FakeOptimizer:
        iterations = tf.Variable(5, dtype=tf.int64)

    saver = training.TF1CheckpointSaver(None, FakeOptimizer, "/unused", 4)
    saver.on_train_begin()  # resumed at step 5: nothing due yet
    for step in (7, 9, 11, 13, 18, 19):
        FakeOptimizer.iterations.assign(step)
        saver.on_train_batch_end(0)
    saver.on_train_end()
    assert saved == [9, 13, 18, 19]
