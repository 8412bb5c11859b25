"""Two workers on 127.0.0.1 (TF_CONFIG) train like one process on the same batch.

Both workers and the one-process run are `tests/helpers/multi_worker_train.py`
subprocesses: the tiny fixture classifier, dropout off, 4 steps of a global
batch of 8 read from ONE TFRecord file (so it must be DATA-sharded), a
checkpoint every 2 steps.
"""
import json
import os
import sys

import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import REPO_ROOT
from tests.helpers.local_cluster import run_workers
from tests.helpers.script_runner import run_script, run_script_argv

WORKER = REPO_ROOT / "tests" / "helpers" / "multi_worker_train.py"
SEQ_LENGTH = 16
NUM_EXAMPLES = 40
TIMEOUT_S = 420
# Two workers sum their half-batch gradients in another order than one
# process sums the whole batch; after 4 Adam steps (lr 1e-3) weights and
# slots agree to float32 round-off, far below one step's change (~1e-3).
TOLERANCE = 1e-5


def _write_records(path, vocab_size):
    rng = np.random.default_rng(3)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(NUM_EXAMPLES):
            length = int(rng.integers(4, SEQ_LENGTH + 1))
            ids = [int(i) for i in rng.integers(1, vocab_size, length)]
            pad = [0] * (SEQ_LENGTH - length)
            feature = {
                "input_ids": ids + pad,
                "input_mask": [1] * length + pad,
                "segment_ids": [0] * (length // 2) + [1] * (length - length // 2) + pad,
                "label_ids": [int(rng.integers(0, 3))],
                "is_real_example": [1],
            }
            example = tf.train.Example(features=tf.train.Features(feature={
                key: tf.train.Feature(int64_list=tf.train.Int64List(value=value))
                for key, value in feature.items()}))
            writer.write(example.SerializeToString())


def _command(output_dir, train_file, fixture_dir, strategy):
    return [sys.executable, str(WORKER), f"--output_dir={output_dir}",
            f"--train_file={train_file}", f"--fixture_dir={fixture_dir}",
            f"--seq_length={SEQ_LENGTH}", f"--strategy={strategy}"]


def _run_cluster(output_dir, train_file, fixture_dir, tmp_path):
    return run_workers(_command(output_dir, train_file, fixture_dir,
                                "multi_worker_mirrored"), tmp_path, TIMEOUT_S)


def _tensors(prefix):
    reader = tf.train.load_checkpoint(str(prefix))
    return {name: reader.get_tensor(name)
            for name in reader.get_variable_to_shape_map()}


@pytest.fixture(scope="module")
def one_process_run(fixtures_dir, tmp_path_factory):
    """(train_file, output_dir) of the one-process reference run."""
    tmp_path = tmp_path_factory.mktemp("one_process")
    fixture_dir = fixtures_dir / "tf1_tiny_classifier"
    vocab_size = json.loads((fixture_dir / "bert_config.json").read_text())["vocab_size"]
    train_file = tmp_path / "train.tf_record"
    _write_records(train_file, vocab_size)
    single_dir = tmp_path / "single"
    # No cluster and no TF_CONFIG: a fork of the warm script server runs it
    # as a fresh `python multi_worker_train.py` would, without the imports.
    run_script("tests/helpers/multi_worker_train.py", dict(
        output_dir=single_dir, train_file=train_file, fixture_dir=fixture_dir,
        seq_length=SEQ_LENGTH, strategy="one_device"), timeout=TIMEOUT_S)
    return train_file, single_dir


def _max_diff(prefix, reference_prefix):
    cluster, reference = _tensors(prefix), _tensors(reference_prefix)
    assert sorted(cluster) == sorted(reference)
    diffs = {name: float(np.max(np.abs(cluster[name].astype(np.float64)
                                       - reference[name])))
             for name in reference}
    worst = max(diffs, key=diffs.get)
    return worst, diffs[worst]


@pytest.mark.slow
def test_two_workers_match_one_process(fixtures_dir, one_process_run, tmp_path):
    fixture_dir = fixtures_dir / "tf1_tiny_classifier"
    train_file, single_dir = one_process_run
    cluster_dir = tmp_path / "cluster"

    texts = _run_cluster(cluster_dir, train_file, fixture_dir, tmp_path)
    assert all("on strategy.run" in text for text in texts)

    # One checkpoint set, written by the chief alone: no temp or worker files.
    # Beside them the chief's TensorBoard events (one file) and, with
    # matplotlib, training_curves.png.
    names = sorted(path.name for path in cluster_dir.iterdir())
    events = [name for name in names if name.startswith("events.out.tfevents.")]
    assert len(events) == 1
    assert [name for name in names if name not in events
            and name != "training_curves.png"] == [
        "checkpoint", "model.ckpt-2.data-00000-of-00001",
        "model.ckpt-2.index", "model.ckpt-4.data-00000-of-00001",
        "model.ckpt-4.index", "predictions.npy"]
    state = tf.train.get_checkpoint_state(str(cluster_dir))
    assert os.path.basename(state.model_checkpoint_path) == "model.ckpt-4"

    assert int(_tensors(cluster_dir / "model.ckpt-4")["global_step"]) == 4
    reference = _tensors(single_dir / "model.ckpt-4")
    start = _tensors(fixture_dir / "bert_model.ckpt")
    moved = max(float(np.max(np.abs(reference[name] - start[name])))
                for name in reference if name in start and "adam" not in name
                and name != "global_step")
    assert moved > 1e-4  # training changed the weights
    worst, diff = _max_diff(cluster_dir / "model.ckpt-4", single_dir / "model.ckpt-4")
    print(f"multi-worker vs one process: max |diff| {diff:.3g} ({worst})")
    assert diff <= TOLERANCE, (worst, diff)

    # Predictions after training, each worker on its own: the chief's file.
    np.testing.assert_allclose(np.load(cluster_dir / "predictions.npy"),
                               np.load(single_dir / "predictions.npy"),
                               atol=TOLERANCE)

    # The checkpoint loads back into a fresh model and predicts the same.
    from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints
    config = BertConfig.from_json_file(fixture_dir / "bert_config.json")
    model = BertClassifier(config, num_labels=3)
    status = checkpoints.load_tf1_checkpoint(model, str(cluster_dir), verbose=False)
    assert not status.missing


@pytest.mark.slow
def test_mirrored_with_xla_matches_one_process(fixtures_dir, one_process_run,
                                               tmp_path):
    # Keras 3 fit(jit_compile=True) over 2 replicas fails ("Trying to access
    # resource .../replica_1 ... from device CPU:0"): the strategy.run loop
    # compiles only each replica's gradients.
    train_file, single_dir = one_process_run
    output_dir = tmp_path / "mirrored_xla"
    # In a fork of the warm script server: its runtime is not started, so
    # the run sets its 2 logical CPUs as a fresh interpreter would.
    process = run_script_argv(
        "tests/helpers/multi_worker_train.py",
        *_command(output_dir, train_file, fixtures_dir / "tf1_tiny_classifier",
                  "mirrored")[2:], "--use_xla", "--logical_cpus=2",
        timeout=TIMEOUT_S)
    assert process.returncode == 0, process.stderr[-5000:]
    assert "with 2 replica(s)" in process.stderr
    assert "on strategy.run" in process.stderr
    worst, diff = _max_diff(output_dir / "model.ckpt-4", single_dir / "model.ckpt-4")
    print(f"mirrored + XLA vs one process: max |diff| {diff:.3g} ({worst})")
    assert diff <= TOLERANCE, (worst, diff)
