"""Step logs as the original's Estimator wrote them: `loss = ..., step = N`.

The Estimator logged, every `log_step_count_steps` (100), the loss of the
step just taken and the global step (`LoggingTensorHook`), and
`global_step/sec` (`StepCounterHook`; TPUEstimator adds `examples/sec`).
Keras instead reports `logs["loss"]`, the running mean since the epoch began,
and only to the progress bar. Here:

- `StepLossTracker` replaces Keras' loss tracker in `model.fit`: it keeps
  Keras' running mean under `loss` (the progress bar and `History` are
  unchanged) and adds `step_loss`, the loss of the last completed global
  step. It is updated inside the compiled train step, so with
  `steps_per_execution` > 1 it is the loss of the last step of the
  execution (the step the callback sees), and with gradient accumulation the
  mean over the batches of that optimizer update.
- `StepLogger` logs one line every `log_steps` global steps through absl:
  `loss = 0.693147, step = 100 (4.213 sec), global_step/sec: 23.7,
  examples/sec: 759` and hands the same numbers (plus the learning rate) to
  a summary writer (`modeling.training.summaries`).

The lines are absl INFO lines. Nothing here configures logging (no handler,
no level): the scripts set absl's verbosity to INFO (`tasks/cli.py`, as the
original's `tf.logging.set_verbosity(tf.logging.INFO)`); a Python program
calls `absl.logging.set_verbosity(absl.logging.INFO)` to see them (absl's
first log call adds a stderr handler to a root logger that has none).
"""
import sys
import time

import keras
from absl import logging

from modeling import keras_internals

#: The key of the last completed step's loss in the train logs.
STEP_LOSS = "step_loss"


class StepLossTracker(keras.metrics.Metric):
    """Keras' training loss tracker plus the loss of the last global step.

    `update_state(loss, sample_weight)` is what Keras' train step calls on
    its tracker (the batch's loss, weighted by the batch size). `result()`
    is `{"loss": running mean (Keras' value), "step_loss": mean loss of
    the last `batches_per_step` batches once they are complete}`, float32
    scalars; `step_loss` is 0 until the first step completes. Under a
    mirrored strategy every replica tracks its own batch and Keras averages
    the replicas' results, which for equal replica batches is the global
    batch's loss.

    Args:
        batches_per_step: int >= 1, batches per optimizer update (gradient
            accumulation); the step loss averages them.
        name: the metric's name; "loss", the name of Keras' tracker.
    """

    def __init__(self, batches_per_step=1, name="loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.batches_per_step = max(1, int(batches_per_step))
        self.total = self.add_variable((), "zeros", "float32", name="total")
        self.count = self.add_variable((), "zeros", "float32", name="count")
        self.window_sum = self.add_variable((), "zeros", "float32",
                                            aggregation="mean",
                                            name="window_sum")
        self.window_batches = self.add_variable((), "zeros", "float32",
                                                aggregation="mean",
                                                name="window_batches")
        self.step_loss = self.add_variable((), "zeros", "float32",
                                           aggregation="mean", name="step_loss")

    def update_state(self, values, sample_weight=None):
        ops = keras.ops
        loss = ops.mean(ops.cast(values, "float32"))
        weight = (ops.cast(1.0, "float32") if sample_weight is None
                  else ops.cast(sample_weight, "float32"))
        self.total.assign_add(loss * weight)
        self.count.assign_add(weight)
        window_sum = self.window_sum + loss
        window_batches = self.window_batches + 1.0
        complete = window_batches >= self.batches_per_step
        self.step_loss.assign(ops.where(
            complete, window_sum / ops.maximum(window_batches, 1.0),
            self.step_loss))
        self.window_sum.assign(ops.where(complete, 0.0, window_sum))
        self.window_batches.assign(ops.where(complete, 0.0, window_batches))

    def result(self):
        ops = keras.ops
        return {"loss": ops.divide_no_nan(self.total, self.count),
                STEP_LOSS: ops.convert_to_tensor(self.step_loss)}

    def get_config(self):
        return {"name": self.name, "batches_per_step": self.batches_per_step}


def track_step_loss(model, batches_per_step=1):
    """Gives a compiled `model` a `StepLossTracker` (call under the strategy
    scope, after `compile`, before `fit`); returns the tracker."""
    tracker = StepLossTracker(batches_per_step)
    keras_internals.set_loss_tracker(model, tracker)
    return tracker


def learning_rate_of_step(optimizer, step):
    """The learning rate the update that produced global step `step` used.

    Our optimizers evaluate their schedule at `iterations +
    schedule_step_offset` (the original's rule: the update from step s uses
    the rate of step s + 1), so the update to `step` used
    `schedule(step - 1 + offset)`. A constant rate is returned as is.

    Returns:
        float.
    """
    schedule = keras_internals.learning_rate_setting(optimizer)
    if isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
        offset = int(getattr(optimizer, "schedule_step_offset", 0))
        return float(schedule(step - 1 + offset))
    return float(keras.ops.convert_to_numpy(optimizer.learning_rate))


class StepLogger(keras.callbacks.Callback):
    """Logs `loss = L, step = N` every `every` global steps, as the Estimator.

    The line, through absl logging (INFO):
    `loss = 0.693147, step = 100 (4.213 sec), global_step/sec: 23.7,
    examples/sec: 759`, where the loss is step N's own (`step_loss` in the
    logs, see `StepLossTracker`), the seconds are those since the previous
    line (or since training started), and the rates are measured over them.
    With `steps_per_execution` > 1 the callback sees every k-th step; a line
    is due whenever a multiple of `every` was passed. The last step is
    always logged. Each line's numbers and the learning rate also go to
    `summaries.write_step(step, scalars)` when a writer is given.

    Args:
        optimizer: the optimizer whose `iterations` is the global step.
        batch_size: int, examples per batch (global).
        every: int, global steps between lines (`--log_steps`).
        batches_per_step: int, batches per update (gradient accumulation).
        summaries: optional `summaries.TrainingSummaries`.
        progress_bar: bool, a Keras progress bar shares the terminal; each
            line then starts on a new line of its own.
    """

    def __init__(self, optimizer, batch_size, every=100, batches_per_step=1,
                 summaries=None, progress_bar=False):
        super().__init__()
        self._optimizer = optimizer
        self._batch_size = int(batch_size)
        self._every = max(1, int(every))
        self._batches_per_step = max(1, int(batches_per_step))
        self._summaries = summaries
        self._progress_bar = progress_bar
        self._last_step = None
        self._last_time = None
        self._last_loss = None
        self._pending = None

    def _step(self):
        return int(self._optimizer.iterations.numpy())

    def on_train_begin(self, logs=None):
        if self._last_step is None:
            self._last_step = self._step()
            self._last_time = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        step = self._step()
        logs = logs or {}
        if STEP_LOSS in logs:
            self._last_loss = float(logs[STEP_LOSS])
        if step == self._last_step:
            return  # mid-update (gradient accumulation): no new step yet
        self._pending = step
        if step // self._every > self._last_step // self._every:
            self._log(step)

    def on_train_end(self, logs=None):
        if self._pending is not None and self._pending != self._last_step:
            self._log(self._pending)
        if self._summaries is not None:
            self._summaries.flush()

    def _log(self, step):
        now = time.perf_counter()
        elapsed = now - self._last_time
        steps = step - self._last_step
        steps_per_sec = steps / elapsed if elapsed > 0 else float("nan")
        examples_per_sec = (steps_per_sec * self._batch_size
                            * self._batches_per_step)
        loss = self._last_loss if self._last_loss is not None else float("nan")
        if self._progress_bar:
            # The bar is mid-line on stdout; start the log line below it.
            sys.stdout.write("\n")
            sys.stdout.flush()
        logging.info("loss = %.6g, step = %d (%.3f sec), global_step/sec: "
                     "%.4g, examples/sec: %.4g", loss, step, elapsed,
                     steps_per_sec, examples_per_sec)
        if self._summaries is not None:
            self._summaries.write_step(step, {
                "loss": loss,
                "learning_rate": learning_rate_of_step(self._optimizer, step),
                "global_step/sec": steps_per_sec,
                "examples/sec": examples_per_sec,
            })
        self._last_step, self._last_time = step, now
