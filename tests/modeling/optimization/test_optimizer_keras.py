"""bert_tf1/modeling/optimization/'s state and Keras integration: slots before the
first step, resuming from (and saving back) the original's checkpoints,
config round trip, model.fit, loss scaling, mixed precision, MirroredStrategy.
"""
import os
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints
from bert_tf1.modeling.checkpoints.loading import optimizer_slots
from bert_tf1.modeling.naming import tf1_name
from bert_tf1.modeling.optimization import AdamWeightDecay, create_optimizer
from tests.helpers.optimizer_reference import (ToyModel, numpy_adamw_step,
                                       original_lr, toy_data, weights_by_name)
from tests.helpers.script_runner import run_code


# ----- slots, resume, config -----------------------------------------------------

def test_slots_exist_before_first_step_and_resume():
    model = ToyModel(name="toy")
    variables = model.trainable_variables
    optimizer = create_optimizer(1e-3, 100, 10)
    with pytest.raises(ValueError, match="build"):
        optimizer.slot_variables(variables[0])
    optimizer.build(variables)
    kernel = weights_by_name(model)["block_0/dense/kernel"]
    slots = optimizer.slot_variables(kernel)
    assert sorted(slots) == ["adam_m", "adam_v"]
    assert slots["adam_m"].shape == kernel.shape
    assert np.all(slots["adam_v"].numpy() == 0)
    named = optimizer_slots(optimizer, kernel)
    assert named["block_0/dense/kernel/adam_m"] is slots["adam_m"]
    with pytest.raises(ValueError, match="not built with"):
        optimizer.slot_variables(keras.Variable(np.zeros(2), name="stray"))

    # A resumed run: slots and global_step assigned, then one step.
    rng = np.random.default_rng(3)
    m0 = rng.normal(0, 1, kernel.shape)
    v0 = rng.uniform(0.1, 1, kernel.shape)
    slots["adam_m"].assign(m0)
    slots["adam_v"].assign(v0)
    optimizer.iterations.assign(50)
    p0 = kernel.numpy().astype(np.float64)
    grad = rng.normal(0, 0.01, kernel.shape)
    grads = [tf.zeros(v.shape) for v in variables]
    grads[[id(v) for v in variables].index(id(kernel))] = tf.constant(
        grad, tf.float32)
    optimizer.apply(grads, variables)
    params, moments = {"k": p0}, {"k": (m0, v0)}
    numpy_adamw_step(params, moments, {"k": grad}, original_lr(51, 1e-3, 100, 10),
                     {"k": True}, clip_norm=1.0)
    np.testing.assert_allclose(kernel.numpy(), params["k"], rtol=1e-6, atol=1e-7)
    assert int(optimizer.iterations.numpy()) == 51


def test_resume_from_original_checkpoint_and_save_it_back(fixtures_dir,
                                                         tmp_path):
    """The slots and global_step the original saved come back through
    `slot_variables`/`iterations`, and are written back unchanged."""
    fixture = fixtures_dir / "tf1_tiny_classifier"
    model = BertClassifier(
        BertConfig.from_json_file(fixture / "bert_config.json"), num_labels=3)
    optimizer = create_optimizer(1e-3, 10, 2, model=model)
    optimizer.build(model.trainable_variables)
    status = checkpoints.load_tf1_checkpoint(model, fixture,
                                             optimizer=optimizer,
                                             verbose=False)
    assert status.optimizer_restored
    assert int(optimizer.iterations.numpy()) == 2
    # The next (third) update uses the rate of step 3.
    assert float(optimizer.learning_rate) == pytest.approx(7e-4, rel=1e-6)
    reader = tf.train.load_checkpoint(str(fixture / "bert_model.ckpt"))
    slots = {name: slot for variable in model.trainable_variables
             for name, slot in optimizer_slots(optimizer, variable).items()}
    assert len(slots) == 2 * len(model.trainable_variables)
    for name, slot in slots.items():
        np.testing.assert_array_equal(slot.numpy(), reader.get_tensor(name))
    checkpoints.save_tf1_checkpoint(model, str(tmp_path / "model.ckpt-2"),
                                    optimizer=optimizer)
    written = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-2"))
    names = reader.get_variable_to_shape_map()
    assert written.get_variable_to_shape_map() == names
    for name in names:
        np.testing.assert_array_equal(written.get_tensor(name),
                                      reader.get_tensor(name), err_msg=name)


def test_config_round_trip_and_errors():
    optimizer = create_optimizer(3e-5, 1000, 100, weight_decay_rate=0.02)
    clone = AdamWeightDecay.from_config(optimizer.get_config())
    assert clone.weight_decay_rate == 0.02 and clone.global_clipnorm == 1.0
    assert clone.epsilon == 1e-6 and clone.schedule_step_offset == 1
    assert float(clone.learning_rate) == pytest.approx(3e-7, rel=1e-5)
    with pytest.raises(ValueError, match="optimizer_type"):
        create_optimizer(1e-3, 10, 1, optimizer_type="sgd")
    with pytest.raises(ValueError, match="weight_decay_rate"):
        AdamWeightDecay(weight_decay=0.01)


def test_optimizers_and_schedule_register_in_the_one_package():
    # The layers' package (`bert_tf1.modeling.layers.serialization.PACKAGE`): a
    # `.keras` file finds them by `bert_tf1>ClassName`.
    from bert_tf1.modeling.optimization import LambWeightDecay
    for optimizer in (create_optimizer(3e-5, 1000, 100),
                      create_optimizer(3e-5, 1000, 100, optimizer_type="lamb")):
        serialized = keras.saving.serialize_keras_object(optimizer)
        name = type(optimizer).__name__
        assert serialized["registered_name"] == f"bert_tf1>{name}"
        assert serialized["config"]["learning_rate"]["registered_name"] == \
            "bert_tf1>WarmupLinearDecay"
        clone = keras.saving.deserialize_keras_object(serialized)
        assert type(clone) is type(optimizer)
        assert type(clone) in (AdamWeightDecay, LambWeightDecay)


# ----- Keras integration -----------------------------------------------------------

@pytest.mark.parametrize("jit_compile", [
    False, pytest.param(True, marks=pytest.mark.slow)])
def test_model_fit(jit_compile):
    rng = np.random.default_rng(4)
    model = ToyModel(("LayerNorm", "ln"), name="toy")
    optimizer = create_optimizer(1e-2, 8, 2, model=model)
    model.compile(optimizer=optimizer, loss="mse", jit_compile=jit_compile)
    before = {tf1_name(v): v.numpy() for v in model.trainable_variables}
    history = model.fit(*toy_data(rng), batch_size=4, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert int(optimizer.iterations.numpy()) == 8
    moved = [n for n, v in before.items()
             if not np.array_equal(v, weights_by_name(model)[n].numpy())]
    assert "word_embeddings" in moved and "output_bias" in moved
    # The schedule reached 0 at num_train_steps.
    assert float(optimizer.learning_rate) == 0.0


def test_task_model_fit_traces_its_train_step_once(fixtures_dir):
    # Keras (no distribution strategy) builds an unbuilt optimizer inside
    # the first step's trace, and tf.function then traces the step again;
    # the task models build it first (TaskModel.make_train_function).
    config = BertConfig.from_json_file(
        fixtures_dir / "tf1_tiny_classifier" / "bert_config.json")
    rng = np.random.default_rng(7)
    features = {"input_ids": rng.integers(0, config.vocab_size, (4, 8)),
                "input_mask": np.ones((4, 8), "int32"),
                "segment_ids": np.zeros((4, 8), "int32")}
    labels = np.array([0, 1, 1, 0])
    model = BertClassifier(config, 2)
    model.compile(optimizer=create_optimizer(1e-2, 4, 1))
    traced = []
    train_step = model.train_step
    model.train_step = lambda data: (traced.append(1), train_step(data))[1]
    model.fit(features, labels, batch_size=2, epochs=2, verbose=0)
    assert len(traced) == 1
    assert int(model.optimizer.iterations.numpy()) == 4


def test_loss_scale_optimizer_matches_unscaled():
    rng = np.random.default_rng(5)
    variables = [keras.Variable(rng.normal(0, 1, (3, 2)).astype("float32"),
                                name="kernel"),
                 keras.Variable(np.zeros(2, "float32"), name="bias")]
    copies = [keras.Variable(v.numpy(), name=v.name) for v in variables]
    grads = [rng.normal(0, 3, v.shape).astype("float32") for v in variables]
    plain = create_optimizer(1e-2, 10, 0)
    scaled = keras.optimizers.LossScaleOptimizer(create_optimizer(1e-2, 10, 0))
    for _ in range(2):
        plain.apply([tf.constant(g) for g in grads], copies)
        scale = float(scaled.dynamic_scale.numpy()) if scaled.built else None
        if scale is None:
            scaled.build(variables)
            scale = float(scaled.dynamic_scale.numpy())
        scaled.apply([tf.constant(g * scale) for g in grads], variables)
    for a, b in zip(variables, copies):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    assert int(scaled.iterations.numpy()) == 2
    assert scaled.inner_optimizer.slot_variables(variables[0])["adam_m"] \
        is not None


def test_mixed_precision_fit():
    rng = np.random.default_rng(6)
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        model = ToyModel(("LayerNorm",), name="toy")
        model.compile(optimizer=create_optimizer(1e-2, 8, 2, model=model),
                      loss="mse")
        input_ids, labels = toy_data(rng)
        # Small targets: a float16 loss times the initial scale 2**15 stays
        # finite, so no step is skipped.
        history = model.fit(input_ids, labels / 100.0, batch_size=4,
                            epochs=1, verbose=0)
    finally:
        keras.config.set_dtype_policy(previous)
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    assert isinstance(model.optimizer.inner_optimizer, AdamWeightDecay)
    assert np.isfinite(history.history["loss"][0])
    assert int(model.optimizer.iterations.numpy()) == 4


_MIRRORED_SCRIPT = textwrap.dedent("""
    import numpy as np, tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras
    from bert_tf1.modeling.optimization import create_optimizer
    from tests.helpers.optimizer_reference import ToyModel, toy_data

    def train(strategy):
        keras.utils.set_random_seed(0)
        with strategy.scope():
            model = ToyModel(("LayerNorm", "ln"), name="toy")
            model.compile(optimizer=create_optimizer(1e-2, 8, 2, model=model),
                          loss="mse")
        dataset = tf.data.Dataset.from_tensor_slices(
            toy_data(np.random.default_rng(7))).batch(8)
        model.fit(dataset, epochs=2, verbose=0)
        return [v.numpy() for v in model.trainable_variables]

    single = train(tf.distribute.OneDeviceStrategy("/cpu:0"))
    mirrored = train(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    worst = max(float(np.abs(a - b).max()) for a, b in zip(single, mirrored))
    print("WORST", worst)
    assert worst < 1e-5, worst
""")


@pytest.mark.slow
def test_mirrored_strategy_matches_single_device(repo_root):
    """2 replicas, global batch 8: the same weights as one device, which
    needs clipping after the cross-replica sum (gradients here are large)."""
    env = dict(os.environ, PYTHONPATH=str(repo_root))
    result = run_code(_MIRRORED_SCRIPT, cwd=repo_root, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WORST" in result.stdout