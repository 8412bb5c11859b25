"""The Keras callbacks of a training run: checkpoints, throughput, last step.
"""
import time

import keras
from absl import logging

from bert_tf1.modeling.training.checkpoint_state import save_training_checkpoint


class TF1CheckpointSaver(keras.callbacks.Callback):
    """Saves a training checkpoint every `save_checkpoints_steps` and at the end."""

    def __init__(self, model, optimizer, output_dir, save_checkpoints_steps,
                 keep_checkpoint_max=5, chief=True):
        super().__init__()
        self._bert_model = model
        self._optimizer = optimizer
        self._output_dir = output_dir
        self._every = max(1, int(save_checkpoints_steps))
        self._keep = keep_checkpoint_max
        self._chief = chief
        self._last_saved = None

    def _save(self):
        step = int(self._optimizer.iterations.numpy())
        if self._chief and step != self._last_saved:
            save_training_checkpoint(self._bert_model, self._optimizer,
                                     self._output_dir, self._keep)
            self._last_saved = step

    def on_train_begin(self, logs=None):
        # Count from the step training starts at (a resumed run's included).
        if self._last_saved is None:
            self._last_saved = int(self._optimizer.iterations.numpy())

    def on_train_batch_end(self, batch, logs=None):
        # With steps_per_execution > 1 this runs once per several steps, so
        # save whenever a multiple of `every` was passed since the last save.
        step = int(self._optimizer.iterations.numpy())
        if step // self._every > self._last_saved // self._every:
            self._save()

    def on_train_end(self, logs=None):
        if self._chief and int(self._optimizer.iterations.numpy()) != self._last_saved:
            # Weights and Adam slots can take a while: say so first.
            logging.info("Training finished; writing the final checkpoint.")
        self._save()


class ExamplesPerSecond(keras.callbacks.Callback):
    """Adds `examples_per_sec` (training throughput) to the progress bar.

    Attributes:
        last_step_end: `time.perf_counter()` when the last batch ended.
    """

    def __init__(self, batch_size):
        super().__init__()
        self._batch_size = batch_size
        self._start = None
        self.last_step_end = None

    def on_train_batch_begin(self, batch, logs=None):
        if self._start is None:
            self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.last_step_end = time.perf_counter()
        elapsed = self.last_step_end - self._start
        if logs is not None and elapsed > 0:
            logs["examples_per_sec"] = (batch + 1) * self._batch_size / elapsed


