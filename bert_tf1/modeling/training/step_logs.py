"""Step logs as the original's Estimator wrote them: `loss = ..., step = N`.

`StepLogger` logs through absl (INFO; nothing here configures logging), every
`log_steps` global steps: `loss = 0.693147, step = 100 (4.213 sec),
global_step/sec: 23.7, examples/sec: 759`, where the loss is the mean over
the batches since the previous line, derived from Keras' running mean (the
Estimator logged the last step's loss: docs/differences.md).
"""
import sys
import time

import keras
from absl import logging

from bert_tf1.modeling import keras_internals


def learning_rate_of_step(optimizer, step):
    """The learning rate the update that produced global step `step` used.

    Our optimizers evaluate their schedule at `iterations +
    schedule_step_offset` (the original: the update from step s uses the
    rate of step s + 1), so that update used `schedule(step - 1 + offset)`.

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

    The loss is the mean over the batches since the previous line, from two
    readings of the logs' running mean `loss`; the seconds and rates since
    the previous line leave out the callbacks after this one in the list,
    such as evaluation during training (docs/differences.md, "Step log
    loss"). With `steps_per_execution` > 1 a line is due whenever a multiple
    of `every` was passed; the last step is always logged. Each line's
    numbers and the learning rate also go to
    `summaries.write_step(step, scalars)` when a writer is given.

    Args:
        optimizer: the optimizer whose `iterations` is the global step.
        batch_size: int, examples per batch (global).
        every: int, global steps between lines (`--log_steps`).
        batches_per_step: int, batches per update (gradient accumulation).
        summaries: optional `summaries.TrainingSummaries`.
        progress_bar: bool, a Keras progress bar shares the terminal (each
            line then starts on a new line).
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
        self._pending = None
        # Seconds between batches (callbacks after this one) in this window.
        self._batch_ended = None
        self._between_batches = 0.0
        # (batches, running mean) of this fit call at the last line and now.
        self._logged_mean = (0, 0.0)
        self._mean = (0, float("nan"))

    def _step(self):
        return int(self._optimizer.iterations.numpy())

    def on_train_begin(self, logs=None):
        if self._last_step is None:
            self._last_step = self._step()
            self._last_time = time.perf_counter()
        # Keras' running mean starts again with every `fit`.
        self._logged_mean = (0, 0.0)
        self._mean = (0, float("nan"))
        self._batch_ended = None

    def on_train_batch_begin(self, batch, logs=None):
        if self._batch_ended is not None:
            self._between_batches += time.perf_counter() - self._batch_ended
            self._batch_ended = None

    def on_train_batch_end(self, batch, logs=None):
        step = self._step()
        logs = logs or {}
        if "loss" in logs:
            self._mean = (batch + 1, float(logs["loss"]))
        if step != self._last_step:  # else mid-update (gradient accumulation)
            self._pending = step
            if step // self._every > self._last_step // self._every:
                self._log(step)
        # From here to the next batch's begin is not training.
        self._batch_ended = time.perf_counter()

    def on_train_end(self, logs=None):
        if self._pending is not None and self._pending != self._last_step:
            # The window ends with the last batch, not with the callbacks'
            # end-of-training work (the final checkpoint, evaluation).
            self._log(self._pending, now=self._batch_ended)
        if self._summaries is not None:
            self._summaries.flush()

    def _window_loss(self):
        # (mean * batches - logged_mean * logged_batches) / (batches -
        # logged_batches); with 0 batches logged, any logged mean.
        (batches, mean), (logged_batches, logged_mean) = self._mean, self._logged_mean
        if batches <= logged_batches:
            return float("nan")
        self._logged_mean = self._mean
        before = logged_mean * logged_batches if logged_batches else 0.0
        return (mean * batches - before) / (batches - logged_batches)

    def _log(self, step, now=None):
        now = time.perf_counter() if now is None else now
        elapsed = now - self._last_time - self._between_batches
        steps = step - self._last_step
        steps_per_sec = steps / elapsed if elapsed > 0 else float("nan")
        examples_per_sec = (steps_per_sec * self._batch_size
                            * self._batches_per_step)
        loss = self._window_loss()
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
        self._between_batches = 0.0
