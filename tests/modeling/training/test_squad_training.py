"""BertSquad trains as the original did: the unused pooler gets no update.

The original optimizer skipped variables without a gradient, so its SQuAD
checkpoints (the tf1_tiny_squad fixture) have no pooler adam_m/adam_v; Keras
warned "Gradients do not exist" on every run instead.
"""
import warnings

import numpy as np
import tensorflow as tf

from bert_tf1.modeling import BertConfig, BertSquad
from bert_tf1.modeling.optimization import create_optimizer
from bert_tf1.modeling.training import run_training
from bert_tf1.modeling.training.runtime import RuntimeOptions


def _dataset(config):
    rng = np.random.default_rng(0)
    features = {"input_ids": rng.integers(1, config.vocab_size, (8, 8)).astype("int32"),
                "input_mask": np.ones((8, 8), "int32"),
                "segment_ids": np.zeros((8, 8), "int32")}
    labels = {"start_positions": rng.integers(0, 8, (8,)).astype("int32"),
              "end_positions": rng.integers(0, 8, (8,)).astype("int32")}
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(4).repeat()


def _train(fixture, output_dir, steps):
    model = BertSquad(BertConfig.from_json_file(fixture / "bert_config.json"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_training(model, create_optimizer(1e-3, 4, 1), _dataset(model.config), steps,
                     str(output_dir), RuntimeOptions(save_checkpoints_steps=100),
                     batch_size=4, init_checkpoint=str(fixture), verbose=0)
    return model, [str(w.message) for w in caught]


def test_squad_checkpoint_has_the_originals_variables_and_resumes(fixtures_dir, tmp_path):
    fixture = fixtures_dir / "tf1_tiny_squad"
    model, messages = _train(fixture, tmp_path, 2)
    assert not [m for m in messages if "Gradients do not exist" in m]
    names = set(dict(tf.train.list_variables(str(tmp_path / "model.ckpt-2"))))
    original = set(dict(tf.train.list_variables(str(fixture / "bert_model.ckpt"))))
    assert names == original  # pooler weights kept, no pooler slots
    # The pooler is the init checkpoint's, in the model and in the output.
    start = tf.train.load_checkpoint(str(fixture / "bert_model.ckpt"))
    written = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-2"))
    for name in ("bert/pooler/dense/kernel", "bert/pooler/dense/bias"):
        np.testing.assert_array_equal(written.get_tensor(name), start.get_tensor(name))
    kernel = [w for w in model.bert.pooler.weights if w.path.endswith("kernel")][0]
    np.testing.assert_array_equal(kernel.numpy(),
                                  start.get_tensor("bert/pooler/dense/kernel"))
    # Resuming from it restores the optimizer (slots and step).
    _train(fixture, tmp_path, 3)
    reader = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-3"))
    assert int(reader.get_tensor("global_step")) == 3
