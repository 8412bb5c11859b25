"""The scripts as a user runs them on two workers: 127.0.0.1, TF_CONFIG.

Two `run_classifier.py` processes train, evaluate and predict MRPC-shaped data
with the tiny vocab fixture under --distribution_strategy=multi_worker_mirrored
and one shared output_dir: the chief alone writes the checkpoints and result
files, the other worker's intermediate files go to a temporary folder that is
removed. Then two `run_pretraining.py` processes (the multi-worker strategy
must be created before the input checks read the record files).
"""
import sys

import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import REPO_ROOT
from tests.helpers.local_cluster import run_workers

TIMEOUT_S = 300
NUM_TRAIN, NUM_DEV, NUM_TEST = 24, 10, 11


def _output_names(output_dir):
    """output_dir's names; the chief's TensorBoard event file (one) as
    "<one event file>", training_curves.png (drawn with matplotlib) left out."""
    names = sorted(path.name for path in output_dir.iterdir())
    events = [name for name in names if name.startswith("events.out.tfevents.")]
    rest = [name for name in names if name not in events
            and name != "training_curves.png"]
    return sorted(rest + ["<one event file>"] * len(events))


def _run_workers(script, flags, tmp_path):
    """Runs `script` as worker 0 and 1 of a local cluster; returns their logs.

    Each worker's TMPDIR is its own folder under tmp_path, checked to be
    empty afterwards (the non-chief's temporary folder was removed).
    """
    argv = [sys.executable, str(REPO_ROOT / script)] + [
        f"--{key}={value}" for key, value in flags.items()]
    texts = run_workers(argv, tmp_path, TIMEOUT_S, temp_dirs=True)
    for index in range(2):
        left = list((tmp_path / f"tmp{index}").iterdir())
        assert not left, (index, left)
    return texts


def _mrpc_subset(data_dir, folder):
    folder.mkdir()
    for name, count in (("train.tsv", NUM_TRAIN), ("dev.tsv", NUM_DEV),
                        ("test.tsv", NUM_TEST)):
        lines = (data_dir / "glue/MRPC" / name).read_text(
            encoding="utf-8-sig").splitlines(keepends=True)
        (folder / name).write_text("".join(lines[:count + 1]), encoding="utf-8")


@pytest.mark.slow
def test_run_classifier_on_two_workers(fixtures_dir, data_dir, tmp_path):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    _mrpc_subset(data_dir, tmp_path / "MRPC")
    output_dir = tmp_path / "out"
    texts = _run_workers("run_classifier.py", {
        "task_name": "MRPC", "data_dir": tmp_path / "MRPC",
        "vocab_file": fixture / "vocab.txt",
        "bert_config_file": fixture / "bert_config.json",
        "init_checkpoint": fixture / "bert_model.ckpt",
        "output_dir": output_dir, "do_train": "true", "do_eval": "true",
        "do_predict": "true", "max_seq_length": 32, "train_batch_size": 8,
        "num_train_epochs": 1.0, "save_checkpoints_steps": 2,
        "eval_batch_size": 4, "predict_batch_size": 4,
        "distribution_strategy": "multi_worker_mirrored"}, tmp_path)
    assert all("on strategy.run" in text for text in texts)

    # 24 examples / batch 8 x 1 epoch = 3 steps; a checkpoint at 2 and 3,
    # written once (by the chief); the intermediate files are the chief's.
    names = _output_names(output_dir)
    expected = ["<one event file>", "bert_config.json", "checkpoint", "eval",
                "eval.tf_record", "eval_predictions.tsv", "eval_results.txt",
                "init_checkpoint.txt", "label_list.txt",
                "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index",
                "model.ckpt-3.data-00000-of-00001", "model.ckpt-3.index",
                "predict.tf_record", "test_results.tsv",
                "tokenizer_config.json", "train.tf_record",
                "training_settings.json", "vocab.txt"]
    assert names == expected
    state = tf.train.get_checkpoint_state(str(output_dir))
    assert state.model_checkpoint_path.endswith("model.ckpt-3")
    assert sum(1 for _ in tf.data.TFRecordDataset(
        str(output_dir / "eval.tf_record"))) == NUM_DEV

    results = dict(line.split(" = ") for line in
                   (output_dir / "eval_results.txt").read_text().splitlines())
    assert results["global_step"] == "3"
    assert 0.0 <= float(results["eval_accuracy"]) <= 1.0
    rows = np.array([line.split("\t") for line in
                     (output_dir / "test_results.tsv").read_text().splitlines()],
                    np.float64)
    assert rows.shape == (NUM_TEST, 2)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-5)

    # Both workers predicted; only one wrote.
    wrote = [text.count(f"Wrote {NUM_TEST} predictions") for text in texts]
    assert sorted(wrote) == [0, 1], wrote


@pytest.mark.slow
def test_run_pretraining_on_two_workers(fixtures_dir, tmp_path):
    from tests.tasks.test_pretraining import FIXTURE, write_reference_records

    fixture = fixtures_dir / FIXTURE
    reference = dict(np.load(fixture / "reference_outputs.npz"))
    records = tmp_path / "records.tfrecord"
    write_reference_records(reference, records)
    output_dir = tmp_path / "out"
    texts = _run_workers("run_pretraining.py", {
        "input_file": records, "output_dir": output_dir,
        "bert_config_file": fixture / "bert_config.json",
        "init_checkpoint": fixture / "bert_model.ckpt",
        "do_train": "true", "do_eval": "true", "max_seq_length": 24,
        "max_predictions_per_seq": 4, "train_batch_size": 2,
        "num_train_steps": 2, "num_warmup_steps": 1, "eval_batch_size": 2,
        "max_eval_steps": 1, "optimizer_type": "lamb",
        "distribution_strategy": "multi_worker_mirrored"}, tmp_path)
    assert all("on strategy.run" in text for text in texts)

    names = _output_names(output_dir)
    assert names == ["<one event file>", "checkpoint", "eval", "eval_results.txt",
                     "init_checkpoint.txt",
                     "model.ckpt-2.data-00000-of-00001", "model.ckpt-2.index"]
    reader = tf.train.load_checkpoint(str(output_dir / "model.ckpt-2"))
    assert int(reader.get_tensor("global_step")) == 2
    results = dict(line.split(" = ") for line in
                   (output_dir / "eval_results.txt").read_text().splitlines())
    assert results["global_step"] == "2"
    assert np.isfinite(float(results["loss"]))
