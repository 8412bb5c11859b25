"""Loading TF1 checkpoints into our Keras models (and checking they fit).

Each Keras weight's TF1 name comes from its path (`bert_tf1/modeling/naming.py`), and
our heads keep `output_weights` in the original `[out, in]` orientation, so
tensors are copied by name without any table or transposition.
"""
import dataclasses

import numpy as np
from absl import logging

from bert_tf1.data.io.errors import UserError, cut_list
from bert_tf1.modeling.checkpoints.finiteness import check_finite
from bert_tf1.modeling.checkpoints.files import (GLOBAL_STEP, SLOT_NAMES,
                                                 check_data_size, is_optimizer_state,
                                                 iter_tensors, read_variables,
                                                 resolve_checkpoint)
from bert_tf1.modeling.layers import lora
from bert_tf1.modeling.naming import check_layer_names, tf1_name
from bert_tf1.modeling.checkpoints.model_kind import check_tf1_names


class CheckpointMismatchError(UserError):
    """The checkpoint does not fit the model: nothing was assigned."""


@dataclasses.dataclass
class LoadStatus:
    """What `load_tf1_checkpoint` did.

    Attributes:
        checkpoint: the resolved checkpoint prefix.
        loaded: TF1 names assigned from the checkpoint.
        missing: model weights absent from the checkpoint (left as initialised).
        unused: checkpoint weights the model has no place for (optimizer state
            excluded).
        optimizer_restored: True when slots and `global_step` were restored.
    """
    checkpoint: str
    loaded: list
    missing: list
    unused: list
    optimizer_restored: bool = False


def model_weights_by_name(model):
    """`{TF1 name: Keras variable}` for every weight of `model`.

    Raises:
        AutoNamedLayerError: a layer around the encoder has a name Keras
            made up (`bert_tf1.modeling.naming.check_layer_names`).
        ValueError: two weights map to the same TF1 name (a model built so its
            paths do not follow the naming rule).
    """
    check_layer_names(model)
    weights = {}
    for variable in model.weights:
        name = tf1_name(variable, model)
        if name in weights and weights[name] is not variable:
            raise ValueError(
                f"Two weights of {model.name} map to the TF1 name {name!r}: "
                f"{weights[name].path} and {variable.path}.")
        weights[name] = variable
    return weights


def optimizer_slots(optimizer, variable, name=None):
    """`{<name>/adam_m|adam_v: slot}`; `name` defaults to the TF1 name."""
    slots = optimizer.slot_variables(variable)
    name = name or tf1_name(variable)
    return {f"{name}/{slot}": slots[slot] for slot in SLOT_NAMES
            if slot in slots}


def checkpoint_weights(model, shapes):
    """`{checkpoint name: Keras variable}`: the TF1 names, except that a
    LoRA model's unmerged state (base kernels, adapters) is read from
    `lora.RESUME_SCOPE` where the checkpoint holds it (a training checkpoint
    or adapters file of a LoRA run; elsewhere the kernels are the base).

    Raises:
        CheckpointMismatchError: the checkpoint holds LoRA adapters outside
            that scope that the model lacks (unmerged: ignoring them would
            give the base model).
    """
    weights = model_weights_by_name(model)
    unmerged = sorted(name for name in shapes
                      if name.rsplit("/", 1)[-1] in lora.ADAPTER_NAMES
                      and not name.startswith(lora.RESUME_SCOPE)
                      and name not in weights)
    if unmerged:
        raise CheckpointMismatchError(
            f"Checkpoint holds LoRA adapters not merged into its kernels "
            f"({unmerged[0]}, {len(unmerged)} in all) and model "
            f"{model.name!r} has none: loading it would silently give the "
            "base model. Enable LoRA on the model (enable_lora, --lora_rank) "
            "or save a merged checkpoint (bert_tf1.modeling.layers.lora).")
    resume = lora.resume_names(model)
    return {(resume[name] if resume.get(name) in shapes else name): variable
            for name, variable in weights.items()}


def _mismatch_hints(shapes, weights):
    """Says which config field most likely differs, when it is clear."""
    hints = []
    word = "bert/embeddings/word_embeddings"
    if word in shapes and word in weights:
        (ckpt_vocab, ckpt_hidden) = shapes[word]
        (model_vocab, model_hidden) = weights[word].shape
        if ckpt_hidden != model_hidden:
            hints.append(f"hidden_size: the checkpoint has {ckpt_hidden}, the "
                         f"config {model_hidden} (wrong bert_config.json for "
                         "this checkpoint?)")
        elif ckpt_vocab != model_vocab:
            hints.append(f"vocab_size: the checkpoint has {ckpt_vocab}, the "
                         f"config {model_vocab}")
    for name in ("output_bias", "cls/squad/output_bias"):
        if name in shapes and name in weights and (
                list(shapes[name]) != list(weights[name].shape)):
            hints.append(f"number of labels: the checkpoint's head has "
                         f"{shapes[name][0]}, the model "
                         f"{weights[name].shape[0]}")
    if not hints:
        return ""
    return "\nLikely cause: " + "; ".join(hints) + "."


def check_compatible(model, checkpoint):
    """Checks names and shapes without assigning anything.

    Returns:
        (prefix, {name: shape}) of the checkpoint.

    Raises:
        CheckpointNotFoundError: no checkpoint at `checkpoint`.
        CheckpointCorruptError: the index is unreadable or the data files
            hold fewer bytes than its tensors need.
        CheckpointMismatchError: no weight name matches, or some shapes differ
            (every differing weight is named with both shapes).
    """
    prefix = resolve_checkpoint(checkpoint)
    shapes = read_variables(prefix)
    check_shapes(model, shapes, prefix)
    # After the shape checks: a config that does not fit is found from the
    # index alone, even where the data files are absent or short.
    check_data_size(prefix, shapes)
    return prefix, shapes


def check_shapes(model, shapes, source):
    """Checks a checkpoint's `{TF1 name: shape}` against `model`'s weights.

    Returns:
        `checkpoint_weights(model, shapes)`.

    Raises:
        CheckpointMismatchError: no weight name matches, or some shapes differ
            (every differing weight is named with both shapes).
        OtherModelError: the names are another model's (ALBERT, ELECTRA).
    """
    check_tf1_names(shapes, source)
    try:
        weights = checkpoint_weights(model, shapes)
    except CheckpointMismatchError as error:
        raise CheckpointMismatchError(f"{source}: {error}") from None
    matched = [name for name in weights if name in shapes]
    if not matched:
        sample = sorted(n for n in shapes if not is_optimizer_state(n))[:5]
        raise CheckpointMismatchError(
            f"Checkpoint {source} matches no weight of model {model.name!r}. "
            f"It holds e.g. {sample}; the model expects e.g. "
            f"{sorted(weights)[:5]}.")
    mismatches = [
        f"{name}: checkpoint {list(shapes[name])} vs model "
        f"{list(weights[name].shape)}"
        for name in matched if list(shapes[name]) != list(weights[name].shape)]
    if mismatches:
        # A Base config against a Mini checkpoint differs in every weight: a
        # few of them and the count say it (and stay on one screen).
        raise CheckpointMismatchError(
            f"Checkpoint {source} does not fit the model config; nothing was "
            f"loaded. {len(mismatches)} shape mismatch(es):\n  "
            + cut_list(mismatches, separator="\n  ")
            + _mismatch_hints(shapes, weights))
    return weights


def _check_lora_alpha(model, prefix, shapes):
    """Adapters saved with another alpha would be scaled wrongly: refused
    (CheckpointMismatchError). Files without the record load as before."""
    alpha = lora.lora_alpha(model)
    if alpha is None or lora.ALPHA_NAME not in shapes:
        return
    saved = float(dict(iter_tensors(prefix, [lora.ALPHA_NAME]))[lora.ALPHA_NAME])
    if not np.isclose(saved, alpha, rtol=1e-6, atol=0.0):
        raise CheckpointMismatchError(
            f"{prefix} holds LoRA adapters trained with alpha {saved:g}, but "
            f"model {model.name!r} has alpha {alpha:g}: pass --lora_alpha="
            f"{saved:g} (enable_lora(alpha={saved:g})).")


def load_tf1_checkpoint(model, checkpoint, optimizer=None, verbose=True,
                        allow_non_finite=False):
    """Loads a TF1 BERT checkpoint into a model built from this package.

    Optimizer state is skipped unless `optimizer` is given (then its slots
    and `iterations` are restored too). Weights the checkpoint lacks keep
    their initial values.

    Args:
        model: a `BertModel` or task model (`bert_tf1.modeling.models`).
        checkpoint: a prefix, or a directory (see `resolve_checkpoint`).
        optimizer: optional optimizer whose variables are built.
        verbose: log loaded, missing and unused names (absl INFO).
        allow_non_finite: load tensors holding NaN/Inf (with a warning).

    Returns:
        LoadStatus.

    Raises (nothing is assigned then):
        CheckpointNotFoundError: no checkpoint there.
        CheckpointMismatchError: no weight name matches, a shape differs, or
            LoRA adapters were saved with another alpha than the model's.
        CheckpointCorruptError: the index or data file is truncated or
            damaged (names the file).
        finiteness.CheckpointNonFiniteError: a tensor holds NaN/Inf, unless
            `allow_non_finite`.

    Source: `get_assignment_map_from_checkpoint` plus
    `tf.train.init_from_checkpoint` in the original scripts.
    """
    prefix, shapes = check_compatible(model, checkpoint)
    weights = checkpoint_weights(model, shapes)
    _check_lora_alpha(model, prefix, shapes)
    loaded = sorted(name for name in weights if name in shapes)
    missing = sorted(name for name in weights if name not in shapes)
    unused = sorted(name for name in shapes
                    if name not in weights and not is_optimizer_state(name)
                    and name != lora.ALPHA_NAME)
    slot_pairs = []
    if optimizer is not None:
        # Only trainable weights have slots (BertSquad's unused pooler has
        # none; a checkpoint's slots for it are unused optimizer state).
        for name in (name for name in loaded if weights[name].trainable):
            for slot_name, slot in optimizer_slots(
                    optimizer, weights[name], name).items():
                if slot_name in shapes:
                    slot_pairs.append((slot, slot_name))
    restore_optimizer = bool(slot_pairs) and GLOBAL_STEP in shapes
    # Everything is read before anything is assigned, so a damaged file
    # leaves the model as it was.
    values = dict(iter_tensors(prefix, loaded + (
        [slot_name for _, slot_name in slot_pairs] + [GLOBAL_STEP]
        if restore_optimizer else [])))
    check_finite(values, prefix, allow_non_finite)
    assignments = [(weights[name], values[name]) for name in loaded]
    if restore_optimizer:
        assignments.extend((slot, values[slot_name]) for slot, slot_name in slot_pairs)
        assignments.append((optimizer.iterations, values[GLOBAL_STEP]))

    for variable, value in assignments:
        variable.assign(np.asarray(value).astype(variable.dtype))

    if verbose:
        logging.info("Loaded %d weights from %s.", len(loaded), prefix)
        for name in loaded:
            logging.info("  %s, shape = %s, *INIT_FROM_CKPT*", name,
                         list(shapes[name]))
        if missing:
            logging.info("%d weights not in the checkpoint, freshly "
                         "initialised: %s", len(missing), ", ".join(missing))
        if unused:
            logging.info("%d checkpoint weights unused by the model: %s",
                         len(unused), ", ".join(unused))
        if restore_optimizer:
            logging.info("Restored optimizer state at global_step %d.",
                         int(values[GLOBAL_STEP]))
    return LoadStatus(prefix, loaded, missing, unused, restore_optimizer)
