"""Writing TF1 checkpoints the original code can load, atomically.
"""
import os

import tensorflow as tf

from bert_tf1.data.io.atomic import atomic_output
from bert_tf1.data.io.errors import OutputExistsError
from bert_tf1.modeling.checkpoints.files import GLOBAL_STEP
from bert_tf1.modeling.checkpoints.finiteness import (CheckpointNonFiniteError,
                                                      describe_non_finite,
                                                      non_finite_tensors)
from bert_tf1.modeling.checkpoints.loading import model_weights_by_name, optimizer_slots
from bert_tf1.modeling.layers import lora
from bert_tf1.modeling.naming import tf1_name


class CheckpointExistsError(OutputExistsError):
    """A checkpoint is already at the path asked for; it is never replaced."""


def _check_free(prefix, overwrite):
    if tf.io.gfile.exists(prefix + ".index") and not overwrite:
        raise CheckpointExistsError(
            f"A checkpoint already exists at {prefix}; not overwriting it. "
            "Choose another path or pass overwrite=True.")
    directory = os.path.dirname(prefix)
    if directory:
        tf.io.gfile.makedirs(directory)


def _saved_name(variable, resume, model):
    name = tf1_name(variable, model)
    return resume.get(name, name)


def _tensors_to_save(model, optimizer, global_step):
    # A LoRA model: merged kernels under the TF1 names (any reader gets the
    # fine-tuned model), its unmerged state under lora.RESUME_SCOPE.
    resume = lora.resume_names(model)
    tensors = {name: tf.convert_to_tensor(value)
               for name, value in lora.merged_weights(model).items()}
    weights = model_weights_by_name(model)
    tensors.update({saved: tf.convert_to_tensor(weights[name].value)
                    for name, saved in resume.items()})
    tensors.update(lora.alpha_tensors(model))
    if optimizer is not None:
        for variable in model.trainable_weights:
            for slot_name, slot in optimizer_slots(
                    optimizer, variable, _saved_name(variable, resume, model)).items():
                tensors[slot_name] = tf.convert_to_tensor(slot.value)
        if global_step is None:
            global_step = int(optimizer.iterations.numpy())
    if global_step is not None:
        tensors[GLOBAL_STEP] = tf.constant(int(global_step), tf.int64)
    return tensors


def adapter_tensors(model, global_step=None):
    """What a LoRA model trains, by checkpoint name: the adapters (under
    `lora.RESUME_SCOPE`), the pooler and the head; with `global_step`. The
    small file that `--init_checkpoint` (the base model) completes."""
    resume = lora.resume_names(model)
    tensors = {_saved_name(v, resume, model): tf.convert_to_tensor(v.value)
               for v in model.trainable_weights}
    tensors.update(lora.alpha_tensors(model))
    if global_step is not None:
        tensors[GLOBAL_STEP] = tf.constant(int(global_step), tf.int64)
    return tensors


def save_tf1_checkpoint(model, prefix, optimizer=None, global_step=None,
                        overwrite=False, extra_tensors=None,
                        allow_non_finite=False):
    """Writes a TF1 name-based checkpoint the original code can load.

    `<prefix>.index` and `<prefix>.data-00000-of-00001`, written under a
    temporary name and renamed, index last.

    Args:
        model: a `BertModel` or task model.
        prefix: e.g. `out/bert_model.ckpt` or `out/model.ckpt-343`.
        optimizer: optional; adds `<name>/adam_m`, `<name>/adam_v` for each
            trainable weight and `global_step`.
        global_step: optional int written as `global_step` (int64); default
            `optimizer.iterations` when an optimizer is given.
        overwrite: allow replacing an existing checkpoint at `prefix`.
        extra_tensors: optional `{name: tensor}` written as well.
        allow_non_finite: write weights holding NaN/Inf.

    Returns:
        str, the prefix written.

    Raises:
        CheckpointExistsError: a checkpoint exists at `prefix` and not
            `overwrite`.
        CheckpointNonFiniteError: a weight or slot holds NaN/Inf (names
            them); nothing is written.
        bert_tf1.data.io.errors.OutputWriteError: disk full or another OS error.
    """
    tensors = _tensors_to_save(model, optimizer, global_step)
    tensors.update(extra_tensors or {})
    return write_tensors(os.fspath(prefix), tensors, overwrite,
                         allow_non_finite)


def save_lora_adapters(model, prefix, global_step=None, overwrite=False):
    """Writes `adapter_tensors(model, global_step)` as a TF1 checkpoint at
    `prefix` (as `save_tf1_checkpoint`, same errors); returns the prefix."""
    return write_tensors(os.fspath(prefix),
                         adapter_tensors(model, global_step), overwrite)


def write_tensors(prefix, tensors, overwrite=False, allow_non_finite=False):
    """Writes `{name: tensor}` at `prefix`; see `save_tf1_checkpoint`."""
    _check_free(prefix, overwrite)
    found = [] if allow_non_finite else non_finite_tensors(
        {name: tensor.numpy() for name, tensor in tensors.items()})
    if found:
        raise CheckpointNonFiniteError(
            f"{prefix} not written: {len(found)} tensor(s) hold NaN or Inf: "
            f"{describe_non_finite(found)}. The weights diverged; earlier "
            "checkpoints are kept as they were.")
    names = sorted(tensors)
    # Index last: a reader never finds an index without its data.
    with atomic_output(prefix, suffixes=(".data-00000-of-00001", ".index")) as tmp_prefix:
        tf.raw_ops.SaveV2(
            prefix=tmp_prefix, tensor_names=names,
            shape_and_slices=[""] * len(names),
            tensors=[tensors[name] for name in names])
    return prefix
