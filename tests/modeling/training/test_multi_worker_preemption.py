"""SIGTERM to one worker of a multi-worker run: all workers stop after the same
step, the chief writes that checkpoint, and every worker exits with 143."""
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import checkpoints
from tests.conftest import REPO_ROOT
from tests.helpers.local_cluster import free_ports, worker_env
from tests.helpers.script_runner import start_process

WORKER = REPO_ROOT / "tests" / "helpers" / "multi_worker_train.py"
SEQ_LENGTH = 16


def _write_records(path, vocab_size, count=32):
    rng = np.random.default_rng(5)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for _ in range(count):
            feature = {
                "input_ids": [int(i) for i in rng.integers(1, vocab_size, SEQ_LENGTH)],
                "input_mask": [1] * SEQ_LENGTH, "segment_ids": [0] * SEQ_LENGTH,
                "label_ids": [int(rng.integers(0, 3))], "is_real_example": [1]}
            writer.write(tf.train.Example(features=tf.train.Features(feature={
                key: tf.train.Feature(int64_list=tf.train.Int64List(value=value))
                for key, value in feature.items()})).SerializeToString())


def _wait_for(path, pattern, processes, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if re.search(pattern, path.read_text(errors="replace")):
            return
        if any(process.poll() is not None for process in processes):
            break
        time.sleep(0.2)
    pytest.fail(f"no {pattern!r} in {path.name}:\n" + path.read_text()[-3000:])


@pytest.mark.slow
def test_sigterm_to_one_worker_stops_all_after_the_same_step(fixtures_dir, tmp_path):
    fixture = fixtures_dir / "tf1_tiny_classifier"
    train_file = tmp_path / "train.tf_record"
    _write_records(train_file, vocab_size=512)
    output_dir = tmp_path / "out"
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{port}" for port in ports]}
    argv = [sys.executable, str(WORKER), f"--output_dir={output_dir}",
            f"--train_file={train_file}", f"--fixture_dir={fixture}",
            f"--seq_length={SEQ_LENGTH}", "--strategy=multi_worker_mirrored",
            "--num_train_steps=100000", "--save_checkpoints_steps=100000"]
    logs = [tmp_path / f"worker{index}.log" for index in range(2)]
    processes = []
    try:
        for index in range(2):
            env = worker_env({"cluster": cluster,
                              "task": {"type": "worker", "index": index}})
            with open(logs[index], "w") as log:
                processes.append(start_process(argv, env, log,
                                               subprocess.STDOUT))
        _wait_for(logs[1], r"Training from step 0 to 100000", processes, 400)
        time.sleep(3)  # a few steps in
        processes[1].send_signal(signal.SIGTERM)   # the non-chief only
        codes = [process.wait(timeout=300) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    texts = [log.read_text(errors="replace") for log in logs]
    assert codes == [143, 143], "\n\n".join(text[-3000:] for text in texts)
    steps = [int(re.search(r"STOPPED: stopped by SIGTERM after step (\d+)", text).group(1))
             for text in texts]
    assert steps[0] == steps[1] > 0
    # The chief wrote that step's checkpoint, listed as the newest.
    prefix = str(output_dir / f"model.ckpt-{steps[0]}")
    assert f"wrote the checkpoint {prefix}" in texts[0]
    assert checkpoints.newest_listed(output_dir) == prefix
    assert int(tf.train.load_checkpoint(prefix).get_tensor("global_step")) == steps[0]
