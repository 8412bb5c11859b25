"""Stopping a run whose loss is NaN or infinite, before it writes a checkpoint.

A diverged run (`--learning_rate=1e6`, an init checkpoint holding NaN) used to
train to the end, write checkpoints full of NaN that the next run resumed
from, and exit 0. `StopOnNonFiniteLoss` checks the loss after every
execution of the train step and raises `NonFiniteLossError` naming the step;
it runs before `TF1CheckpointSaver` in the callback list, and an exception
skips `on_train_end`, so no checkpoint of the diverged weights is written
and the newest checkpoint in output_dir stays the last good one. (The saver
itself also refuses NaN weights: `checkpoints.save_tf1_checkpoint`.)

With float16 loss scaling a non-finite gradient is expected now and then:
`LossScaleOptimizer` skips that step and lowers the scale. There a
non-finite loss is only logged; the weights stay finite, and a run whose
every step overflows is stopped by `run_training` ("No optimizer step was
applied").
"""
import math

import keras
from absl import logging

from data.io.errors import UserError


class NonFiniteLossError(UserError):
    """The training loss became NaN or infinite (the run diverged)."""


class StopOnNonFiniteLoss(keras.callbacks.Callback):
    """Raises `NonFiniteLossError` when the logged loss is not finite.

    Keras' `loss` log is the running mean of the epoch, so it turns
    non-finite at the first step whose loss does; with steps_per_execution
    k, at the end of the execution holding that step.

    Args:
        optimizer: the run's optimizer (its `iterations` is the step).
        output_dir: for the message (where the last good checkpoint is).
        loss_scaled: the optimizer is a float16 `LossScaleOptimizer` (only
            log: the step is skipped, not applied).
    """

    def __init__(self, optimizer, output_dir, loss_scaled=False):
        super().__init__()
        self._optimizer = optimizer
        self._output_dir = output_dir
        self._loss_scaled = loss_scaled
        self._first_step = None

    def on_train_begin(self, logs=None):
        if self._first_step is None:
            self._first_step = int(self._optimizer.iterations.numpy())

    def on_train_batch_end(self, batch, logs=None):
        logs = logs or {}
        loss = logs.get("loss")
        if loss is None:
            return
        loss = float(loss)
        if math.isfinite(loss):
            return
        step = int(self._optimizer.iterations.numpy())
        if self._loss_scaled:
            logging.warning("Loss is %s at step %d: float16 overflow; the "
                            "loss scale skips this step.", loss, step)
            return
        from modeling.training.checkpoint_state import latest_training_checkpoint

        try:
            kept = latest_training_checkpoint(self._output_dir)
        except UserError:
            kept = None
        where = (f"the newest checkpoint, {kept}, holds the last finite weights"
                 if kept else "no checkpoint of this run was written")
        raise NonFiniteLossError(
            f"training diverged: the loss is {loss} at step {step}; stopped "
            f"without writing a checkpoint of the diverged weights ({where}). "
            "Lower --learning_rate, check the input data and the init "
            "checkpoint, and run again.")
