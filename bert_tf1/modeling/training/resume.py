"""Which checkpoint a run starts from, and restoring exactly that one.

The Estimator's rule: output_dir's newest `model.ckpt-N`, else
`--init_checkpoint`, else random initialisation. `choose_start` applies it
once; the task logs the returned `CheckpointChoice` and restores that one.
"""
import dataclasses
import os

import tensorflow as tf
from absl import logging

from bert_tf1.modeling import checkpoints
from bert_tf1.modeling import keras_internals
from bert_tf1.modeling.interop import sources
from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling.training.checkpoint_state import (list_as_newest,
                                                         newest_training_checkpoint,
                                                         remove_unlisted_checkpoints)

SOURCES = ("output_dir", "init_checkpoint", "none")


@dataclasses.dataclass(frozen=True)
class CheckpointChoice:
    """Which checkpoint a run uses.

    Attributes:
        path: the checkpoint prefix, or None (random initialisation).
        source: "output_dir" (this run's training checkpoint),
            "init_checkpoint" (weights only, step 0), or "none".
        listed: False for an output_dir checkpoint not yet in the
            `checkpoint` state file (listed before training resumes).
        allow_non_finite: load it even if tensors hold NaN/Inf.
    """
    path: str
    source: str
    listed: bool = True
    allow_non_finite: bool = False

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
            if not self.listed:
                return (f"the newest training checkpoint in output_dir, "
                        f"{self.path} (complete, not yet listed in its "
                        "`checkpoint` file: adopted)")
            return (f"the newest training checkpoint in output_dir, {self.path} "
                    "(listed in its `checkpoint` file)")
        if self.source == "init_checkpoint":
            return f"--init_checkpoint {self.path}"
        return "no checkpoint: the model starts from random values"


def choose_start(output_dir, init_checkpoint=None, allow_non_finite=False):
    """The Estimator's rule: output_dir's newest checkpoint (a complete
    unlisted newer one adopted), else init, else none.

    Args:
        output_dir: the run's folder (may not exist yet), or None.
        init_checkpoint: a checkpoint prefix or folder, or None.
        allow_non_finite: carried in the choice.

    Returns:
        CheckpointChoice.

    Raises:
        checkpoints.CheckpointNotFoundError: `init_checkpoint` names nothing.
        checkpoints.CheckpointStateError: a state file names a path outside
            its folder, or a newest checkpoint that is missing.
    """
    latest, listed = newest_training_checkpoint(output_dir)
    if latest:
        return CheckpointChoice(latest, "output_dir", listed=listed,
                                allow_non_finite=allow_non_finite)
    if init_checkpoint:
        return CheckpointChoice(init_checkpoint_path(init_checkpoint),
                                "init_checkpoint",
                                allow_non_finite=allow_non_finite)
    return CheckpointChoice(None, "none")


def init_checkpoint_path(init_checkpoint):
    """The path a run starts from: a Hugging Face or keras-hub folder as
    given, else the TF1 prefix (`checkpoints.resolve_checkpoint`).

    Raises:
        checkpoints.CheckpointNotFoundError: no checkpoint there.
    """
    if sources.checkpoint_kind(init_checkpoint) != "tf1":
        return os.fspath(init_checkpoint)
    return checkpoints.resolve_checkpoint(init_checkpoint)


def load_init_checkpoint(model, choice):
    """Loads an "init_checkpoint" choice's weights (any kind
    `sources.find_checkpoint` reads); returns the `LoadStatus`."""
    if sources.checkpoint_kind(choice.path) == "tf1":
        return checkpoints.load_tf1_checkpoint(
            model, choice.path, allow_non_finite=choice.allow_non_finite)
    source = sources.find_checkpoint(choice.path)
    return sources.load_weights_from(model, source)


class _AccumulatingStepView:
    """The optimizer as `load_tf1_checkpoint` sees it under gradient
    accumulation: `global_step` sets Keras' batch counter to step * k.
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


def _load_own_checkpoint(model, choice, what, optimizer=None):
    """`load_tf1_checkpoint` of an output_dir checkpoint; a mismatch says
    the folder holds another model's run ({what}: why it is used)."""
    try:
        return checkpoints.load_tf1_checkpoint(
            model, choice.path, optimizer=optimizer,
            allow_non_finite=choice.allow_non_finite)
    except checkpoints.CheckpointMismatchError as error:
        raise checkpoints.CheckpointMismatchError(
            f"output_dir {os.path.dirname(choice.path)} already holds a "
            f"training checkpoint ({choice.path}) from another model, and "
            f"{what}: rerun with that run's flags or use a fresh "
            f"--output_dir. {error}") from None


def restore_for_training(model, optimizer, choice, chief=True):
    """Restores `choice` before training; returns the step training starts at.

    From output_dir: weights, Adam slots and `global_step` (a resume; on the
    chief an unlisted checkpoint is listed first and unlisted leftovers
    removed); from `--init_checkpoint`: weights only; "none": nothing.

    Args:
        model: the task model (built).
        optimizer: its `TF1StyleOptimizer`.
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
            if not choice.listed:
                output_dir, name = os.path.split(choice.path)
                list_as_newest(output_dir, name)
                logging.warning(
                    "Adopted %s: a complete checkpoint that %s/checkpoint did "
                    "not list yet (its run stopped before updating it).",
                    choice.path, output_dir)
            # Leftovers of a run killed between the state write and deletion.
            remove_unlisted_checkpoints(os.path.dirname(choice.path))
        logging.info("Resuming training from %s", choice.path)
        target = (_AccumulatingStepView(optimizer)
                  if optimizer.gradient_accumulation_steps else optimizer)
        status = _load_own_checkpoint(model, choice, "a rerun resumes from it",
                                      optimizer=target)
        if not status.optimizer_restored:
            logging.warning("%s has no optimizer state; the optimizer starts "
                            "afresh.", choice.path)
    elif choice.source == "init_checkpoint":
        load_init_checkpoint(model, choice)
    return int(optimizer.iterations.numpy())


class NoCheckpointError(UserError):
    """Evaluation or prediction was asked for with no checkpoint at all."""


def restore_for_inference(model, choice, allow_random_weights=False):
    """Loads `choice` for evaluation or prediction; returns the step to report
    (a training checkpoint's `global_step`, else 0). "none" is an error
    unless `allow_random_weights` (then a warning).

    Raises:
        NoCheckpointError: no checkpoint and not `allow_random_weights`.
        checkpoints.CheckpointMismatchError: the checkpoint does not fit.
        checkpoints.CheckpointNonFiniteError: it holds NaN/Inf (unless the
            choice allows it).
    """
    if choice.source == "none":
        if not allow_random_weights:
            raise NoCheckpointError(
                "no checkpoint to evaluate or predict with: output_dir has "
                "no training checkpoint and no --init_checkpoint was given. "
                "Pass --init_checkpoint (or train first), or "
                "--allow_random_weights=true to use random weights.")
        logging.warning("No checkpoint in output_dir and no --init_checkpoint: "
                        "using a randomly initialised model "
                        "(--allow_random_weights).")
        return 0
    logging.info("Restoring %s", choice.path)
    if choice.source == "init_checkpoint":
        load_init_checkpoint(model, choice)
        return 0
    _load_own_checkpoint(model, choice,
                         "it takes precedence over --init_checkpoint")
    reader = tf.train.load_checkpoint(choice.path)
    if reader.has_tensor(checkpoints.GLOBAL_STEP):
        return int(reader.get_tensor(checkpoints.GLOBAL_STEP))
    return 0
