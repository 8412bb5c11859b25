"""Dynamic padding and --group_by_length (bert_tf1/data/io/dynamic_padding.py, applied
once in bert_tf1/tasks/fine_tuning.py): cut batches give the fixed layout's numbers.

With dropout off, a run whose batches are cut to their longest example and
a run at max_seq_length give the same logits and, after 3 training steps,
the same weights (to 1e-5) for classification, tagging and multiple choice;
SQuAD and extract_features predictions agree at every real position.
"""
import json

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.io import dynamic_padding
from bert_tf1.modeling.naming import tf1_name
from bert_tf1.modeling.training.runtime import RuntimeOptions
from tests.tasks import test_classification, test_multiple_choice, test_tagging
from tests.tasks.test_classification import mrpc_slice  # noqa: F401
from tests.tasks.test_tagging import wnut  # noqa: F401

FIXTURE = "tf1_vocab_mrpc_classifier"


# ----- the tf.data steps ------------------------------------------------------

def _batch(lengths, seq_length, choices=None):
    mask = np.array([[1] * n + [0] * (seq_length - n) for n in lengths],
                    np.int32)
    if choices:
        mask = np.stack([mask] * choices, axis=1)
        mask[:, 0, :] = 0  # the longest choice decides
    features = {"input_ids": mask * 7, "input_mask": mask,
                "segment_ids": np.zeros_like(mask)}
    return (features, np.arange(len(lengths), dtype=np.int32),
            mask.astype(np.float32))


@pytest.mark.parametrize("lengths,expected", [
    ([3, 5], 8), ([9, 2], 16), ([1], 8), ([30, 31], 32), ([33], 40),
    ([40], 40)])
def test_a_batch_is_cut_to_its_longest_example_rounded_up_to_8(lengths,
                                                               expected):
    cut = dynamic_padding.cut_to_longest(40)
    features, labels, weights = cut(*[tf.constant(t) if not isinstance(t, dict)
                                      else {k: tf.constant(v)
                                            for k, v in t.items()}
                                      for t in _batch(lengths, 40)])
    for value in features.values():
        assert value.shape == (len(lengths), expected)
    # Per-token weights are cut too; per-example labels stay.
    assert weights.shape == (len(lengths), expected)
    np.testing.assert_array_equal(labels, np.arange(len(lengths)))
    np.testing.assert_array_equal(
        features["input_mask"].numpy().sum(axis=1), lengths)


def test_multiple_choice_batches_are_cut_on_the_last_axis():
    features, labels, _ = _batch([5, 12], 32, choices=3)
    dataset = tf.data.Dataset.from_tensors((features, labels)).map(
        dynamic_padding.cut_to_longest(32))
    (cut, cut_labels), = list(dataset)
    assert cut["input_ids"].shape == (2, 3, 16)
    assert cut_labels.shape == (2,)


def test_group_by_length_draws_every_example_and_groups_lengths():
    rng = np.random.default_rng(0)
    lengths = rng.integers(2, 64, size=60)
    batch_size, megabatch, seq_length = 4, 15, 64  # a stretch is an epoch
    mask = np.array([[1] * n + [0] * (seq_length - n) for n in lengths],
                    np.int32)
    ids = rng.permutation(len(lengths)).astype(np.int32)
    stream = tf.data.Dataset.from_tensor_slices(
        ({"input_mask": mask[ids], "input_ids": mask[ids]}, ids)).repeat()
    grouped = dynamic_padding.group_by_length(
        stream.batch(batch_size, drop_remainder=True), batch_size,
        seq_length, seed=1, megabatch=megabatch)
    batches = list(grouped.take(3 * megabatch).as_numpy_iterator())
    for epoch in range(3):
        stretch = batches[epoch * megabatch:(epoch + 1) * megabatch]
        # Every example exactly once per epoch.
        assert sorted(np.concatenate([i for _, i in stretch])) == list(
            range(len(lengths)))
        # Length-homogeneous: the batches' length ranges do not overlap.
        ranges = sorted((lengths[i].min(), lengths[i].max())
                        for _, i in stretch)
        assert all(high <= low for (_, high), (low, _) in
                   zip(ranges, ranges[1:]))
    for features, i in batches:
        assert features["input_mask"].shape[1] == int(
            dynamic_padding.padded_length(lengths[i].max(), seq_length))
    # The batches are shuffled: not in length order.
    firsts = [lengths[i].min() for _, i in batches[:megabatch]]
    assert firsts != sorted(firsts)


def test_padded_outputs_keep_shapes():
    values = tf.ones([2, 8, 3])
    padded = dynamic_padding.pad_to_length(values, 12, value=-5.0)
    assert padded.shape == (2, 12, 3)
    np.testing.assert_array_equal(padded[:, 8:], -5.0)


# ----- the tasks: cut and fixed batches agree ----------------------------------

def _no_dropout_config(fixture, tmp_path):
    config = json.loads((fixture / "bert_config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    path = tmp_path / "bert_config_no_dropout.json"
    path.write_text(json.dumps(config))
    return str(path)


def _train_and_predict(task, mode, batch_size):
    task.prepare()
    if hasattr(task.model, "dropout"):
        task.model.dropout.rate = 0.0  # the classifier head's own dropout
    lengths = []
    original = task.make_dataset

    def spy(*args, **kwargs):
        dataset, path = original(*args, **kwargs)
        first = next(iter(dataset))[0]["input_ids"]
        lengths.append(int(first.shape[-1]))
        return dataset, path

    task.make_dataset = spy
    task.train()
    outputs = task.predict_logits(mode, batch_size)[0]
    if outputs.ndim == 3:  # per-token logits: the real positions
        outputs = outputs[np.array([w.input_mask for w in task.features[mode]],
                                   bool)]
    weights = {tf1_name(v): v.numpy() for v in task.model.weights}
    task.close()
    return outputs, weights, lengths


def _compare(make_task, mode, batch_size, seq_length):
    fixed = _train_and_predict(make_task(False), mode, batch_size)
    cut = _train_and_predict(make_task(True), mode, batch_size)
    assert fixed[2] == [seq_length, seq_length]
    assert max(cut[2]) < seq_length and all(n % 8 == 0 for n in cut[2])
    np.testing.assert_allclose(cut[0], fixed[0], atol=1e-5)
    assert cut[1].keys() == fixed[1].keys()
    for name in fixed[1]:
        np.testing.assert_allclose(cut[1][name], fixed[1][name], atol=1e-5,
                                   err_msg=name)


@pytest.fixture
def fixture(fixtures_dir):
    return fixtures_dir / FIXTURE


@pytest.mark.slow  # trains twice: ~20-40 s
def test_classification_cut_batches_match_fixed(fixture, mrpc_slice,  # noqa: F811
                                                tmp_path):
    from bert_tf1.tasks.classification import ClassificationTask

    def make_task(dynamic):
        config = test_classification.make_config(
            fixture, mrpc_slice, tmp_path / f"out_{dynamic}", do_train=True,
            max_seq_length=128, train_batch_size=5, num_train_epochs=0.75,
            eval_batch_size=5, dynamic_padding=dynamic,
            bert_config_file=_no_dropout_config(fixture, tmp_path),
            runtime=RuntimeOptions(seed=1))
        return ClassificationTask(config)

    _compare(make_task, "eval", 5, 128)


@pytest.mark.slow  # trains twice: ~20-40 s
def test_tagging_cut_batches_match_fixed(fixture, wnut, tmp_path):  # noqa: F811
    from bert_tf1.tasks.tagging import TaggingTask

    train_file, dev_file = wnut

    def make_task(dynamic):
        config = test_tagging.make_config(
            fixture, tmp_path / f"out_{dynamic}", do_train=True,
            train_file=train_file, eval_file=dev_file, max_seq_length=64,
            doc_stride=32, train_batch_size=8, dynamic_padding=dynamic,
            num_train_epochs=3 * 8 / 40,
            bert_config_file=_no_dropout_config(fixture, tmp_path),
            runtime=RuntimeOptions(seed=1))
        return TaggingTask(config)

    _compare(make_task, "eval", 5, 64)


@pytest.mark.slow  # trains twice: ~20-40 s
def test_multiple_choice_cut_batches_match_fixed(fixture, tmp_path, data_dir):
    from bert_tf1.tasks.multiple_choice import MultipleChoiceTask

    swag_file = data_dir / "multiple_choice/swag/swag.csv"

    def make_task(dynamic):
        config = test_multiple_choice.make_config(
            fixture, tmp_path / f"out_{dynamic}", data_format="swag",
            train_file=swag_file, eval_file=swag_file, do_train=True,
            train_batch_size=3,
            num_train_epochs=1.0, max_seq_length=96, dynamic_padding=dynamic,
            bert_config_file=_no_dropout_config(fixture, tmp_path),
            runtime=RuntimeOptions(seed=1))
        return MultipleChoiceTask(config)

    _compare(make_task, "eval", 4, 96)


@pytest.mark.slow  # predicts twice: ~10-20 s
def test_squad_cut_batches_match_fixed_at_real_positions(fixtures_dir,
                                                          tmp_path):
    from tests.helpers.task_runner import fixture_flags, make_task

    squad = fixtures_dir / "tf1_vocab_squad"
    outputs = []
    for dynamic in (False, True):
        task = make_task("run_squad.py", fixture_flags(
            squad, tmp_path / f"out_{dynamic}", do_predict=True,
            predict_file=squad / "squad_v1_windows" / "input.json",
            max_seq_length=128, doc_stride=48, predict_batch_size=7,
            dynamic_padding=dynamic))
        task.prepare()
        task.restore_weights()
        outputs.append(task.predict_logits("predict", 7)[0])
        task.close()
    mask = np.array([f.input_mask for f in task.features["predict"]], bool)
    assert not mask.all()
    for key in ("start_logits", "end_logits"):
        assert outputs[1][key].shape == outputs[0][key].shape
        np.testing.assert_allclose(outputs[1][key][mask],
                                   outputs[0][key][mask], atol=1e-5)
        # Positions cut off score lowest: no n-best slot for them.
        assert (outputs[1][key][~mask] == -10000.0).any()


def test_extract_features_cut_batches_match_fixed(fixtures_dir):
    from bert_tf1.data.extraction.features import InputFeatures, compute_layer_outputs
    from bert_tf1.modeling import BertConfig, BertModel, checkpoints

    fixture = fixtures_dir / FIXTURE
    model = BertModel(BertConfig.from_json_file(fixture / "bert_config.json"))
    checkpoints.load_tf1_checkpoint(model, fixture / "bert_model.ckpt",
                                    verbose=False)
    features = [InputFeatures(i, ["x"] * n, [5] * n + [0] * (64 - n),
                              [1] * n + [0] * (64 - n), [0] * 64)
                for i, n in enumerate([3, 17, 9, 40, 6])]
    fixed = list(compute_layer_outputs(model, features, [-1, 0], 2))
    cut = list(compute_layer_outputs(model, features, [-1, 0], 2,
                                     dynamic_padding=True))
    for feature, (_, fixed_rows), (_, cut_rows) in zip(features, fixed, cut):
        n = len(feature.tokens)
        for a, b in zip(fixed_rows, cut_rows):
            assert a.shape == b.shape == (64, a.shape[1])
            np.testing.assert_allclose(b[:n], a[:n], atol=1e-5)


def test_group_by_length_needs_cut_batches(fixture, mrpc_slice, tmp_path):  # noqa: F811
    from bert_tf1.tasks.classification import ClassificationTask
    from bert_tf1.tasks.errors import UserError

    task = ClassificationTask(test_classification.make_config(
        fixture, mrpc_slice, tmp_path / "out", do_train=True,
        group_by_length=True, dynamic_padding=False))
    with pytest.raises(UserError, match="--group_by_length needs cut "
                                        "batches"):
        task.prepare()


@pytest.mark.slow  # trains 4 steps: ~15-30 s
def test_group_by_length_trains_the_original_step_count(fixture, mrpc_slice,  # noqa: F811
                                                        tmp_path):
    from bert_tf1.tasks.classification import ClassificationTask

    task = ClassificationTask(test_classification.make_config(
        fixture, mrpc_slice, tmp_path / "out", do_train=True,
        max_seq_length=128, train_batch_size=5, num_train_epochs=1.0,
        group_by_length=True))
    task.prepare()
    examples = list(task.examples_of("train"))
    dataset, _ = task.make_dataset("train", examples, str(tmp_path),
                                   task.config.train_batch_size)
    # 20 examples / 5: stretches of 4 batches, each cut to its longest.
    lengths = [int(x["input_ids"].shape[1]) for x, _ in dataset.take(8)]
    assert max(lengths) < 128 and all(n % 8 == 0 for n in lengths)
    assert task.run()["train"]["global_step"] == 4  # int(20 / 5 * 1.0)
