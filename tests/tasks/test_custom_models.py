"""create_model(): the scripts' model builders, a model of one's own through
the fixture MRPC run, and the TF1 names of the layers around the encoder
(docs/custom_models.md)."""
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertClassifier, BertConfig, BertModel, checkpoints
from bert_tf1.modeling.naming import AutoNamedLayerError
from bert_tf1.tasks import cli, model_building
from bert_tf1.tasks.classification import ClassificationTask
from tests.conftest import REPO_ROOT
from tests.tasks.test_classification import (fixture, make_config,  # noqa: F401
                                             mrpc_slice)

TINY = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1,
                  num_attention_heads=2, intermediate_size=16)
INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


def mean_pool_classifier(bert_config, num_labels):
    """The documented custom head: mean of sequence_output over the mask,
    a hidden Dense with dropout, then the classifier."""
    inputs = {name: keras.Input((None,), dtype="int32", name=name)
              for name in INPUT_NAMES}
    sequence = BertModel(bert_config)(inputs)["sequence_output"]
    mask = keras.ops.cast(inputs["input_mask"], sequence.dtype)[..., None]
    pooled = (keras.ops.sum(sequence * mask, axis=1)
              / keras.ops.maximum(keras.ops.sum(mask, axis=1), 1.0))
    hidden = keras.layers.Dense(64, activation="gelu", name="pool_hidden")(
        pooled)
    hidden = keras.layers.Dropout(0.1, name="pool_dropout")(hidden)
    logits = keras.layers.Dense(num_labels, name="pool_classifier")(hidden)
    return keras.Model(inputs, logits, name="mean_pool_classifier")


def two_dense_head(bert_config, hidden_name="my_hidden",
                   output_name="my_output"):
    inputs = {name: keras.Input((None,), dtype="int32", name=name)
              for name in INPUT_NAMES}
    pooled = BertModel(bert_config)(inputs)["pooled_output"]
    hidden = keras.layers.Dense(4, name=hidden_name)(pooled)
    return keras.Model(inputs, keras.layers.Dense(2, name=output_name)(hidden))


HEAD_NAMES = {"pool_hidden/kernel", "pool_hidden/bias",
              "pool_classifier/kernel", "pool_classifier/bias"}


@pytest.mark.slow  # trains (model.fit compiles): ~15 s
def test_own_head_trains_evaluates_predicts_on_fixture_mrpc(
        fixture, mrpc_slice, tmp_path):  # noqa: F811
    # --init_checkpoint loads into the BertModel inside: every encoder
    # weight by its original name, the new layers stay as initialised.
    model = mean_pool_classifier(
        BertConfig.from_json_file(fixture / "bert_config.json"), 2)
    status = checkpoints.load_tf1_checkpoint(
        model, fixture / "bert_model.ckpt", verbose=False)
    assert set(status.missing) == HEAD_NAMES
    assert status.loaded and all(name.startswith("bert/")
                                 for name in status.loaded)

    output_dir = tmp_path / "out"
    results = ClassificationTask(make_config(
        fixture, mrpc_slice, output_dir, do_train=True, do_eval=True,
        do_predict=True, train_batch_size=8, eval_batch_size=5,
        num_train_epochs=1.0, learning_rate=1e-3),
        mean_pool_classifier).run()
    assert results["train"]["global_step"] == 2
    assert np.isfinite(results["train"]["loss"])
    assert results["eval"]["global_step"] == 2
    assert results["predict"].shape == (64, 2)
    rows = (output_dir / "test_results.tsv").read_text().splitlines()
    assert len(rows) == 64

    reader = tf.train.load_checkpoint(str(output_dir / "model.ckpt-2"))
    names = {name for name in reader.get_variable_to_shape_map()
             if not name.endswith(("/adam_m", "/adam_v"))}
    encoder = {name for name in names if name.startswith("bert/")}
    assert encoder == set(status.loaded)
    assert names - encoder == HEAD_NAMES | {"global_step"}
    assert reader.get_variable_to_shape_map()["pool_classifier/kernel"] == [
        64, 2]
    # The written checkpoint loads back into a fresh model of the kind.
    again = mean_pool_classifier(
        BertConfig.from_json_file(fixture / "bert_config.json"), 2)
    status = checkpoints.load_tf1_checkpoint(again, output_dir, verbose=False)
    assert not status.missing


def test_two_dense_layers_keep_their_own_names(tmp_path):
    model = two_dense_head(TINY)
    prefix = str(tmp_path / "model.ckpt")
    checkpoints.save_tf1_checkpoint(model, prefix)
    names = set(tf.train.load_checkpoint(prefix).get_variable_to_shape_map())
    assert {"my_hidden/kernel", "my_hidden/bias", "my_output/kernel",
            "my_output/bias", "bert/pooler/dense/kernel"} <= names
    assert "kernel" not in names
    again = two_dense_head(TINY)
    status = checkpoints.load_tf1_checkpoint(again, prefix, verbose=False)
    assert not status.missing and not status.unused
    np.testing.assert_array_equal(again.get_layer("my_output").kernel,
                                  model.get_layer("my_output").kernel)


def test_an_auto_generated_layer_name_is_refused_in_one_line(tmp_path):
    model = two_dense_head(TINY, output_name=None)
    auto_name = model.layers[-1].name
    assert auto_name.startswith("dense")
    with pytest.raises(AutoNamedLayerError) as error:
        checkpoints.save_tf1_checkpoint(model, str(tmp_path / "model.ckpt"))
    message = str(error.value)
    assert "\n" not in message
    assert repr(auto_name) in message and "(Dense)" in message
    assert "name=" in message


def test_stock_heads_keep_the_original_names():
    names = set(checkpoints.model_weights_by_name(BertClassifier(TINY, 3)))
    assert {"output_weights", "output_bias",
            "bert/embeddings/word_embeddings"} <= names


def test_lora_goes_to_the_encoder_inside_and_the_head_trains():
    model = two_dense_head(TINY)
    model_building.enable_lora(model, 2, None, ("query", "value"))
    trainable = {weight.path for weight in model.trainable_weights}
    assert {"my_hidden/kernel", "my_output/kernel"} <= trainable
    assert not any("word_embeddings" in path for path in trainable)
    assert any("lora_kernel_a" in path for path in trainable)


def test_a_model_without_its_own_loss_trains_on_the_scripts_loss():
    def create_model(bert_config, num_labels):
        return two_dense_head(bert_config)

    model = model_building.build_script_model(
        create_model, (TINY, 2), BertClassifier, num_labels=2)
    logits = np.array([[2.0, -1.0], [0.5, 0.5]], np.float32)
    labels = np.array([0, 1])
    expected = -np.mean(tf.nn.log_softmax(logits).numpy()[[0, 1], labels])
    np.testing.assert_allclose(model.compute_loss(y=labels, y_pred=logits),
                               expected, rtol=1e-6)
    with pytest.raises(TypeError, match="holding one BertModel"):
        model_building.build_script_model(
            lambda config, labels: keras.Sequential([keras.layers.Dense(2)]),
            (TINY, 2), BertClassifier)


def test_main_hands_its_create_model_to_the_task(monkeypatch):
    built = []

    class Task:
        def __init__(self, config, create_model):
            built.append((config, create_model))

        def run(self):
            return "ran"

    monkeypatch.setattr(cli, "config_from_flags", lambda config_class: "cfg")
    main = cli.task_main(Task, object, "default")
    assert main() == "ran" and main(create_model="mine") == "ran"
    assert built == [("cfg", "default"), ("cfg", "mine")]


@pytest.mark.parametrize("script, stock, args", [
    ("run_classifier", "BertClassifier", "3"),
    ("run_squad", "BertSquad", ""),
    ("run_ner", "BertTokenClassifier", "3"),
    ("run_multiple_choice", "BertMultipleChoice", ""),
    ("run_embeddings", "SentenceEmbedder", ""),
])
def test_each_scripts_create_model_is_its_stock_model(script, stock, args):
    # One process per script: two scripts' flags clash in one process.
    code = (
        f"from bert_tf1 import {script} as s\n"
        "from bert_tf1.modeling import BertConfig\n"
        "config = BertConfig(vocab_size=50, hidden_size=8,"
        " num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)\n"
        f"model = s.create_model(config{', ' + args if args else ''})\n"
        "print(type(model).__name__, s.create_model.__doc__.count('name='))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=300,
                            check=True)
    assert result.stdout.split() == [stock, "1"]
