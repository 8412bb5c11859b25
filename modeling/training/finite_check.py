"""Stopping a run whose loss is NaN or infinite, before it writes a checkpoint.

`StopOnNonFiniteLoss` runs before `TF1CheckpointSaver` and raises
`NonFiniteLossError` naming the step; the exception skips `on_train_end`, so
the newest checkpoint stays the last good one. With float16 loss scaling a
non-finite loss is only logged (`LossScaleOptimizer` skips the step).
"""
import math

import keras
from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling.training.checkpoint_state import (
    latest_training_checkpoint)


class NonFiniteLossError(UserError):
    """The training loss became NaN or infinite (the run diverged)."""


class StopOnNonFiniteLoss(keras.callbacks.Callback):
    """Raises `NonFiniteLossError` when the logged loss is not finite.

    Keras' `loss` log is the epoch's running mean: it turns non-finite at
    the first such step (with steps_per_execution k, at the end of the
    execution holding it).

    Args:
        optimizer: the run's optimizer (its `iterations` is the step).
        output_dir: for the message (where the last good checkpoint is).
        loss_scaled: the optimizer is a float16 `LossScaleOptimizer` (then
            only log).
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
        loss = (logs or {}).get("loss")
        if loss is None or math.isfinite(float(loss)):
            return
        loss = float(loss)
        step = int(self._optimizer.iterations.numpy())
        if self._loss_scaled:
            logging.warning("Loss is %s at step %d: float16 overflow; the "
                            "loss scale skips this step.", loss, step)
            return
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
