"""LoRA on the encoder: exact start, what trains, merged checkpoints."""
import numpy as np
import pytest

from modeling import BertClassifier, checkpoints, optimization
from modeling.layers import lora
from modeling.models import BertMultipleChoice, BertSquad, BertTokenClassifier
from modeling.naming import tf1_name
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
