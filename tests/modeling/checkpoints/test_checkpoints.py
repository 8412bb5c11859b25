"""Loading and writing TF1 checkpoints: round trips, other writers, errors."""
import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertConfig, BertModel, BertPretrainer, checkpoints, training
from bert_tf1.modeling.naming import tf1_name
from tests.helpers.fixture_models import build_model, compute_outputs, reference_outputs


def _weights(model):
    return {tf1_name(v): np.array(v.numpy()) for v in model.weights}


def test_round_trip_keeps_names_tensors_and_outputs(fixtures_dir, tmp_path):
    fixture_dir = fixtures_dir / "tf1_tiny_pretraining"
    model = build_model(fixture_dir)
    checkpoints.load_tf1_checkpoint(model, fixture_dir, verbose=False)
    prefix = checkpoints.save_tf1_checkpoint(model, tmp_path / "bert_model.ckpt")

    original = dict(tf.train.list_variables(str(fixture_dir / "bert_model.ckpt")))
    written = dict(tf.train.list_variables(prefix))
    assert written == {name: shape for name, shape in original.items()
                       if not checkpoints.is_optimizer_state(name)}
    reader = tf.train.load_checkpoint(str(fixture_dir / "bert_model.ckpt"))
    ours = tf.train.load_checkpoint(prefix)
    for name in written:
        np.testing.assert_array_equal(ours.get_tensor(name), reader.get_tensor(name))

    reloaded = build_model(fixture_dir)
    status = checkpoints.load_tf1_checkpoint(reloaded, tmp_path, verbose=False)
    assert status.missing == [] and status.unused == []
    reference = reference_outputs(fixture_dir)
    first, second = compute_outputs(model, reference), compute_outputs(reloaded, reference)
    for key in first:
        np.testing.assert_array_equal(first[key], second[key])


def test_accepts_prefix_directory_and_checkpoint_state_file(fixtures_dir, tmp_path):
    fixture_dir = fixtures_dir / "tf1_tiny_squad"
    assert checkpoints.resolve_checkpoint(fixture_dir) == str(fixture_dir / "bert_model.ckpt")
    assert checkpoints.resolve_checkpoint(fixture_dir / "bert_model.ckpt") == str(
        fixture_dir / "bert_model.ckpt")
    # A file of the checkpoint named instead of its prefix.
    for suffix in (".index", ".data-00000-of-00001"):
        assert checkpoints.resolve_checkpoint(
            str(fixture_dir / "bert_model.ckpt") + suffix) == str(fixture_dir / "bert_model.ckpt")
    # An Estimator-style output_dir: model.ckpt-N plus a `checkpoint` file.
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(fixture_dir / f"bert_model.ckpt{suffix}", tmp_path / f"model.ckpt-7{suffix}")
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-7"\n')
    assert checkpoints.resolve_checkpoint(tmp_path) == str(tmp_path / "model.ckpt-7")
    model = build_model(fixture_dir)
    status = checkpoints.load_tf1_checkpoint(model, tmp_path, verbose=False)
    assert len(status.loaded) == len(model.weights)


def test_skips_optimizer_state_and_reports_missing_head(fixtures_dir):
    # The pretraining checkpoint has adam slots and cls/* heads; a bare encoder
    # takes the bert/* weights and reports the heads as unused.
    fixture_dir = fixtures_dir / "tf1_tiny_pretraining"
    config = BertConfig.from_json_file(fixture_dir / "bert_config.json")
    status = checkpoints.load_tf1_checkpoint(BertModel(config), fixture_dir, verbose=False)
    assert len(status.loaded) == 5 + 16 * 2 + 2
    assert status.missing == []
    assert all(name.startswith("cls/") for name in status.unused) and len(status.unused) == 7
    # A classifier from the squad checkpoint: encoder loads, new head stays fresh.
    from bert_tf1.modeling import BertClassifier
    classifier = BertClassifier(config, num_labels=3)
    status = checkpoints.load_tf1_checkpoint(classifier, fixtures_dir / "tf1_tiny_squad",
                                             verbose=False)
    assert status.missing == ["output_bias", "output_weights"]
    assert status.unused == ["cls/squad/output_bias", "cls/squad/output_weights"]


def test_keras_bert_toy_checkpoint_loads(data_dir):
    folder = data_dir / "checkpoints/keras_bert_toy"
    config = BertConfig.from_json_file(folder / "bert_config.json")
    model = BertPretrainer(config)
    status = checkpoints.load_tf1_checkpoint(model, folder, verbose=False)
    assert status.missing == [] and status.unused == []
    reader = tf.train.load_checkpoint(str(folder / "bert_model.ckpt"))
    for name, value in _weights(model).items():
        np.testing.assert_array_equal(value, reader.get_tensor(name))
    outputs = model({"input_ids": tf.constant([[2, 5, 6, 3, 0]]),
                     "input_mask": tf.constant([[1, 1, 1, 1, 0]]),
                     "masked_lm_positions": tf.constant([[1, 2]])})
    probs = np.exp(outputs["masked_lm_log_probs"].numpy())
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)


def _config_file(fixtures_dir, tmp_path, **changes):
    values = json.loads((fixtures_dir / "tf1_tiny_classifier/bert_config.json").read_text())
    values.update(changes)
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(values))
    return BertConfig.from_json_file(path)


def test_wrong_vocab_size_fails_before_assigning(fixtures_dir, tmp_path):
    config = _config_file(fixtures_dir, tmp_path, vocab_size=600)
    model = BertModel(config)
    before = _weights(model)
    with pytest.raises(checkpoints.CheckpointMismatchError) as error:
        checkpoints.load_tf1_checkpoint(model, fixtures_dir / "tf1_tiny_classifier")
    message = str(error.value)
    assert "bert/embeddings/word_embeddings: checkpoint [512, 64] vs model [600, 64]" in message
    assert "vocab_size: the checkpoint has 512, the config 600" in message
    assert "nothing was loaded" in message
    after = _weights(model)
    assert all(np.array_equal(before[name], after[name]) for name in before)


def test_larger_model_counts_every_mismatch_and_lists_a_few(fixtures_dir, tmp_path):
    config = _config_file(fixtures_dir, tmp_path, hidden_size=128, intermediate_size=512)
    model = BertModel(config)
    with pytest.raises(checkpoints.CheckpointMismatchError) as error:
        checkpoints.load_tf1_checkpoint(model, fixtures_dir / "tf1_tiny_classifier")
    message = str(error.value)
    stored = dict(tf.train.list_variables(str(fixtures_dir / "tf1_tiny_classifier/bert_model.ckpt")))
    differing = [name for name, variable in checkpoints.model_weights_by_name(model).items()
                 if name in stored and list(stored[name]) != list(variable.shape)]
    assert len(differing) > 5
    assert f"{len(differing)} shape mismatch(es)" in message
    listed = [line for line in message.splitlines() if ": checkpoint [" in line]
    assert len(listed) == 5
    assert f"... and {len(differing) - 5} more" in message
    # Every weight is named in the order the model has them; one stays on a screen.
    assert listed[0].strip().startswith(differing[0] + ":")
    assert len(message) < 1000


def test_checkpoint_matching_nothing_and_missing_files(fixtures_dir, tmp_path):
    tf.raw_ops.SaveV2(prefix=str(tmp_path / "other.ckpt"), tensor_names=["foo/bar"],
                      shape_and_slices=[""], tensors=[tf.zeros((2,))])
    model = build_model(fixtures_dir / "tf1_tiny_classifier")
    with pytest.raises(checkpoints.CheckpointMismatchError, match="matches no weight"):
        checkpoints.load_tf1_checkpoint(model, tmp_path / "other.ckpt")
    with pytest.raises(FileNotFoundError, match="nowhere.ckpt"):
        checkpoints.load_tf1_checkpoint(model, tmp_path / "nowhere.ckpt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="No checkpoint in directory"):
        checkpoints.load_tf1_checkpoint(model, tmp_path / "empty")


def test_never_overwrites_a_checkpoint(fixtures_dir, tmp_path):
    model = build_model(fixtures_dir / "tf1_tiny_classifier")
    prefix = tmp_path / "bert_model.ckpt"
    checkpoints.save_tf1_checkpoint(model, prefix, global_step=3)
    with pytest.raises(FileExistsError, match="not overwriting"):
        checkpoints.save_tf1_checkpoint(model, prefix)
    assert int(tf.train.load_checkpoint(str(prefix)).get_tensor("global_step")) == 3
    checkpoints.save_tf1_checkpoint(model, prefix, global_step=4, overwrite=True)
    assert int(tf.train.load_checkpoint(str(prefix)).get_tensor("global_step")) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "bert_model.ckpt.data-00000-of-00001", "bert_model.ckpt.index"]


def test_original_tf1_code_path_loads_our_checkpoint(fixtures_dir, tmp_path):
    # What the original scripts do: graph-mode variables with the TF1 names,
    # then tf.train.init_from_checkpoint with a same-name assignment map.
    fixture_dir = fixtures_dir / "tf1_tiny_squad"
    model = build_model(fixture_dir)
    checkpoints.load_tf1_checkpoint(model, fixture_dir, verbose=False)
    prefix = checkpoints.save_tf1_checkpoint(model, tmp_path / "bert_model.ckpt")
    ours = _weights(model)
    graph = tf.Graph()
    with graph.as_default():
        variables = {name: tf.compat.v1.get_variable(name, shape=value.shape, dtype=tf.float32)
                     for name, value in ours.items()}
        tf.compat.v1.train.init_from_checkpoint(prefix, {name: name for name in variables})
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for name, variable in variables.items():
                np.testing.assert_array_equal(session.run(variable), ours[name])


def test_label_count_mismatch_is_named(fixtures_dir):
    from bert_tf1.modeling import BertClassifier
    fixture_dir = fixtures_dir / "tf1_tiny_classifier"
    config = BertConfig.from_json_file(fixture_dir / "bert_config.json")
    with pytest.raises(checkpoints.CheckpointMismatchError) as error:
        checkpoints.load_tf1_checkpoint(BertClassifier(config, num_labels=2), fixture_dir)
    assert "output_weights: checkpoint [3, 64] vs model [2, 64]" in str(error.value)
    assert "number of labels: the checkpoint's head has 3, the model 2" in str(error.value)


def _copy_checkpoint(fixture_dir, folder, name):
    for path in fixture_dir.glob("bert_model.ckpt.*"):
        shutil.copy(path, folder / path.name.replace("bert_model.ckpt", name))
    return folder / name


def test_truncated_data_file_is_named_and_nothing_assigned(fixtures_dir, tmp_path):
    fixture_dir = fixtures_dir / "tf1_tiny_classifier"
    prefix = _copy_checkpoint(fixture_dir, tmp_path, "bert_model.ckpt")
    data = tmp_path / "bert_model.ckpt.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    model = build_model(fixture_dir)
    before = [w.numpy().copy() for w in model.weights]
    with pytest.raises(checkpoints.CheckpointCorruptError,
                       match=r"bert_model.ckpt.data-00000-of-00001: checkpoint data "
                             r"is truncated or corrupt"):
        checkpoints.load_tf1_checkpoint(model, str(prefix), verbose=False)
    for old, weight in zip(before, model.weights):
        np.testing.assert_array_equal(old, weight.numpy())


def test_missing_data_file_is_named_as_missing(fixtures_dir, tmp_path):
    fixture_dir = fixtures_dir / "tf1_tiny_classifier"
    prefix = _copy_checkpoint(fixture_dir, tmp_path, "bert_model.ckpt")
    (tmp_path / "bert_model.ckpt.data-00000-of-00001").unlink()
    with pytest.raises(checkpoints.CheckpointCorruptError,
                       match=r"bert_model.ckpt.data-00000-of-00001: checkpoint data "
                             r"file is missing"):
        checkpoints.load_tf1_checkpoint(build_model(fixture_dir), str(prefix),
                                        verbose=False)


def test_truncated_index_is_named(fixtures_dir, tmp_path):
    fixture_dir = fixtures_dir / "tf1_tiny_classifier"
    prefix = _copy_checkpoint(fixture_dir, tmp_path, "bert_model.ckpt")
    index = tmp_path / "bert_model.ckpt.index"
    index.write_bytes(index.read_bytes()[:100])
    with pytest.raises(checkpoints.CheckpointCorruptError,
                       match=r"bert_model.ckpt.index: not a readable checkpoint index"):
        checkpoints.list_checkpoint(str(prefix))


def test_save_leaves_no_temp_files(fixtures_dir, tmp_path):
    model = build_model(fixtures_dir / "tf1_tiny_classifier")
    checkpoints.save_tf1_checkpoint(model, tmp_path / "bert_model.ckpt")
    assert sorted(os.listdir(tmp_path)) == [
        "bert_model.ckpt.data-00000-of-00001", "bert_model.ckpt.index"]


def test_unlisted_training_checkpoints_are_removed(fixtures_dir, tmp_path):
    fixture_dir = fixtures_dir / "tf1_tiny_squad"
    for step in (2, 4, 6):
        _copy_checkpoint(fixture_dir, tmp_path, f"model.ckpt-{step}")
    (tmp_path / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-6"\n'
        'all_model_checkpoint_paths: "model.ckpt-4"\n'
        'all_model_checkpoint_paths: "model.ckpt-6"\n')
    (tmp_path / "model.ckpt-best.index").write_bytes(b"user's")
    removed = training.remove_unlisted_checkpoints(tmp_path)
    assert sorted(os.path.basename(p) for p in removed) == [
        "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index"]
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["checkpoint", "model.ckpt-best.index",
         "model.ckpt-4.data-00000-of-00001", "model.ckpt-4.index",
         "model.ckpt-6.data-00000-of-00001", "model.ckpt-6.index"])
    # Without a state file nothing says which files belong to a run.
    (tmp_path / "checkpoint").unlink()
    assert training.remove_unlisted_checkpoints(tmp_path) == []
