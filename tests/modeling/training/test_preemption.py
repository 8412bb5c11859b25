"""SIGTERM/SIGINT during training: the step finishes, a checkpoint is written,
the resume loses nothing; a second signal ends the process at once."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints
from bert_tf1.modeling.naming import tf1_name
from bert_tf1.modeling.optimization import create_optimizer
from bert_tf1.modeling.training import loop, preemption, run_training
from bert_tf1.modeling.training.runtime import RuntimeOptions
from tests.helpers.fixture_models import random_classifier_batches
from tests.conftest import REPO_ROOT


class SignalAt(keras.callbacks.Callback):
    """Sends `signum` to this process when global step `step` ends, and
    waits until the guard saw it (as a signal arriving during that step)."""

    def __init__(self, optimizer, guard, step, signum):
        super().__init__()
        self._optimizer, self._guard = optimizer, guard
        self._step, self._signum = step, signum
        self.sent = False

    def on_train_batch_end(self, batch, logs=None):
        if self.sent or int(self._optimizer.iterations.numpy()) != self._step:
            return
        os.kill(os.getpid(), self._signum)
        self.sent = True
        deadline = time.monotonic() + 10
        while not self._guard.requested and time.monotonic() < deadline:
            time.sleep(0.01)


@pytest.fixture
def signal_at(monkeypatch):
    """signal_at(step, signum): the next run_training gets that signal."""
    plan = {}

    def callbacks(model, optimizer, *args):
        made = original(model, optimizer, *args)
        plan["callback"] = SignalAt(optimizer, args[-1], plan["step"], plan["signum"])
        return [plan["callback"]] + made

    original = loop._callbacks
    monkeypatch.setattr(loop, "_callbacks", callbacks)

    def arm(step, signum=signal.SIGTERM):
        plan.update(step=step, signum=signum)
        return plan
    return arm


def _config(fixtures_dir):
    return BertConfig.from_json_file(fixtures_dir / "tf1_tiny_classifier/bert_config.json")


def _train(fixtures_dir, output_dir, total_steps, **options):
    config = _config(fixtures_dir)
    model = BertClassifier(config, num_labels=3)
    optimizer = create_optimizer(1e-3, total_steps, 1,
                                 gradient_accumulation_steps=options.pop("accumulate", 1))
    result = run_training(
        model, optimizer, random_classifier_batches(config), total_steps, str(output_dir),
        RuntimeOptions(save_checkpoints_steps=options.pop("save_every", 100), **options),
        batch_size=4, init_checkpoint=str(fixtures_dir / "tf1_tiny_classifier"),
        verbose=0)
    return model, optimizer, result


@pytest.mark.slow
@pytest.mark.parametrize("stop_step, signum, options", [
    (1, signal.SIGTERM, {}),
    (3, signal.SIGTERM, {"save_every": 2}),   # between two periodic saves
    (4, signal.SIGINT, {"save_every": 2}),    # on a periodic save
    (2, signal.SIGTERM, {"accumulate": 2}),   # stops at an optimizer step
], ids=["first_step", "between_saves", "sigint_on_a_save", "accumulation"])
def test_stop_after_the_current_step_then_resume(fixtures_dir, tmp_path, signal_at,
                                                 stop_step, signum, options):
    plan = signal_at(stop_step, signum)
    previous = signal.getsignal(signum)
    with pytest.raises(preemption.TrainingInterrupted) as stopped:
        model, optimizer, _ = _train(fixtures_dir, tmp_path, 6, **dict(options))
    assert plan["callback"].sent
    error = stopped.value
    assert error.step == stop_step and error.exit_status == 128 + signum
    prefix = str(tmp_path / f"model.ckpt-{stop_step}")
    assert error.checkpoint == prefix
    assert "run the same command again to resume" in str(error)
    assert checkpoints.newest_listed(tmp_path) == prefix
    reader = tf.train.load_checkpoint(prefix)
    assert int(reader.get_tensor("global_step")) == stop_step
    # The handlers are back as they were.
    assert signal.getsignal(signum) == previous

    # The same command again resumes from that step: nothing is lost.
    plan["step"] = -1  # no signal this time
    _, optimizer, result = _train(fixtures_dir, tmp_path, 6, **dict(options))
    assert result["global_step"] == 6
    assert checkpoints.newest_listed(tmp_path) == str(tmp_path / "model.ckpt-6")


@pytest.mark.slow
def test_checkpoint_of_the_stop_holds_the_weights_in_memory(fixtures_dir, tmp_path, signal_at):
    signal_at(2)
    config = _config(fixtures_dir)
    model = BertClassifier(config, num_labels=3)
    optimizer = create_optimizer(1e-3, 6, 1)
    with pytest.raises(preemption.TrainingInterrupted):
        run_training(model, optimizer, random_classifier_batches(config), 6, str(tmp_path),
                     RuntimeOptions(save_checkpoints_steps=100), batch_size=4,
                     verbose=0)
    reader = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-2"))
    for variable in model.trainable_weights:
        np.testing.assert_array_equal(reader.get_tensor(tf1_name(variable)), variable.numpy())
        np.testing.assert_array_equal(reader.get_tensor(tf1_name(variable) + "/adam_v"),
                                      optimizer.slot_variables(variable)["adam_v"].numpy())


_GUARDED = """
import os, signal, sys, time
sys.path.insert(0, {root!r})
from bert_tf1.modeling.training.preemption import PreemptionGuard
with PreemptionGuard() as guard:
    print("READY", flush=True)
    deadline = time.monotonic() + 60
    while not guard.requested and time.monotonic() < deadline:
        time.sleep(0.01)
    print("REQUESTED", guard.signal_number, flush=True)
    time.sleep(60)  # busy "finishing the step": a second signal ends it now
print("NOT REACHED", flush=True)
"""


def test_a_second_signal_ends_the_process_at_once(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), TF_CPP_MIN_LOG_LEVEL="2",
               CUDA_VISIBLE_DEVICES="")
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_GUARDED.format(root=str(REPO_ROOT)))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout.readline().strip() == "READY"
        process.send_signal(signal.SIGTERM)
        assert process.stdout.readline().split() == ["REQUESTED", str(int(signal.SIGTERM))]
        start = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 143
        # Not after the 60 s "step": at once (a loaded machine may be slow).
        assert time.monotonic() - start < 15
        assert "NOT REACHED" not in process.stdout.read()
        assert "again: stopping at once" in process.stderr.read()
    finally:
        process.kill()
        process.wait()


def test_outside_the_main_thread_signals_keep_their_handling():
    import threading

    seen = {}

    def run():
        with preemption.PreemptionGuard() as guard:
            seen["active"] = guard.active
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == {"active": False}
