"""run_classifier.py as a cluster job meets it: a second run on the same
output_dir is refused, SIGTERM stops after the current step with a checkpoint
and exit status 143, the same command resumes; a diverging run stops naming
the step; `--seed` makes two runs bit-identical."""
import os
import re
import signal
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

from tests.conftest import REPO_ROOT
from tests.helpers.script_runner import (assert_one_line_error, run_script,
                                         start_process)

pytestmark = pytest.mark.slow

ROWS = ("1\t1\t2\tThe cat sat on the mat.\tA cat was on the mat.\n"
        "0\t3\t4\tIt rained all day.\tThe sun was out.\n")
HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"


def _flags(fixtures_dir, tmp_path, **extra):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    data = tmp_path / "glue"
    data.mkdir(exist_ok=True)
    (data / "train.tsv").write_text(HEADER + ROWS * 4, encoding="utf-8")
    (data / "dev.tsv").write_text(HEADER + ROWS, encoding="utf-8")
    flags = {"task_name": "MRPC", "data_dir": data,
             "vocab_file": fixture / "vocab.txt",
             "bert_config_file": fixture / "bert_config.json",
             "init_checkpoint": fixture / "bert_model.ckpt",
             "output_dir": tmp_path / "out", "max_seq_length": 16,
             "train_batch_size": 2, "do_train": True}
    flags.update(extra)
    return flags


def _start(flags, log):
    argv = [sys.executable, str(REPO_ROOT / "run_classifier.py")]
    argv += [f"--{key}={str(value).lower() if isinstance(value, bool) else value}"
             for key, value in flags.items()]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=str(REPO_ROOT))
    with open(os.devnull, "w") as stdout, open(log, "w") as stderr:
        return start_process(argv, env, stdout, stderr)


def _wait_for(log, pattern, process, timeout_s=600):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        match = re.search(pattern, log.read_text(errors="replace"))
        if match:
            return match
        if process.poll() is not None:
            break
        time.sleep(0.1)
    pytest.fail(f"no {pattern!r} in the log:\n" + log.read_text()[-3000:])


def _weights(prefix):
    reader = tf.train.load_checkpoint(str(prefix))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def test_second_writer_refused_then_sigterm_then_resume(fixtures_dir, tmp_path):
    # 8 examples / batch 2 * 500 epochs = 2000 steps: far more than run here.
    flags = _flags(fixtures_dir, tmp_path, num_train_epochs=500,
                   save_checkpoints_steps=100000)
    out = flags["output_dir"]
    log = tmp_path / "first.log"
    first = _start(flags, log)
    try:
        _wait_for(log, r"Training from step 0 to 2000", first)
        # A second run on the same folder: one line naming the first.
        second = run_script("run_classifier.py", flags, check=False, timeout=600)
        assert_one_line_error(second, str(out), f"pid {first.pid}")
        time.sleep(2)
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=300) == 143
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    lines = log.read_text().rstrip().splitlines()
    match = re.fullmatch(r"run_classifier\.py: stopped by SIGTERM after step "
                         r"(\d+): wrote the checkpoint (\S+); run the same command "
                         r"again to resume from it \(exit status 143\)", lines[-1])
    assert match, lines[-3:]
    step = int(match.group(1))
    assert 0 < step < 2000
    assert match.group(2) == str(out / f"model.ckpt-{step}")
    assert not (out / ".bert-lock").exists()
    saved = _weights(out / f"model.ckpt-{step}")
    assert int(saved["global_step"]) == step

    # The same command resumes from that step (here with a total just above
    # it, so that the test stays short).
    rerun = run_script("run_classifier.py", dict(
        flags, num_train_epochs=(step + 2) / 4, do_eval=True), timeout=600)
    assert f"Resuming training from {out / f'model.ckpt-{step}'}" in rerun.stderr
    assert f"Training from step {step} to {step + 2}" in rerun.stderr
    assert (out / "eval_results.txt").exists()


def test_diverging_run_stops_naming_the_step(fixtures_dir, tmp_path):
    flags = _flags(fixtures_dir, tmp_path, num_train_epochs=25, learning_rate=1e6,
                   warmup_proportion=0.0, save_checkpoints_steps=1, do_eval=True)
    process = run_script("run_classifier.py", flags, check=False, timeout=600)
    assert_one_line_error(process, "training diverged", "at step")
    step = int(re.search(r"at step (\d+)", process.stderr.splitlines()[-1]).group(1))
    out = flags["output_dir"]
    assert not (out / f"model.ckpt-{step}.index").exists()
    assert not (out / "eval_results.txt").exists()
    for index in out.glob("model.ckpt-*.index"):
        for name, value in _weights(str(index)[:-len(".index")]).items():
            if value.dtype.kind == "f":
                assert np.isfinite(value).all(), (index.name, name)


def test_seed_gives_bit_identical_weights(fixtures_dir, tmp_path):
    runs = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        folder = tmp_path / name
        folder.mkdir()
        flags = _flags(fixtures_dir, folder, num_train_epochs=2, seed=seed)
        runs[name] = (_start(flags, folder / "log"), flags["output_dir"], folder / "log")
    weights = {}
    for name, (process, out, log) in runs.items():
        assert process.wait(timeout=900) == 0, log.read_text()[-3000:]
        weights[name] = _weights(out / "model.ckpt-8")
    assert weights["a"].keys() == weights["b"].keys()
    for key in weights["a"]:
        np.testing.assert_array_equal(weights["a"][key], weights["b"][key], err_msg=key)
    # The seed matters: another one trains to other weights (dropout, the
    # shuffle and the new head's initialisation all differ).
    assert not np.array_equal(weights["a"]["output_weights"], weights["c"]["output_weights"])
    kernel = "bert/encoder/layer_0/attention/self/query/kernel"
    assert not np.array_equal(weights["a"][kernel], weights["c"][kernel])
