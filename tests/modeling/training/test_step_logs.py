"""Step logs and TensorBoard scalars: each logged loss is the mean since the last line.

The model's loss is the mean of the batch's labels (plus 0 x its logits, so
there are gradients), and batch b (1, 2, 3, ...) has every label equal to b:
step N's loss is N, the mean of steps M+1..N is (M + 1 + N) / 2, while
Keras' running mean would be (N + 1) / 2.
"""
import os
import re
import subprocess
import sys
import textwrap
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertClassifier, BertConfig
from bert_tf1.modeling.optimization import create_optimizer
from bert_tf1.modeling.training import loop, run_training
from bert_tf1.modeling.training.runtime import RuntimeOptions
from tests.conftest import REPO_ROOT

SEQ = 4
BATCH = 2
LINE = re.compile(r"loss = ([-+.\deinfa]+), step = (\d+) \(([\d.]+) sec\), "
                  r"global_step/sec: ([-+.\deinfa]+), examples/sec: ([-+.\deinfa]+)")


class BatchIndexLoss(BertClassifier):
    """Loss = mean of the labels; the logits enter with weight 0."""

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        return (keras.ops.mean(keras.ops.cast(y, "float32"))
                + 0.0 * keras.ops.sum(y_pred))


def _batches(config):
    def batch(index):
        features = {
            "input_ids": tf.fill([BATCH, SEQ], 5),
            "input_mask": tf.ones([BATCH, SEQ], tf.int32),
            "segment_ids": tf.zeros([BATCH, SEQ], tf.int32),
        }
        return features, tf.fill([BATCH], tf.cast(index, tf.int32))
    return tf.data.Dataset.range(1, 1000).map(batch)


def _train(fixtures_dir, output_dir, steps, total=20, accumulation=1, **options):
    config = BertConfig.from_json_file(fixtures_dir / "tf1_tiny_classifier/bert_config.json")
    model = BatchIndexLoss(config, num_labels=3)
    optimizer = create_optimizer(1e-3, total, 0,
                                 gradient_accumulation_steps=accumulation)
    options = RuntimeOptions(keep_checkpoint_max=0,
                             gradient_accumulation_steps=accumulation,
                             **options)
    return run_training(model, optimizer, _batches(config), steps,
                        str(output_dir), options, batch_size=BATCH, verbose=0)


def _logged(caplog):
    return [(int(m.group(2)), float(m.group(1)))
            for m in (LINE.search(r.getMessage()) for r in caplog.records) if m]


def _tensorboard_scalars(logdir, tag):
    # TensorBoard's own reader, not ours.
    from tensorboard.backend.event_processing import event_accumulator
    accumulator = event_accumulator.EventAccumulator(
        str(logdir), size_guidance={event_accumulator.TENSORS: 0},
        purge_orphaned_data=False)
    accumulator.Reload()
    return [(event.step, float(tf.make_ndarray(event.tensor_proto)))
            for event in accumulator.Tensors(tag)]


@pytest.fixture
def info_logs(caplog):
    caplog.set_level("INFO", logger="absl")
    return caplog


def test_each_step_logged_has_that_steps_loss(fixtures_dir, tmp_path, info_logs):
    result = _train(fixtures_dir, tmp_path, steps=5, log_steps=1,
                    save_checkpoints_steps=100)
    assert _logged(info_logs) == [(1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 5.0)]
    assert result["loss"] == pytest.approx(3.0)  # Keras' mean, still returned
    # TensorBoard: the same losses, and the rate each update used
    # (warm-up 0: lr * (1 - N / 20), the update to step N used step N's rate).
    assert _tensorboard_scalars(tmp_path, "loss") == [
        (1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 5.0)]
    rates = _tensorboard_scalars(tmp_path, "learning_rate")
    assert [step for step, _ in rates] == [1, 2, 3, 4, 5]
    np.testing.assert_allclose([rate for _, rate in rates],
                               [1e-3 * (1 - n / 20) for n in range(1, 6)],
                               rtol=1e-6)
    assert [s for s, _ in _tensorboard_scalars(tmp_path, "global_step/sec")] \
        == [1, 2, 3, 4, 5]


def test_steps_per_execution_logs_the_last_step_of_each_call(
        fixtures_dir, tmp_path, info_logs):
    # Callbacks see steps 2, 4, 6; lines are due after 3 and 6: the means
    # of steps 1-4 and 5-6.
    _train(fixtures_dir, tmp_path, steps=6, log_steps=3, steps_per_execution=2,
           save_checkpoints_steps=100)
    assert _logged(info_logs) == [(4, 2.5), (6, 5.5)]


def test_the_line_has_the_estimators_fields(fixtures_dir, tmp_path, info_logs):
    _train(fixtures_dir, tmp_path, steps=2, log_steps=2, save_checkpoints_steps=100)
    (match,) = [m for m in (LINE.search(r.getMessage()) for r in info_logs.records) if m]
    seconds, steps_per_sec, examples_per_sec = (float(match.group(i)) for i in (3, 4, 5))
    assert steps_per_sec == pytest.approx(2 / seconds, rel=0.05)
    assert examples_per_sec == pytest.approx(steps_per_sec * BATCH, rel=1e-3)


class SleepAfterStep(keras.callbacks.Callback):
    """Sleeps `seconds` at the end of global step `step` (an evaluation)."""

    def __init__(self, step, seconds):
        super().__init__()
        self._step, self._seconds = step, seconds

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) == self._step:
            time.sleep(self._seconds)


@pytest.mark.parametrize("steps", [4, 3], ids=["on_cadence", "last_step_off_cadence"])
def test_seconds_leave_out_evaluation_during_training(
        fixtures_dir, tmp_path, info_logs, steps):
    # A 2 s "evaluation" after step 2 (logged at 2): the window to the next
    # line (steps 3-4, or the final off-cadence step 3) is training only.
    config = BertConfig.from_json_file(fixtures_dir / "tf1_tiny_classifier/bert_config.json")
    model = BatchIndexLoss(config, num_labels=3)
    optimizer = create_optimizer(1e-3, 20, 0)
    started = time.perf_counter()
    run_training(model, optimizer, _batches(config), steps, str(tmp_path),
                 RuntimeOptions(keep_checkpoint_max=0, log_steps=2,
                                save_checkpoints_steps=100),
                 batch_size=BATCH, verbose=0,
                 callbacks=[SleepAfterStep(step=2, seconds=2.0)])
    wall = time.perf_counter() - started
    lines = {int(m.group(2)): float(m.group(3))
             for m in (LINE.search(r.getMessage()) for r in info_logs.records) if m}
    assert sorted(lines) == [2, steps]
    assert wall > 2.0
    assert 0 < lines[steps] < 1.0, lines


def test_the_last_step_is_logged_even_off_the_cadence(fixtures_dir, tmp_path, info_logs):
    # Means of steps 1-2, 3-4 and 5 (Keras' running mean: 1.5, 2.5, 3).
    _train(fixtures_dir, tmp_path, steps=5, log_steps=2, save_checkpoints_steps=100)
    assert _logged(info_logs) == [(2, 1.5), (4, 3.5), (5, 5.0)]


def test_gradient_accumulation_logs_the_mean_of_the_updates_batches(
        fixtures_dir, tmp_path, info_logs):
    # Update N averages batches 2N-1 and 2N: loss 2N - 0.5; lines every 2
    # updates average 4 batches.
    _train(fixtures_dir, tmp_path, steps=3, accumulation=2, log_steps=1,
           save_checkpoints_steps=100)
    assert _logged(info_logs) == [(1, 1.5), (2, 3.5), (3, 5.5)]
    info_logs.clear()
    _train(fixtures_dir, tmp_path / "every_2", steps=3, accumulation=2,
           log_steps=2, save_checkpoints_steps=100)
    assert _logged(info_logs) == [(2, 2.5), (3, 5.5)]


def test_strategy_run_loop_logs_the_same(fixtures_dir, tmp_path, info_logs,
                                         monkeypatch):
    monkeypatch.setattr(loop, "needs_strategy_loop", lambda strategy, options: True)
    _train(fixtures_dir, tmp_path, steps=4, log_steps=1, steps_per_execution=2,
           save_checkpoints_steps=100)
    assert _logged(info_logs) == [(2, 1.5), (4, 3.5)]
    info_logs.clear()
    _train(fixtures_dir, tmp_path / "accumulated", steps=2, accumulation=2,
           log_steps=1, save_checkpoints_steps=100)
    assert _logged(info_logs) == [(1, 1.5), (2, 3.5)]


def _forget_newest_checkpoint(output_dir, keep_step):
    # What a run killed after logging past its last checkpoint leaves.
    for path in output_dir.glob("model.ckpt-*"):
        if not path.name.startswith(f"model.ckpt-{keep_step}."):
            path.unlink()
    (output_dir / "checkpoint").write_text(
        f'model_checkpoint_path: "model.ckpt-{keep_step}"\n'
        f'all_model_checkpoint_paths: "model.ckpt-{keep_step}"\n')


def test_resumed_run_draws_every_step_once(fixtures_dir, tmp_path):
    _train(fixtures_dir, tmp_path, steps=4, log_steps=1, save_checkpoints_steps=2)
    _forget_newest_checkpoint(tmp_path, 2)
    # Resumed from step 2; the data restarts (batch 1 at step 3), so the
    # second run's steps 3..5 have losses 1, 2, 3.
    _train(fixtures_dir, tmp_path, steps=5, log_steps=1, save_checkpoints_steps=2)
    losses = _tensorboard_scalars(tmp_path, "loss")
    assert losses == [(1, 1.0), (2, 2.0), (3, 1.0), (4, 2.0), (5, 3.0)]
    steps = [step for step, _ in _tensorboard_scalars(tmp_path, "learning_rate")]
    assert steps == sorted(set(steps)) == [1, 2, 3, 4, 5]
    # Training events are in output_dir itself (no train/ subfolder).
    assert list(tmp_path.glob("events.out.tfevents.*"))
    assert not (tmp_path / "train").exists()


def test_training_curves_png(fixtures_dir, tmp_path):
    pytest.importorskip("matplotlib", reason="training_curves.png needs the [plots] extra (pip install -e '.[plots]'; run_tests.sh installs it)")
    from bert_tf1.modeling.training import write_eval_summaries, write_training_curves
    _train(fixtures_dir, tmp_path, steps=3, log_steps=1, save_checkpoints_steps=100)
    png = tmp_path / "training_curves.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    first = png.stat().st_size
    write_eval_summaries(str(tmp_path), {"eval_accuracy": 0.5, "eval_loss": 1.0,
                                         "global_step": 3}, 3)
    assert write_training_curves(str(tmp_path)) == str(png)
    assert png.stat().st_size != first  # redrawn with the evaluation panel
    reference = tmp_path / "reference.txt"  # mode as any file open() makes
    reference.write_text("")
    assert png.stat().st_mode & 0o777 == reference.stat().st_mode & 0o777


def test_no_matplotlib_is_one_line_and_no_file(fixtures_dir, tmp_path, info_logs,
                                               monkeypatch):
    from bert_tf1.modeling.training import curves
    monkeypatch.setattr(curves, "_matplotlib_figure", lambda: None)
    _train(fixtures_dir, tmp_path, steps=1, log_steps=1, save_checkpoints_steps=100)
    assert not (tmp_path / "training_curves.png").exists()
    lines = [r.getMessage() for r in info_logs.records
             if "matplotlib is not installed" in r.getMessage()]
    assert len(lines) == 1 and "pip install" in lines[0], lines


PIPE_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, {repo!r})
    import tensorflow as tf
    from absl import logging
    from bert_tf1.modeling import BertClassifier, BertConfig
    from bert_tf1.modeling.optimization import create_optimizer
    from bert_tf1.modeling.training import RuntimeOptions, run_training
    logging.set_verbosity(logging.INFO)  # what a program asks to see the INFO lines
    config = BertConfig.from_json_file({config!r})
    features = {{"input_ids": tf.fill([4, 4], 5), "input_mask": tf.ones([4, 4], tf.int32),
                 "segment_ids": tf.zeros([4, 4], tf.int32)}}
    data = tf.data.Dataset.from_tensors((features, tf.zeros([4], tf.int32))).repeat()
    run_training(BertClassifier(config, 3), create_optimizer(1e-3, 3, 0), data, 3,
                 {out!r}, RuntimeOptions(log_steps=1), batch_size=4)
""")


@pytest.mark.slow
def test_python_api_prints_step_logs_when_stdout_is_a_pipe(fixtures_dir, tmp_path):
    script = PIPE_SCRIPT.format(
        repo=str(REPO_ROOT), out=str(tmp_path / "out"),
        config=str(fixtures_dir / "tf1_tiny_classifier/bert_config.json"))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    steps = [int(m.group(2)) for m in LINE.finditer(result.stderr)]
    assert steps == [1, 2, 3], result.stderr[-3000:]
    assert "Saved checkpoint" in result.stderr  # checkpoint lines too
