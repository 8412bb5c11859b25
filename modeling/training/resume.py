"""Which checkpoint a run starts from, and restoring exactly that one.

The rule is the Estimator's: the newest `model.ckpt-N` in output_dir (a rerun
resumes; evaluation and prediction use the fine-tuned weights), else
`--init_checkpoint`, else random initialisation. `choose_start` applies it
once; the `CheckpointChoice` it returns is what the task checks and logs in
`prepare()`, and what `restore_for_training` / `restore_for_inference`
restore, so the choice stated is the one used.
"""
import dataclasses
import os

import tensorflow as tf
from absl import logging

from modeling import checkpoints
from modeling import keras_internals
from modeling.training.checkpoint_state import (latest_training_checkpoint,
                                                remove_unlisted_checkpoints)

SOURCES = ("output_dir", "init_checkpoint", "none")


@dataclasses.dataclass(frozen=True)
class CheckpointChoice:
    """Which checkpoint a run uses.

    Attributes:
        path: the checkpoint prefix, or None (random initialisation).
        source: "output_dir" (a training checkpoint of this run's folder:
            resume, or the fine-tuned weights), "init_checkpoint" (weights
            only, step 0), or "none".
    """
    path: str
    source: str

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"CheckpointChoice.source must be one of "
                             f"{SOURCES}, got {self.source!r}")
        if (self.path is None) != (self.source == "none"):
            raise ValueError(f"CheckpointChoice: source {self.source!r} with "
                             f"path {self.path!r}")

    def describe(self):
        """One phrase for the log, e.g. "--init_checkpoint /x/bert_model.ckpt"."""
        if self.source == "output_dir":
            return f"the newest training checkpoint in output_dir, {self.path}"
        if self.source == "init_checkpoint":
            return f"--init_checkpoint {self.path}"
        return "no checkpoint: the model starts from random values"


def choose_start(output_dir, init_checkpoint=None):
    """The Estimator's rule: output_dir's newest checkpoint, else init, else none.

    Args:
        output_dir: the run's folder (may not exist yet), or None.
        init_checkpoint: a checkpoint prefix or folder, or None.

    Returns:
        CheckpointChoice.

    Raises:
        checkpoints.CheckpointNotFoundError: `init_checkpoint` names nothing.
    """
    latest = latest_training_checkpoint(output_dir) if output_dir else None
    if latest:
        return CheckpointChoice(latest, "output_dir")
    if init_checkpoint:
        return CheckpointChoice(checkpoints.resolve_checkpoint(init_checkpoint),
                                "init_checkpoint")
    return CheckpointChoice(None, "none")


class _AccumulatingStepView:
    """The optimizer as `load_tf1_checkpoint` sees it under accumulation.

    With Keras' gradient accumulation, `optimizer.iterations` is computed
    (batches // k) from a private batch counter; restoring `global_step`
    sets that counter to `global_step * k`.
    """

    def __init__(self, optimizer):
        self._optimizer = optimizer
        self.dtype = keras_internals.batch_counter(optimizer).dtype

    def slot_variables(self, variable):
        return self._optimizer.slot_variables(variable)

    @property
    def iterations(self):
        return self

    def assign(self, value):
        steps = self._optimizer.gradient_accumulation_steps
        keras_internals.batch_counter(self._optimizer).assign(int(value) * steps)


def _another_model(error, path, what):
    folder = os.path.dirname(path)
    return checkpoints.CheckpointMismatchError(
        f"output_dir {folder} already holds a training checkpoint ({path}) "
        f"from another model, and {what}. Use a fresh --output_dir. {error}")


def restore_for_training(model, optimizer, choice, chief=True):
    """Restores `choice` before training; returns the step training starts at.

    From output_dir: weights, Adam slots and `global_step` (a resume); from
    `--init_checkpoint`: weights only; "none": nothing. The optimizer's
    variables are built first so its slots and step can be restored. `chief`
    removes checkpoint files that output_dir's state file does not list.

    Args:
        model: the task model (built).
        optimizer: its `TF1StyleOptimizer`, possibly with gradient
            accumulation.
        choice: CheckpointChoice (see `choose_start`).
        chief: bool, this process may delete files in output_dir.

    Returns:
        int, the global step training starts from.

    Raises:
        checkpoints.CheckpointMismatchError: the checkpoint is another model's.
    """
    optimizer.build(model.trainable_variables)
    if choice.source == "output_dir":
        if chief:
            # Leftovers of a run killed between the state write and deletion.
            remove_unlisted_checkpoints(os.path.dirname(choice.path))
        logging.info("Resuming training from %s", choice.path)
        target = (_AccumulatingStepView(optimizer)
                  if optimizer.gradient_accumulation_steps else optimizer)
        try:
            status = checkpoints.load_tf1_checkpoint(model, choice.path,
                                                     optimizer=target)
        except checkpoints.CheckpointMismatchError as error:
            raise _another_model(error, choice.path,
                                 "a rerun resumes from it") from None
        if not status.optimizer_restored:
            logging.warning("%s has no optimizer state; the optimizer starts "
                            "afresh.", choice.path)
    elif choice.source == "init_checkpoint":
        checkpoints.load_tf1_checkpoint(model, choice.path)
    return int(optimizer.iterations.numpy())


def restore_for_inference(model, choice):
    """Loads `choice` for evaluation or prediction; returns the step to report.

    A training checkpoint reports its `global_step`; `--init_checkpoint`
    reports 0 (only model weights come from it); "none" leaves the model as
    initialised, with a warning.

    Raises:
        checkpoints.CheckpointMismatchError: the checkpoint does not fit.
    """
    if choice.source == "none":
        logging.warning("No checkpoint in output_dir and no --init_checkpoint: "
                        "using a randomly initialised model.")
        return 0
    logging.info("Restoring %s", choice.path)
    if choice.source == "init_checkpoint":
        checkpoints.load_tf1_checkpoint(model, choice.path)
        return 0
    try:
        checkpoints.load_tf1_checkpoint(model, choice.path)
    except checkpoints.CheckpointMismatchError as error:
        raise _another_model(error, choice.path,
                             "it takes precedence over --init_checkpoint"
                             ) from None
    reader = tf.train.load_checkpoint(choice.path)
    if reader.has_tensor(checkpoints.GLOBAL_STEP):
        return int(reader.get_tensor(checkpoints.GLOBAL_STEP))
    return 0
