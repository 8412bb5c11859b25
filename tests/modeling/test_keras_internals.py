"""Contract tests for bert_tf1/modeling/keras_internals.py: one per private hook.

Each test checks that the hook exists, has the signature we call it with,
and does what the project relies on, so a Keras or TensorFlow upgrade that
changes one fails here, by name, before a training run would.
"""
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import keras_internals
from bert_tf1.modeling.optimization import AdamWeightDecay, create_optimizer
from tests.helpers.script_runner import run_code


def _variables():
    return [keras.Variable(np.ones((2, 3), "float32"), name="kernel"),
            keras.Variable(np.zeros((3,), "float32"), name="bias")]


class _Recorder(keras.optimizers.SGD):
    """SGD that records which private hooks Keras calls, and with what."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.calls = []

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        self.calls.append("_backend_update_step")
        return super()._backend_update_step(grads, trainable_variables,
                                            learning_rate)

    def _clip_gradients(self, grads):
        self.calls.append("_clip_gradients")
        return super()._clip_gradients(grads)

    def _get_current_learning_rate(self):
        self.calls.append("_get_current_learning_rate")
        return super()._get_current_learning_rate()


@pytest.mark.parametrize("name", sorted(keras_internals.OVERRIDDEN_HOOKS))
def test_overridden_hook_exists_with_the_parameters_keras_passes(name):
    assert keras_internals.hook_parameters(name) == \
        keras_internals.OVERRIDDEN_HOOKS[name]


def test_keras_calls_every_overridden_hook_when_applying_gradients():
    optimizer = _Recorder(learning_rate=0.5)
    variables = _variables()
    optimizer.apply([tf.ones((2, 3)), tf.ones((3,))], variables)
    assert set(optimizer.calls) == set(keras_internals.OVERRIDDEN_HOOKS)
    np.testing.assert_allclose(variables[0].numpy(), 0.5)


def test_variable_key_and_index_follow_build_order():
    optimizer = AdamWeightDecay(learning_rate=1e-3)
    variables = _variables()
    optimizer.build(variables)
    assert keras_internals.variable_key(optimizer, variables[1]) == \
        keras_internals.variable_key(optimizer, variables[1])
    assert keras_internals.variable_key(optimizer, variables[0]) != \
        keras_internals.variable_key(optimizer, variables[1])
    assert [keras_internals.variable_index(optimizer, v) for v in variables] \
        == [0, 1]
    assert keras_internals.variable_index(optimizer, _variables()[0]) is None


def test_learning_rate_setting_is_the_schedule_given():
    optimizer = create_optimizer(1e-3, 10, 2)
    setting = keras_internals.learning_rate_setting(optimizer)
    assert isinstance(setting, keras.optimizers.schedules.LearningRateSchedule)
    # Step 1 of warm-up 2: half the peak rate.
    assert float(setting(1)) == pytest.approx(5e-4)


def test_batch_counter_counts_batches_under_accumulation():
    optimizer = create_optimizer(1e-3, 10, 0, gradient_accumulation_steps=2)
    variables = _variables()
    optimizer.build(variables)
    counter = keras_internals.batch_counter(optimizer)
    assert counter.dtype == "int64"
    for _ in range(3):
        optimizer.apply([tf.ones((2, 3)), tf.ones((3,))], variables)
    # Three batches, one full update: `iterations` = batches // 2.
    assert int(counter.numpy()) == 3
    assert int(optimizer.iterations.numpy()) == 1


def test_all_reduce_sum_and_distributed_update_apply_update_step():
    optimizer = keras.optimizers.SGD(learning_rate=0.25)
    variables = _variables()
    optimizer.build(variables)
    pairs = keras_internals.all_reduce_sum_gradients(
        optimizer, [(tf.ones((2, 3)), variables[0].value),
                    (tf.ones((3,)), variables[1].value)])
    assert [tuple(g.shape) for g, _ in pairs] == [(2, 3), (3,)]
    keras_internals.distributed_update(optimizer, pairs, tf.constant(0.25))
    np.testing.assert_allclose(variables[0].numpy(), 0.75)
    np.testing.assert_allclose(variables[1].numpy(), -0.25)


def test_all_layers_reaches_nested_layers():
    inner = keras.Sequential([keras.layers.LayerNormalization(name="ln")],
                             name="inner")
    outer = keras.Sequential([keras.layers.Dense(2), inner], name="outer")
    outer.build((None, 3))
    names = [layer.name for layer in keras_internals.all_layers(outer)]
    assert names[0] == "outer"
    assert "ln" in names and "inner" in names


def test_seed_states_replay_dropout_and_loss_tracker_is_the_loss_log():
    model = keras.Sequential([keras.layers.Dropout(0.5, name="a"),
                              keras.Sequential([keras.layers.Dropout(0.5)])])
    model.build((None, 64))
    states = keras_internals.seed_states(model)
    assert len(states) == 2
    saved = [np.array(state.numpy()) for state in states]
    x = np.ones((2, 64), "float32")
    first = model(x, training=True).numpy()
    assert not np.array_equal(model(x, training=True).numpy(), first)
    for state, value in zip(states, saved):
        state.assign(value)
    np.testing.assert_array_equal(model(x, training=True).numpy(), first)
    model.compile(loss="mse")
    assert keras_internals.loss_tracker(model) in model.metrics
    assert keras_internals.loss_tracker(model).name == "loss"


def test_multi_worker_probes_on_a_local_strategy():
    assert keras_internals.in_multi_worker_mode(tf.distribute.get_strategy()) \
        is False
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0"])
    assert keras_internals.in_multi_worker_mode(mirrored) is False


def test_num_workers_of_a_multi_worker_strategy():
    # The strategy must be the first TensorFlow work of a process: a fresh
    # one, without TF_CONFIG (one worker).
    code = ("import tensorflow as tf\n"
            "strategy = tf.distribute.MultiWorkerMirroredStrategy()\n"
            "from bert_tf1.modeling import keras_internals as k\n"
            "print(k.num_workers(strategy), k.in_multi_worker_mode(strategy))\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    env.pop("TF_CONFIG", None)
    result = run_code(code, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-2:] == ["1", "False"]


def test_a_missing_hook_is_named_in_the_error():
    class Bare:
        pass

    with pytest.raises(keras_internals.KerasInternalsError,
                       match="'_var_key'.*keras_internals"):
        keras_internals.variable_key(Bare(), None)


def test_checkpoint_state_proto_is_what_tensorflow_reads(tmp_path):
    # The class we write with is the one tf.train.get_checkpoint_state returns.
    from google.protobuf import text_format

    proto = keras_internals.checkpoint_state_proto()(
        model_checkpoint_path="model.ckpt-2",
        all_model_checkpoint_paths=["model.ckpt-1", "model.ckpt-2"])
    (tmp_path / "checkpoint").write_text(text_format.MessageToString(proto))
    read = tf.train.get_checkpoint_state(str(tmp_path))
    assert type(read) is keras_internals.checkpoint_state_proto()
    assert read.model_checkpoint_path.endswith("model.ckpt-2")
    assert len(read.all_model_checkpoint_paths) == 2


def test_lora_base_kernel_is_the_frozen_w_under_keras_kernel():
    # Keras's Dense.kernel is W + (alpha / rank) A B; the hook gives W.
    dense = keras.layers.Dense(3)
    dense.build((None, 4))
    w = dense.kernel.numpy()
    dense.enable_lora(2, lora_alpha=6)
    dense.lora_kernel_b.assign(np.ones((2, 3), "float32"))
    base = keras_internals.lora_base_kernel(dense)
    assert not base.trainable
    np.testing.assert_array_equal(base.numpy(), w)
    np.testing.assert_allclose(
        dense.kernel.numpy(),
        w + 3.0 * dense.lora_kernel_a.numpy() @ np.ones((2, 3)), rtol=1e-6,
        atol=1e-6)  # float32 sums against float64 ones: an entry near 0


def test_a_stopped_fit_leaves_no_epoch_iterator_to_the_garbage_collector():
    """fit_epoch_generator finds the suspended epoch generator of a fit a
    callback stopped; EndStoppedEpoch closes it, so nothing of the epoch is
    left in a reference cycle (gc disabled: what is alive is not garbage
    yet)."""
    import gc
    import sys

    from keras.src.trainers.epoch_iterator import EpochIterator

    found = []

    class StopAtOnce(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            self.model.stop_training = True

        def on_train_end(self, logs=None):
            found.append(keras_internals.fit_epoch_generator(sys._getframe()))

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    dataset = tf.data.Dataset.from_tensors(
        (np.ones((4, 2), "float32"), np.ones((4, 1), "float32"))).repeat()
    gc.collect()
    gc.disable()
    try:
        model.fit(dataset, steps_per_epoch=5, verbose=0, shuffle=False,
                  callbacks=keras_internals.with_end_stopped_epoch([StopAtOnce()]))
        alive = [o for o in gc.get_objects() if isinstance(o, EpochIterator)]
    finally:
        gc.enable()
    assert len(found) == 1 and found[0] is not None
    assert alive == []
    assert keras_internals.fit_epoch_generator(sys._getframe()) is None


def _traces(function):
    return len(function._list_all_concrete_functions())


def test_trace_predict_for_gives_batches_of_two_lengths_one_trace():
    """Keras' predict traces a second time for a second batch shape; traced
    for the dataset's spec first, both lengths find one trace, with the
    same outputs."""
    def model():
        inputs = keras.Input((None,), dtype="int32")
        outputs = keras.layers.Embedding(10, 3)(inputs)
        built = keras.Model(inputs, keras.ops.sum(outputs, axis=1))
        built.set_weights([np.arange(30, dtype="float32").reshape(10, 3)])
        return built

    batches = [np.ones((2, 8), "int32"), np.full((2, 16), 2, "int32")]
    dataset = tf.data.Dataset.from_generator(
        lambda: iter(batches),
        output_signature=tf.TensorSpec([None, None], tf.int32))
    plain, traced = model(), model()
    expected = plain.predict(dataset, verbose=0)
    assert _traces(plain.predict_function) == 2   # what the hook avoids
    keras_internals.trace_predict_for(traced, dataset)
    np.testing.assert_array_equal(traced.predict(dataset, verbose=0), expected)
    assert _traces(traced.predict_function) == 1
    # Arrays (no dataset) and an eager model: nothing is traced ahead.
    eager = model()
    eager.run_eagerly = True
    keras_internals.trace_predict_for(eager, dataset)
    keras_internals.trace_predict_for(plain, batches[0])
    assert eager.predict_function is None
