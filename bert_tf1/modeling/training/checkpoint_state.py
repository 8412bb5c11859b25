"""Training checkpoints in output_dir, as the original Estimator kept them:
`model.ckpt-<global_step>` (weights, `adam_m`/`adam_v`, `global_step`; a
float16 run's `loss_scale`/`good_steps`) plus the `checkpoint` state file
listing the newest `keep_checkpoint_max`. A complete newer `model.ckpt-N` the
state file does not list yet (a run stopped between the two writes) is
adopted, not deleted.
"""
import os
import re
import time

import keras
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.modeling import checkpoints
from bert_tf1.modeling.checkpoints import state_file
from bert_tf1.modeling.checkpoints.files import check_data_size, read_variables
from bert_tf1.modeling.layers import lora

TRAINING_CHECKPOINT_PREFIX = "model.ckpt"
#: A LoRA run's small file beside its checkpoints: the newest checkpoint's
#: adapters, pooler and head (`checkpoints.save_lora_adapters`).
LORA_ADAPTERS_PREFIX = "lora_adapters.ckpt"
# Extra checkpoint entries of a float16 run (skipped by weight loaders, see
# `checkpoints.is_optimizer_state`).
LOSS_SCALE = "loss_scale"
GOOD_STEPS = "good_steps"


_STEP_PATTERN = re.compile(re.escape(TRAINING_CHECKPOINT_PREFIX) + r"-(\d+)$")


def latest_training_checkpoint(output_dir):
    """Prefix of the newest `model.ckpt-N` listed in `output_dir`, or None.

    Raises:
        checkpoints.CheckpointStateError: the state file names a path outside
            output_dir, or a newest checkpoint that is missing.
    """
    if not output_dir or not tf.io.gfile.isdir(output_dir):
        return None
    return checkpoints.newest_listed(output_dir)


def checkpoint_step(prefix):
    """N of a `.../model.ckpt-N` prefix, or None for other names."""
    match = _STEP_PATTERN.search(os.path.basename(prefix))
    return int(match.group(1)) if match else None


def _is_complete(prefix):
    """The index is readable and the data files hold the bytes it lists."""
    try:
        check_data_size(prefix, read_variables(prefix))
    except (checkpoints.CheckpointCorruptError, tf.errors.OpError):
        return False
    return True


def _unlisted_files(output_dir, listed_names):
    """(path, name) of each `model.ckpt-N.*` file whose `model.ckpt-N` is
    not in `listed_names`."""
    for path in tf.io.gfile.glob(os.path.join(
            output_dir, TRAINING_CHECKPOINT_PREFIX + "-*")):
        name = os.path.basename(path)
        name = name.split(".index")[0].split(".data-")[0].split(".meta")[0]
        if _STEP_PATTERN.fullmatch(name) and name not in listed_names:
            yield path, name


def newest_training_checkpoint(output_dir):
    """(prefix, listed) of the checkpoint a run in output_dir continues from:
    the state file's newest, unless a complete unlisted `model.ckpt-N` with
    a larger N is there (then `listed` is False); (None, True) if none.

    Raises:
        checkpoints.CheckpointStateError: see `latest_training_checkpoint`.
    """
    if not output_dir or not tf.io.gfile.isdir(output_dir):
        return None, True
    listed = latest_training_checkpoint(output_dir)
    state = checkpoints.read_state(output_dir)
    names = {os.path.basename(p) for p in (state.listed if state else ())}
    floor = checkpoint_step(listed) if listed else -1
    floor = -1 if floor is None else floor
    unlisted = {checkpoint_step(name)
                for path, name in _unlisted_files(output_dir, names)
                if path.endswith(".index")}
    for step in sorted(unlisted, reverse=True):
        if step <= floor:
            break
        prefix = os.path.join(output_dir, f"{TRAINING_CHECKPOINT_PREFIX}-{step}")
        if _is_complete(prefix):
            return prefix, False
    return listed, True


def list_as_newest(output_dir, name, keep_checkpoint_max=0):
    """Lists checkpoint `name` last in output_dir's state file, keeping the
    newest `keep_checkpoint_max` entries (0: all) and deleting the files of
    those dropped."""
    state = checkpoints.read_state(output_dir)
    recorded = [os.path.basename(path) for path in state.listed
                if os.path.basename(path) != name] if state else []
    recorded.append(name)
    stale = recorded[:-keep_checkpoint_max] if keep_checkpoint_max > 0 else []
    kept = recorded[len(stale):]
    # Not `tf.compat.v1.train.update_checkpoint_state`: it rewrites relative
    # paths against a relative or gs:// save_dir, and its temp file outlives
    # a kill -9 beside the output.
    write_text_atomically(os.path.join(output_dir, state_file.STATE_FILE_NAME),
                          state_file.format_state(kept))
    for old in stale:
        for path in tf.io.gfile.glob(os.path.join(output_dir, old + ".*")):
            tf.io.gfile.remove(path)


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
    """Writes `model.ckpt-<global_step>` with optimizer state (and a float16
    model's loss scale); updates `checkpoint`, deleting checkpoints beyond
    the newest `keep_checkpoint_max` (0 keeps all). A LoRA model's also
    rewrites `LORA_ADAPTERS_PREFIX`.

    Returns:
        str, the prefix written.

    Raises:
        checkpoints.CheckpointNonFiniteError: the weights hold NaN/Inf
            (nothing is written).
        bert_tf1.data.io.errors.OutputWriteError: disk full or another OS error.
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
    list_as_newest(output_dir, name, keep_checkpoint_max)
    if lora.lora_layers(model):
        checkpoints.save_lora_adapters(
            model, os.path.join(output_dir, LORA_ADAPTERS_PREFIX), step,
            overwrite=True)
    logging.info("Saved checkpoint %s in %.1f s", prefix,
                 time.perf_counter() - start)
    return prefix


def remove_unlisted_checkpoints(output_dir):
    """Deletes `model.ckpt-N.*` files the `checkpoint` state file does not list
    (left by a run killed between the state write and the deletion); does
    nothing without a state file.

    Returns:
        list of str, the files removed.
    """
    output_dir = os.fspath(output_dir)
    state = checkpoints.read_state(output_dir)
    if state is None:
        return []
    listed = {os.path.basename(path) for path in state.listed}
    removed = [path for path, _ in _unlisted_files(output_dir, listed)]
    for path in removed:
        tf.io.gfile.remove(path)
    if removed:
        logging.info("Removed %d checkpoint file(s) not listed in %s/checkpoint "
                     "(left by an interrupted run): %s", len(removed), output_dir,
                     ", ".join(sorted(os.path.basename(p) for p in removed)))
    return removed
