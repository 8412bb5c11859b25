"""run_pretraining.py's work (bert_tf1.tasks.pretraining) against the original's
model outputs and file formats, in-process from the script's flags
(tests/helpers/task_runner.py); the script itself runs in tests/scripts/test_script_smoke.py.

Ground truth: shared/fixtures/tf1_tiny_pretraining (checkpoint and the
original model's log-probabilities and losses for three reference rows).
"""
import collections

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.io.tfrecord import RecordFileWriter
from bert_tf1.data.pretraining import records as pretraining_records
from bert_tf1.tasks.errors import UserError, one_line
from bert_tf1.tasks.pretraining import (PretrainingConfig, PretrainingMetrics,
                                        PretrainingTask)
from tests.helpers.task_runner import run_task

FIXTURE = "tf1_tiny_pretraining"
EVAL_KEYS = {"global_step", "loss", "masked_lm_accuracy", "masked_lm_loss",
             "next_sentence_accuracy", "next_sentence_loss"}


@pytest.fixture(scope="module")
def reference(fixtures_dir):
    return dict(np.load(fixtures_dir / FIXTURE / "reference_outputs.npz"))


def write_reference_records(reference, path):
    """The three reference rows as a pre-training TFRecord (seq 24, P 4)."""
    with RecordFileWriter([str(path)]) as writer:
        for row in range(3):
            features = collections.OrderedDict()
            for key in ("input_ids", "input_mask", "segment_ids",
                        "masked_lm_positions", "masked_lm_ids"):
                features[key] = [int(x) for x in reference[key][row]]
            features["masked_lm_weights"] = [
                float(x) for x in reference["masked_lm_weights"][row]]
            features["next_sentence_labels"] = [
                int(reference["next_sentence_labels"][row])]
            writer.write(pretraining_records.serialize_features(features))
        writer.commit()


def per_example_values(reference):
    """Per-row masked-LM and next-sentence values from the original's outputs."""
    log_probs = reference["masked_lm_log_probs"].astype(np.float64).reshape(
        3, 4, -1)
    ids = reference["masked_lm_ids"]
    weights = reference["masked_lm_weights"].astype(np.float64)
    mlm_loss = -np.take_along_axis(log_probs, ids[..., None], -1)[..., 0]
    mlm_correct = log_probs.argmax(-1) == ids
    nsp = reference["next_sentence_log_probs"].astype(np.float64)
    labels = reference["next_sentence_labels"]
    nsp_loss = -nsp[np.arange(3), labels]
    nsp_correct = nsp.argmax(-1) == labels
    return weights, mlm_loss, mlm_correct, nsp_loss, nsp_correct


def expected_eval_results(reference, batches):
    """The original's metric_fn + Estimator loss over batches of row ids."""
    weights, mlm_loss, mlm_correct, nsp_loss, nsp_correct = (
        per_example_values(reference))
    rows = np.concatenate(batches)
    batch_losses = [
        (weights[b] * mlm_loss[b]).sum() / (weights[b].sum() + 1e-5)
        + nsp_loss[b].mean() for b in batches]
    return {
        "loss": np.mean(batch_losses),
        "masked_lm_accuracy": (weights[rows] * mlm_correct[rows]).sum()
        / weights[rows].sum(),
        "masked_lm_loss": (weights[rows] * mlm_loss[rows]).sum()
        / weights[rows].sum(),
        "next_sentence_accuracy": nsp_correct[rows].mean(),
        "next_sentence_loss": nsp_loss[rows].mean(),
    }


def read_eval_results(path):
    lines = path.read_text().splitlines()
    keys = [line.split(" = ")[0] for line in lines]
    assert keys == sorted(keys)
    return {key: float(value) for key, value in
            (line.split(" = ") for line in lines)}


def test_metrics_match_the_original_losses(reference):
    metrics = PretrainingMetrics()
    metrics.update(reference["masked_lm_log_probs"],
                   reference["masked_lm_ids"], reference["masked_lm_weights"],
                   reference["next_sentence_log_probs"],
                   reference["next_sentence_labels"])
    result = metrics.result()
    # The training loss of the original (with its + 1e-5) is `loss`.
    assert result["loss"] == pytest.approx(
        float(reference["masked_lm_loss"] + reference["next_sentence_loss"]),
        abs=1e-5)
    assert result["next_sentence_loss"] == pytest.approx(
        float(reference["next_sentence_loss"]), abs=1e-6)
    total_weight = float(reference["masked_lm_weights"].sum())  # 11
    assert result["masked_lm_loss"] == pytest.approx(
        float(reference["masked_lm_loss"]) * (total_weight + 1e-5)
        / total_weight, abs=1e-6)
    # The zero-weight 12th prediction is wrong and must not count.
    assert result["masked_lm_accuracy"] == 1.0
    assert result["next_sentence_accuracy"] == pytest.approx(2 / 3)


def test_metrics_without_batches_raise():
    with pytest.raises(ValueError, match="no evaluation batch"):
        PretrainingMetrics().result()


def test_eval_reproduces_original_metrics(tmp_path, fixtures_dir, reference):
    records = tmp_path / "reference.tfrecord"
    write_reference_records(reference, records)
    fixture = fixtures_dir / FIXTURE
    run_task("run_pretraining.py", {
        "input_file": records, "output_dir": tmp_path / "out",
        "bert_config_file": fixture / "bert_config.json",
        "init_checkpoint": fixture / "bert_model.ckpt", "do_eval": True,
        "max_seq_length": 24, "max_predictions_per_seq": 4,
        "eval_batch_size": 2, "max_eval_steps": 3})
    results = read_eval_results(tmp_path / "out/eval_results.txt")
    assert set(results) == EVAL_KEYS
    assert results["global_step"] == 0
    # The eval input repeats in file order: batches rows [0,1], [2,0], [1,2].
    expected = expected_eval_results(
        reference, [np.array([0, 1]), np.array([2, 0]), np.array([1, 2])])
    for key, value in expected.items():
        assert results[key] == pytest.approx(value, abs=1e-5), key


@pytest.mark.slow  # trains 4 steps
def test_train_checkpoints_and_dynamic_masking(tmp_path, fixtures_dir,
                                               reference, caplog):
    records = tmp_path / "reference.tfrecord"
    write_reference_records(reference, records)
    fixture = fixtures_dir / FIXTURE
    # A vocab laid out like the released ones ([CLS]=101 ... [MASK]=103).
    words = (["[PAD]"] + ["[unused%d]" % i for i in range(99)]
             + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    words += ["w%d" % i for i in range(512 - len(words))]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(words) + "\n", encoding="utf-8")
    output_dir = tmp_path / "out"
    flags = {
        "input_file": records, "output_dir": output_dir,
        "bert_config_file": fixture / "bert_config.json",
        "init_checkpoint": fixture / "bert_model.ckpt",
        "max_seq_length": 24, "max_predictions_per_seq": 4,
        "train_batch_size": 2, "eval_batch_size": 3, "max_eval_steps": 1,
        "num_warmup_steps": 1, "learning_rate": 1e-3,
        "save_checkpoints_steps": 2, "do_train": True,
    }
    # absl's own logger too: an earlier test in the session may have left it
    # at a higher level than the root logger's.
    caplog.set_level("INFO")
    caplog.set_level("INFO", logger="absl")
    run_task("run_pretraining.py", dict(
        flags, num_train_steps=4, do_eval=True, dynamic_masking=True,
        vocab_file=vocab))
    results = read_eval_results(output_dir / "eval_results.txt")
    assert set(results) == EVAL_KEYS and results["global_step"] == 4
    assert all(np.isfinite(v) for v in results.values())
    reader = tf.train.load_checkpoint(str(output_dir / "model.ckpt-4"))
    assert int(reader.get_tensor("global_step")) == 4
    assert reader.has_tensor("cls/predictions/output_bias/adam_m")
    assert reader.has_tensor("bert/embeddings/word_embeddings/adam_v")
    # The weights moved away from the initial checkpoint.
    start = tf.train.load_checkpoint(str(fixture / "bert_model.ckpt"))
    name = "cls/seq_relationship/output_weights"
    assert not np.allclose(reader.get_tensor(name), start.get_tensor(name))

    # Resuming is bert_tf1/modeling/training.s (tests/modeling/training/test_training.py).
    assert "Training from step 0 to 4" in caplog.text


def test_flag_errors(tmp_path, fixtures_dir):
    fixture = fixtures_dir / FIXTURE
    records = tmp_path / "empty.tfrecord"
    records.write_bytes(b"")
    base = {"input_file": records, "output_dir": tmp_path / "out",
            "bert_config_file": fixture / "bert_config.json",
            "max_seq_length": 24}
    # User errors: the script prints each as one line and exits with 1.
    with pytest.raises(UserError) as error:
        run_task("run_pretraining.py", base)
    assert "`do_train` or `do_eval`" in one_line(error.value)
    with pytest.raises(UserError) as error:
        run_task("run_pretraining.py",
                 dict(base, do_eval=True, max_seq_length=128))
    assert "max_position_embeddings" in one_line(error.value)


def _config(fixtures_dir, records, output_dir, **fields):
    fixture = fixtures_dir / FIXTURE
    values = dict(input_file=str(records), output_dir=str(output_dir),
                  bert_config_file=str(fixture / "bert_config.json"),
                  init_checkpoint=str(fixture / "bert_model.ckpt"),
                  max_seq_length=24, max_predictions_per_seq=4)
    values.update(fields)
    return PretrainingConfig(**values)


def test_input_checks_before_any_file(fixtures_dir, reference, tmp_path):
    records = tmp_path / "reference.tfrecord"
    write_reference_records(reference, records)
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    cases = [
        (dict(input_file=str(tmp_path / "none*.tfrecord")), "matches no file"),
        (dict(input_file=str(empty)), "empty.tfrecord: file is empty"),
        # Records written at 24 read with 16: named file, feature, lengths.
        (dict(max_seq_length=16), r"reference\.tfrecord.*input_ids.* 24"),
        (dict(dynamic_masking=True, do_train=True), "needs --vocab_file"),
    ]
    for fields, message in cases:
        fields.setdefault("do_eval", True)
        task = PretrainingTask(_config(fixtures_dir, records, tmp_path / "out",
                                       **fields))
        with pytest.raises(ValueError, match=message):
            task.prepare()
    assert not (tmp_path / "out").exists()
