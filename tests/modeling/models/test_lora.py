"""LoRA on the encoder: exact start, what trains, merged checkpoints."""
import keras
import numpy as np
import pytest

from bert_tf1.modeling import BertClassifier, checkpoints, optimization
from bert_tf1.modeling.layers import lora
from bert_tf1.modeling.models import BertMultipleChoice, BertSquad, BertTokenClassifier
from bert_tf1.modeling.naming import tf1_name
from tests.helpers.fixture_models import (INPUT_KEYS, build_model,
                                          random_classifier_batches,
                                          reference_outputs)


def _loaded_classifier(fixtures_dir):
    fixture = fixtures_dir / "tf1_tiny_classifier"
    model = build_model(fixture)
    checkpoints.load_tf1_checkpoint(model, fixture, verbose=False)
    return model, reference_outputs(fixture)


def _weights(model):
    return {tf1_name(v): np.array(v.numpy()) for v in model.weights}


def test_zero_b_gives_exactly_the_outputs_without_lora(fixtures_dir):
    model, reference = _loaded_classifier(fixtures_dir)
    inputs = {key: reference[key] for key in INPUT_KEYS}
    before = model.bert(inputs)
    logits = np.asarray(model(inputs))
    model.enable_lora(4, alpha=8, targets=lora.TARGETS)
    after = model.bert(inputs)
    for key in ("sequence_output", "pooled_output"):
        np.testing.assert_array_equal(np.asarray(after[key]),
                                      np.asarray(before[key]))
    np.testing.assert_array_equal(np.asarray(model(inputs)), logits)
    # 6 targets x 2 layers, A [64, 4] (random) and B [4, out] (zeros).
    layers = lora.lora_layers(model)
    assert len(layers) == 12
    assert all(np.any(d.lora_kernel_a.numpy()) and not np.any(
        d.lora_kernel_b.numpy()) for d in layers)


def test_trainable_weights_are_adapters_pooler_and_head(fixtures_dir):
    model, _ = _loaded_classifier(fixtures_dir)
    model.enable_lora(2)
    names = sorted(tf1_name(v) for v in model.trainable_weights)
    assert names == sorted(
        [f"bert/encoder/layer_{i}/attention/self/{t}/lora_kernel_{ab}"
         for i in range(2) for t in ("query", "value") for ab in "ab"]
        + ["bert/pooler/dense/kernel", "bert/pooler/dense/bias",
           "output_weights", "output_bias"])
    # The weights keep their TF1 names; A is [in, rank], B [rank, out].
    query = model.bert.encoder.transformer_layers[0].attention.self_attention.query
    assert query.lora_kernel_a.shape == (64, 2)
    assert query.lora_kernel_b.shape == (2, 64)
    # Heads that never use the pooler keep it frozen.
    squad = BertSquad(model.config)
    squad.enable_lora(2, targets=["key"])
    assert sorted(tf1_name(v) for v in squad.trainable_weights) == sorted(
        [f"bert/encoder/layer_{i}/attention/self/key/lora_kernel_{ab}"
         for i in range(2) for ab in "ab"]
        + ["cls/squad/output_weights", "cls/squad/output_bias"])


@pytest.mark.parametrize("arguments, message", [
    ({"rank": 0}, "rank must be an integer >= 1"),
    ({"rank": 2, "targets": ["query", "output"]},
     "Unknown LoRA target(s) ['output']; choose from query, key, value, "
     "attention_output, intermediate, layer_output."),
    ({"rank": 2, "targets": []}, "Unknown LoRA target(s) []"),
    ({"rank": 2, "alpha": -1.0}, "alpha must be > 0"),
])
def test_bad_arguments_are_one_line(fixtures_dir, arguments, message):
    model, _ = _loaded_classifier(fixtures_dir)
    with pytest.raises(ValueError) as error:
        model.enable_lora(**arguments)
    assert message in str(error.value) and "\n" not in str(error.value)
    assert not lora.lora_layers(model)


def test_enabling_twice_is_refused(fixtures_dir):
    model, _ = _loaded_classifier(fixtures_dir)
    model.enable_lora(2)
    with pytest.raises(ValueError, match="already enabled"):
        model.enable_lora(2)


def test_three_steps_change_only_adapters_pooler_and_head(fixtures_dir):
    model, _ = _loaded_classifier(fixtures_dir)
    model.enable_lora(2, targets=("query", "value", "intermediate"))
    before = _weights(model)
    model.compile(optimizer=optimization.create_optimizer(1e-2, 10, 0))
    model.fit(random_classifier_batches(model.config), steps_per_epoch=3,
              epochs=1, verbose=0)
    after = _weights(model)
    trained = {tf1_name(v) for v in model.trainable_weights}
    for name, value in before.items():
        if name in trained:
            assert not np.array_equal(after[name], value), name
        else:
            np.testing.assert_array_equal(after[name], value, err_msg=name)
    assert len(trained) == 2 * 3 * 2 + 4
    # Frozen weights have no Adam slots.
    assert len(model.optimizer.variables) < 3 * len(model.weights)


@pytest.mark.parametrize("model_class", [BertTokenClassifier,
                                         BertMultipleChoice])
def test_every_task_model_keeps_lora_through_its_config(fixtures_dir,
                                                        model_class):
    model, _ = _loaded_classifier(fixtures_dir)
    kwargs = {"num_labels": 3} if model_class is BertTokenClassifier else {}
    task = model_class(model.config, **kwargs)
    task.enable_lora(3, alpha=6, targets="value,layer_output")
    copy = model_class.from_config(task.get_config())
    assert task.get_config()["lora"] == {
        "rank": 3, "alpha": 6, "targets": ["value", "layer_output"]}
    assert sorted(tf1_name(v) for v in copy.trainable_weights) == sorted(
        tf1_name(v) for v in task.trainable_weights)
    layer = copy.bert.encoder.transformer_layers[1]
    assert layer.output_projection.dense.lora_alpha == 6


def _lora_run(fixtures_dir, output_dir, steps=3):
    """A LoRA classifier trained `steps` steps from the fixture, by the
    project's training loop: (model, optimizer)."""
    from bert_tf1.modeling import training

    fixture = fixtures_dir / "tf1_tiny_classifier"
    model = build_model(fixture)
    model.enable_lora(2, alpha=4)
    optimizer = optimization.create_optimizer(1e-2, 10, 0)
    training.run_training(
        model, optimizer, random_classifier_batches(model.config), steps,
        str(output_dir), training.RuntimeOptions(), 4, verbose=0,
        init_checkpoint=str(fixture))
    return model, optimizer


def test_training_checkpoint_is_merged_resumable_and_has_adapters(
        fixtures_dir, tmp_path):
    import tensorflow as tf

    from bert_tf1.modeling import training

    model, optimizer = _lora_run(fixtures_dir, tmp_path)
    _, reference = _loaded_classifier(fixtures_dir)
    inputs = {key: reference[key] for key in INPUT_KEYS}
    logits = np.asarray(model(inputs))
    prefix = str(tmp_path / "model.ckpt-3")
    saved = dict(tf.train.list_variables(prefix))
    query = "bert/encoder/layer_0/attention/self/query"
    assert f"lora/{query}/lora_kernel_a/adam_m" in saved
    assert f"{query}/lora_kernel_a" not in saved
    assert f"{query}/kernel/adam_m" not in saved  # frozen: no slots

    # Without LoRA, by our loader: the LoRA model's logits.
    plain = build_model(fixtures_dir / "tf1_tiny_classifier")
    status = checkpoints.load_tf1_checkpoint(plain, prefix, verbose=False)
    assert status.missing == [] and status.unused == []
    np.testing.assert_allclose(np.asarray(plain(inputs)), logits, atol=1e-5)
    assert not np.allclose(np.asarray(plain(inputs)), np.asarray(
        _loaded_classifier(fixtures_dir)[0](inputs)), atol=1e-3)

    # The original code's path: graph variables of the TF1 names, filled by
    # tf.train.init_from_checkpoint, then run by the model without LoRA.
    names = sorted(tf1_name(v) for v in plain.weights)
    with tf.Graph().as_default():
        variables = [tf.compat.v1.get_variable(name, shape=saved[name])
                     for name in names]
        tf.compat.v1.train.init_from_checkpoint(
            prefix, {name: name for name in names})
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            values = dict(zip(names, session.run(variables)))
    original = build_model(fixtures_dir / "tf1_tiny_classifier")
    for variable in original.weights:
        variable.assign(values[tf1_name(variable)])
    np.testing.assert_allclose(np.asarray(original(inputs)), logits,
                               atol=1e-5)

    # Resuming: base kernels, adapters, head and Adam slots exactly.
    resumed = build_model(fixtures_dir / "tf1_tiny_classifier")
    resumed.enable_lora(2, alpha=4)
    resumed_optimizer = optimization.create_optimizer(1e-2, 10, 0)
    step = training.restore_for_training(
        resumed, resumed_optimizer, training.choose_start(str(tmp_path)))
    assert step == 3
    assert _weights(resumed).keys() == _weights(model).keys()
    for name, value in _weights(model).items():
        np.testing.assert_array_equal(_weights(resumed)[name], value, name)
    for old, new in zip(model.trainable_weights, resumed.trainable_weights):
        for slot in ("adam_m", "adam_v"):
            np.testing.assert_array_equal(
                resumed_optimizer.slot_variables(new)[slot].numpy(),
                optimizer.slot_variables(old)[slot].numpy())

    # The small adapters file, completed by the base model.
    adapters = str(tmp_path / "lora_adapters.ckpt")
    assert sorted(tf.train.list_variables(adapters)) == sorted(
        (name, shape) for name, shape in saved.items()
        if name.startswith("lora/") and "/lora_kernel_" in name
        and "/adam_" not in name
        or name in ("global_step", "output_weights", "output_bias",
                    "bert/pooler/dense/kernel", "bert/pooler/dense/bias",
                    lora.ALPHA_NAME))
    assert tf.train.load_variable(adapters, lora.ALPHA_NAME) == 4.0
    reloaded = build_model(fixtures_dir / "tf1_tiny_classifier")
    reloaded.enable_lora(2, alpha=4)
    checkpoints.load_tf1_checkpoint(
        reloaded, fixtures_dir / "tf1_tiny_classifier", verbose=False)
    checkpoints.load_tf1_checkpoint(reloaded, adapters, verbose=False)
    np.testing.assert_array_equal(np.asarray(reloaded(inputs)), logits)

    # Another alpha would scale the adapters wrongly: one line, nothing read.
    other = build_model(fixtures_dir / "tf1_tiny_classifier")
    other.enable_lora(2, alpha=8)
    before = _weights(other)
    for source in (adapters, prefix):
        with pytest.raises(checkpoints.CheckpointMismatchError,
                           match=r"alpha 4, but .* has alpha 8: pass "
                                 r"--lora_alpha=4") as error:
            checkpoints.load_tf1_checkpoint(other, source, verbose=False)
        assert "\n" not in str(error.value)
    for name, value in _weights(other).items():
        np.testing.assert_array_equal(value, before[name], name)


def test_unmerged_adapters_are_refused_by_loaders_without_lora(
        fixtures_dir, tmp_path):
    from bert_tf1.modeling.checkpoints.saving import write_tensors
    from bert_tf1.modeling.interop.sources import assign_weights

    model, _ = _loaded_classifier(fixtures_dir)
    model.enable_lora(2)
    # What Keras alone saves: the unmerged kernel beside its adapters.
    tensors = {tf1_name(v): v.value for v in model.weights}
    prefix = write_tensors(str(tmp_path / "keras.ckpt"), tensors)
    plain = build_model(fixtures_dir / "tf1_tiny_classifier")
    before = _weights(plain)
    with pytest.raises(checkpoints.CheckpointMismatchError) as error:
        checkpoints.load_tf1_checkpoint(plain, prefix, verbose=False)
    message = str(error.value)
    assert "\n" not in message and "LoRA adapters not merged" in message
    assert "bert/encoder/layer_0/attention/self/query/lora_kernel_a" in message
    with pytest.raises(checkpoints.CheckpointMismatchError):
        assign_weights(plain, {k: np.asarray(v) for k, v in tensors.items()},
                       "weights.h5")
    for name, value in _weights(plain).items():
        np.testing.assert_array_equal(value, before[name])
    # A LoRA model reads the same file: adapters and all.
    again = build_model(fixtures_dir / "tf1_tiny_classifier")
    again.enable_lora(2)
    status = checkpoints.load_tf1_checkpoint(again, prefix, verbose=False)
    assert status.missing == []


def test_int8_and_bfloat16_copies_merge_the_adapters(fixtures_dir):
    from bert_tf1.modeling.inference.copies import bfloat16_inference_copy
    from bert_tf1.modeling.inference.int8 import quantize_int8

    model, reference = _loaded_classifier(fixtures_dir)
    inputs = {key: reference[key] for key in INPUT_KEYS}
    # The bound below scales with how far the adapters move the logits,
    # which depends on lora_kernel_a's random draw: unseeded, the bound
    # ranged 0.0014-0.0128 against copy errors of 3e-4-1.5e-3 (29 draws).
    keras.utils.set_random_seed(0)
    model.enable_lora(2, targets=lora.TARGETS)
    rng = np.random.default_rng(1)
    for dense in lora.lora_layers(model):
        dense.lora_kernel_b.assign(rng.normal(
            scale=0.5, size=dense.lora_kernel_b.shape).astype("float32"))
    logits = np.asarray(model(inputs))
    base = np.asarray(_loaded_classifier(fixtures_dir)[0](inputs))
    int8 = quantize_int8(model)
    assert not lora.lora_layers(int8.model)
    int8_logits = np.asarray(int8(inputs))
    # Within int8 rounding of the LoRA model, far from the base model.
    assert np.abs(int8_logits - logits).max() < 0.2 * np.abs(logits - base).max()
    copy = bfloat16_inference_copy(model)
    assert not lora.lora_layers(copy)
    assert np.abs(np.asarray(copy(inputs), "float32") - logits).max() < (
        0.2 * np.abs(logits - base).max())


@pytest.mark.parametrize("dtype, use_xla", [("float32", True),
                                            ("mixed_float16", False)])
def test_xla_and_mixed_precision_train_adapters_in_float32(
        fixtures_dir, tmp_path, dtype, use_xla):
    from bert_tf1.modeling import BertConfig, training

    fixture = fixtures_dir / "tf1_tiny_classifier"
    config = BertConfig.from_json_file(fixture / "bert_config.json")
    model = BertClassifier(config, 3, dtype=dtype)
    checkpoints.load_tf1_checkpoint(model, fixture, verbose=False)
    model.enable_lora(2)
    before = _weights(model)
    adapters = [d.lora_kernel_a for d in lora.lora_layers(model)]
    assert {str(v.dtype) for v in adapters} == {"float32"}
    training.run_training(
        model, optimization.create_optimizer(1e-2, 10, 0),
        random_classifier_batches(config), 2, str(tmp_path),
        training.RuntimeOptions(use_xla=use_xla), 4, verbose=0,
        start_from=training.CheckpointChoice(None, "none"))
    trained = {tf1_name(v) for v in model.trainable_weights}
    for name, value in _weights(model).items():
        assert np.array_equal(value, before[name]) != (name in trained), name
    # The merged float32 checkpoint gives a float32 model the LoRA model's
    # logits (to float16 rounding where the model computes in float16).
    _, reference = _loaded_classifier(fixtures_dir)
    inputs = {key: reference[key] for key in INPUT_KEYS}
    plain = build_model(fixture)
    checkpoints.load_tf1_checkpoint(plain, tmp_path / "model.ckpt-2",
                                    verbose=False)
    np.testing.assert_allclose(
        np.asarray(plain(inputs)), np.asarray(model(inputs), "float32"),
        atol=1e-5 if dtype == "float32" else 2e-2)


def test_keras_file_keeps_the_adapters(fixtures_dir, tmp_path):
    import keras

    model, reference = _loaded_classifier(fixtures_dir)
    inputs = {key: reference[key] for key in INPUT_KEYS}
    model.enable_lora(2, alpha=3)
    for dense in lora.lora_layers(model):
        dense.lora_kernel_b.assign(np.full(dense.lora_kernel_b.shape, 0.1,
                                           "float32"))
    model.save(tmp_path / "lora.keras")
    same = keras.models.load_model(tmp_path / "lora.keras")
    assert len(lora.lora_layers(same)) == 4
    assert len(same.trainable_weights) == len(model.trainable_weights)
    np.testing.assert_array_equal(np.asarray(same(inputs)),
                                  np.asarray(model(inputs)))
