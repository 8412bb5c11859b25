"""Training checkpoints in output_dir, as the original Estimator kept them.

`model.ckpt-<global_step>` (weights, `adam_m`/`adam_v` slots, `global_step`;
a float16 run's loss scale as `loss_scale`/`good_steps`) plus the `checkpoint`
state file listing the newest `keep_checkpoint_max`, written atomically.
"""
import os
import re
import time

import keras
import tensorflow as tf
from absl import logging

from data.io.atomic import write_text_atomically
from modeling import checkpoints

TRAINING_CHECKPOINT_PREFIX = "model.ckpt"
# Extra checkpoint entries of a float16 run (skipped by weight loaders, see
# `checkpoints.is_optimizer_state`).
LOSS_SCALE = "loss_scale"
GOOD_STEPS = "good_steps"


def latest_training_checkpoint(output_dir):
    """Prefix of the newest `model.ckpt-N` recorded in `output_dir`, or None."""
    if not tf.io.gfile.isdir(output_dir):
        return None
    return tf.train.latest_checkpoint(output_dir)


def _write_checkpoint_state(output_dir, paths):
    # The `checkpoint` text proto the Estimator writes, with relative paths so
    # the folder can be moved; written atomically.
    lines = [f'model_checkpoint_path: "{paths[-1]}"']
    lines += [f'all_model_checkpoint_paths: "{path}"' for path in paths]
    write_text_atomically(os.path.join(output_dir, "checkpoint"),
                          "\n".join(lines) + "\n")


def _recorded_checkpoints(output_dir):
    state = tf.train.get_checkpoint_state(output_dir)
    if state is None:
        return []
    return [os.path.basename(path) for path in state.all_model_checkpoint_paths]


def _loss_scale_optimizer(model):
    optimizer = getattr(model, "optimizer", None)
    if isinstance(optimizer, keras.optimizers.LossScaleOptimizer) and optimizer.built:
        return optimizer
    return None


def _loss_scale_tensors(model):
    optimizer = _loss_scale_optimizer(model)
    if optimizer is None:
        return {}
    return {LOSS_SCALE: tf.cast(optimizer.dynamic_scale.value, tf.float32),
            GOOD_STEPS: tf.cast(optimizer.step_counter.value, tf.int64)}


def restore_loss_scale(model, checkpoint):
    """Sets a compiled float16 model's loss scale from `checkpoint`, if saved.

    Returns:
        float, the restored scale, or None (no loss scaling, or none saved).
    """
    optimizer = _loss_scale_optimizer(model)
    if optimizer is None or not checkpoint:
        return None
    reader = tf.train.load_checkpoint(checkpoint)
    if not reader.has_tensor(LOSS_SCALE):
        return None
    scale = float(reader.get_tensor(LOSS_SCALE))
    optimizer.dynamic_scale.assign(scale)
    if reader.has_tensor(GOOD_STEPS):
        optimizer.step_counter.assign(int(reader.get_tensor(GOOD_STEPS)))
    logging.info("Restored the float16 loss scale %g from %s.", scale, checkpoint)
    return scale


def save_training_checkpoint(model, optimizer, output_dir, keep_checkpoint_max=5):
    """Writes `model.ckpt-<global_step>` with optimizer state; updates `checkpoint`.

    A compiled float16 model's loss scale goes in as `loss_scale` and
    `good_steps`.

    Args:
        model: the task model being trained.
        optimizer: its optimizer (slots and `iterations` are saved).
        output_dir: the training run's folder.
        keep_checkpoint_max: how many recorded checkpoints to keep; older
            ones are deleted (0 keeps all).

    Returns:
        str, the prefix written.
    """
    start = time.perf_counter()
    step = int(optimizer.iterations.numpy())
    name = f"{TRAINING_CHECKPOINT_PREFIX}-{step}"
    prefix = os.path.join(output_dir, name)
    # A file of this name that the state file does not list is a leftover
    # (e.g. of an interrupted earlier run); the current weights replace it.
    checkpoints.save_tf1_checkpoint(model, prefix, optimizer=optimizer,
                                    overwrite=True,
                                    extra_tensors=_loss_scale_tensors(model))
    recorded = [path for path in _recorded_checkpoints(output_dir) if path != name]
    recorded.append(name)
    stale = recorded[:-keep_checkpoint_max] if keep_checkpoint_max > 0 else []
    kept = recorded[len(stale):]
    _write_checkpoint_state(output_dir, kept)
    for old in stale:
        for path in tf.io.gfile.glob(os.path.join(output_dir, old + ".*")):
            tf.io.gfile.remove(path)
    logging.info("Saved checkpoint %s in %.1f s", prefix,
                 time.perf_counter() - start)
    return prefix


def remove_unlisted_checkpoints(output_dir, prefix=TRAINING_CHECKPOINT_PREFIX):
    """Deletes `<prefix>-N.*` files that the `checkpoint` state file does not list.

    A run killed between writing a new `checkpoint` state and deleting the
    checkpoints it dropped leaves those behind, never to be removed. Only
    runs when a state file exists (without one, nothing says which files
    belong to the run), and only touches `<prefix>-<digits>.*` files.

    Args:
        output_dir: a training run's folder.
        prefix: the training checkpoints' name before `-<step>`.

    Returns:
        list of str, the files removed.
    """
    output_dir = os.fspath(output_dir)
    state = tf.train.get_checkpoint_state(output_dir)
    if state is None:
        return []
    listed = {os.path.basename(path) for path in state.all_model_checkpoint_paths}
    listed.add(os.path.basename(state.model_checkpoint_path))
    pattern = re.compile(re.escape(prefix) + r"-\d+")
    removed = []
    for path in tf.io.gfile.glob(os.path.join(output_dir, prefix + "-*")):
        name = os.path.basename(path)
        stem = name.split(".index")[0].split(".data-")[0].split(".meta")[0]
        if pattern.fullmatch(stem) and stem not in listed:
            tf.io.gfile.remove(path)
            removed.append(path)
    if removed:
        logging.info("Removed %d checkpoint file(s) not listed in %s/checkpoint "
                     "(left by an interrupted run): %s", len(removed), output_dir,
                     ", ".join(sorted(os.path.basename(p) for p in removed)))
    return removed
