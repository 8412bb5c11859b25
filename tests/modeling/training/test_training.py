"""model.fit training writes the Estimator's checkpoints and resumes exactly."""
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints
from bert_tf1.modeling.naming import tf1_name
from bert_tf1.modeling.optimization import create_optimizer
from bert_tf1.modeling.training.runtime import RuntimeOptions
from bert_tf1.modeling.training import (GOOD_STEPS, LOSS_SCALE, latest_training_checkpoint,
                                        run_training)


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
    assert list(tmp_path.glob("events.out.tfevents.*"))  # TensorBoard, in output_dir


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
    assert "use a fresh --output_dir" in str(error.value)
    assert "model.ckpt-1" in str(error.value)


def test_a_callback_stop_frees_the_input_iterator_without_gc(fixtures_dir, tmp_path):
    """A run a callback stops leaves no Keras epoch iterator in a reference
    cycle (freeing its tf.data iterator from a garbage collection waits up
    to 60 s: loop.EndStoppedEpoch)."""
    import gc

    import keras
    from keras.src.trainers.epoch_iterator import EpochIterator

    class StopAtStep2(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 1:
                self.model.stop_training = True

    config = BertConfig.from_json_file(fixtures_dir / "tf1_tiny_classifier/bert_config.json")
    model = BertClassifier(config, num_labels=3)
    optimizer = create_optimizer(1e-3, 6, 2)
    gc.collect()
    gc.disable()
    try:
        result = run_training(model, optimizer, _dataset(config), 6, str(tmp_path),
                              RuntimeOptions(save_checkpoints_steps=2), batch_size=4,
                              verbose=0, callbacks=[StopAtStep2()])
        alive = [o for o in gc.get_objects() if isinstance(o, EpochIterator)]
    finally:
        gc.enable()
    assert result["global_step"] == 2
    assert alive == []


def test_saver_catches_multiples_passed_between_callbacks(monkeypatch):
    # With steps_per_execution > 1 (TPU iterations_per_loop) the callback
    # sees every k-th step only; a save is still due whenever a multiple of
    # save_checkpoints_steps was passed.
    from bert_tf1.modeling.training import loop

    saved = []
    monkeypatch.setattr(loop, "save_training_checkpoint",
                        lambda model, optimizer, output_dir, keep: saved.append(
                            int(optimizer.iterations.numpy())))

    class FakeOptimizer:
        iterations = tf.Variable(5, dtype=tf.int64)

    saver = loop.TF1CheckpointSaver(None, FakeOptimizer, "/unused", 4)
    saver.on_train_begin()  # resumed at step 5: nothing due yet
    for step in (7, 9, 11, 13, 18, 19):
        FakeOptimizer.iterations.assign(step)
        saver.on_train_batch_end(0)
    saver.on_train_end()
    assert saved == [9, 13, 18, 19]


# ----- precision, gradient accumulation ---------------------------------------

def _no_dropout_classifier(fixtures_dir):
    config = BertConfig.from_json_file(fixtures_dir / "tf1_tiny_classifier/bert_config.json")
    config = BertConfig.from_dict(dict(config.to_dict(), hidden_dropout_prob=0.0,
                                       attention_probs_dropout_prob=0.0))
    model = BertClassifier(config, num_labels=3)
    model.dropout.rate = 0.0
    return model


def _cycle(config, batch_size, count=8):
    # `count` examples again and again, in order: a restart reads the same.
    rng = np.random.default_rng(1)
    features = {
        "input_ids": rng.integers(1, config.vocab_size, (count, 8)).astype("int32"),
        "input_mask": np.ones((count, 8), "int32"),
        "segment_ids": np.zeros((count, 8), "int32"),
    }
    labels = rng.integers(0, 3, (count,)).astype("int32")
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(
        batch_size, drop_remainder=True).repeat()


def _train_accumulating(fixtures_dir, output_dir, steps, accumulation, batch_size):
    from bert_tf1.modeling.optimization import create_optimizer
    model = _no_dropout_classifier(fixtures_dir)
    options = RuntimeOptions(save_checkpoints_steps=1, keep_checkpoint_max=0,
                             gradient_accumulation_steps=accumulation)
    optimizer = create_optimizer(
        1e-3, 4, 1, optimizer_type=options.optimizer,
        gradient_accumulation_steps=options.gradient_accumulation_steps)
    result = run_training(model, optimizer, _cycle(model.config, batch_size), steps,
                          str(output_dir), options, batch_size=batch_size,
                          init_checkpoint=str(fixtures_dir / "tf1_tiny_classifier"),
                          verbose=0)
    return model, result


@pytest.mark.slow
def test_gradient_accumulation_averages_batches_and_resumes(fixtures_dir, tmp_path):
    # 2 steps of 2 accumulated batches of 4 == 2 steps of one batch of 8.
    big, big_result = _train_accumulating(fixtures_dir, tmp_path / "big", 2, 1, 8)
    small, small_result = _train_accumulating(fixtures_dir, tmp_path / "acc", 2, 2, 4)
    assert big_result["global_step"] == small_result["global_step"] == 2
    reader = tf.train.load_checkpoint(str(tmp_path / "acc/model.ckpt-2"))
    assert int(reader.get_tensor("global_step")) == 2  # optimizer steps
    worst = max(float(np.max(np.abs(a.numpy() - b.numpy())))
                for a, b in zip(big.trainable_weights, small.trainable_weights))
    assert worst < 1e-6, worst
    # Stopped after step 1 and resumed: the same as straight through.
    _train_accumulating(fixtures_dir, tmp_path / "resumed", 1, 2, 4)
    resumed, result = _train_accumulating(fixtures_dir, tmp_path / "resumed", 2, 2, 4)
    assert result["global_step"] == 2
    worst = max(float(np.max(np.abs(a.numpy() - b.numpy())))
                for a, b in zip(small.trainable_weights, resumed.trainable_weights))
    assert worst < 1e-6, worst


def _with_policy(policy, function):
    import keras
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(policy)
    try:
        return function()
    finally:
        keras.config.set_dtype_policy(previous)


def test_bfloat16_trains_on_cpu_with_float32_checkpoints(fixtures_dir, tmp_path):
    def train():
        model = _no_dropout_classifier(fixtures_dir)
        assert model.compute_dtype == "bfloat16"
        optimizer = create_optimizer(1e-3, 2, 1)
        return run_training(model, optimizer, _cycle(model.config, 4), 2,
                            str(tmp_path), RuntimeOptions(mixed_precision="bfloat16"),
                            batch_size=4, verbose=0,
                            init_checkpoint=str(fixtures_dir / "tf1_tiny_classifier"))

    result = _with_policy("mixed_bfloat16", train)
    assert result["global_step"] == 2 and np.isfinite(result["loss"])
    assert 0.5 < result["loss"] < 2.0  # ~ln(3) for 3 random labels
    reader = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-2"))
    assert reader.get_variable_to_dtype_map()["output_weights"] == tf.float32
    assert LOSS_SCALE not in reader.get_variable_to_shape_map()


@pytest.mark.slow
def test_float16_loss_scale_is_saved_and_resumed(fixtures_dir, tmp_path):
    def train(steps):
        model = _no_dropout_classifier(fixtures_dir)
        optimizer = create_optimizer(1e-3, 2, 1)
        run_training(model, optimizer, _cycle(model.config, 4), steps,
                     str(tmp_path), RuntimeOptions(mixed_precision="float16"),
                     batch_size=4, verbose=0,
                     init_checkpoint=str(fixtures_dir / "tf1_tiny_classifier"))
        reader = tf.train.load_checkpoint(str(tmp_path / f"model.ckpt-{steps}"))
        return float(reader.get_tensor(LOSS_SCALE)), int(reader.get_tensor(GOOD_STEPS))

    scale, good = _with_policy("mixed_float16", lambda: train(1))
    assert scale > 1 and good >= 1
    # Resumed: the scale carries on (a fresh one would restart the count at 1).
    assert _with_policy("mixed_float16", lambda: train(2)) == (scale, good + 1)
    # Loaders that do not know the entries skip them.
    status = checkpoints.load_tf1_checkpoint(
        _no_dropout_classifier(fixtures_dir), str(tmp_path), verbose=False)
    assert not status.unused and not status.missing
