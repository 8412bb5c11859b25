"""Reading and writing the original's TF1 name-based checkpoints.

A released BERT checkpoint (`bert_model.ckpt.{index,data-*}`) and one written by
the original scripts (`model.ckpt-N` + a `checkpoint` file, with `*/adam_m`,
`*/adam_v` and `global_step`) load into our Keras models directly: each Keras
weight's TF1 name comes from its path by the rule in `modeling/naming.py`, so no
table of names is needed. Our heads keep every `output_weights` in the original
`[out, in]` orientation, so tensors are copied without any transposition.

Writing produces the same names, shapes and orientation, so the original code
(`tf.train.init_from_checkpoint`, `tf.train.Saver`) can load our checkpoints.
"""
import dataclasses
import os
import re

import numpy as np
import tensorflow as tf
from absl import logging

from data.io.atomic import atomic_output
from modeling.naming import tf1_name

# Names in TF1 checkpoints that hold optimizer or bookkeeping state, not weights.
_NON_WEIGHT_PATTERN = re.compile(
    r"(/adam_[mv]$|/Adam(_\d+)?$|/Momentum$|/Adagrad$|/Lamb(_\d+)?$|"
    r"^global_step$|^beta[12]_power$|^_CHECKPOINTABLE_OBJECT_GRAPH$|"
    r"AdamWeightDecayOptimizer|^good_steps$|^loss_scale$|^current_loss_scale$)")

GLOBAL_STEP = "global_step"
SLOT_NAMES = ("adam_m", "adam_v")
RELEASED_CHECKPOINT_NAME = "bert_model.ckpt"


class CheckpointMismatchError(ValueError):
    """The checkpoint does not fit the model: nothing was assigned."""


class CheckpointCorruptError(ValueError):
    """A checkpoint file is truncated or damaged (names the file)."""


def _data_files(prefix):
    return sorted(tf.io.gfile.glob(prefix + ".data-*")) or [
        prefix + ".data-00000-of-00001"]


def _read_variables(prefix):
    """`tf.train.list_variables`, with a clear error for a damaged index."""
    try:
        return dict(tf.train.list_variables(prefix))
    except (tf.errors.OpError, IndexError, ValueError) as error:
        raise CheckpointCorruptError(
            f"{prefix}.index: not a readable checkpoint index; the file is "
            f"truncated or corrupt ({str(error).splitlines()[0]}). Copy or "
            "download the checkpoint again.") from None


def _check_data_size(prefix, shapes):
    """The `.data-*` files hold at least the bytes the index's tensors need.

    A checkpoint's data files are its tensors' raw bytes one after another,
    so a file cut short (an interrupted copy or download) is smaller than
    the sum of the fixed-size tensors; found here without reading any
    tensor, so before any work starts. String tensors (variable size) are
    not counted.

    Raises:
        CheckpointCorruptError: fewer bytes than needed (names the files).
    """
    dtypes = tf.train.load_checkpoint(prefix).get_variable_to_dtype_map()
    needed = sum(int(np.prod(shape)) * dtypes[name].size
                 for name, shape in shapes.items()
                 if dtypes[name] != tf.string)
    files = _data_files(prefix)
    missing = [path for path in files if not tf.io.gfile.exists(path)]
    if missing and needed:
        raise CheckpointCorruptError(
            f"{', '.join(missing)}: checkpoint data file is missing (the index "
            f"{prefix}.index lists tensors stored there). Copy the whole "
            "checkpoint: the .index and every .data-* file.")
    found = sum(tf.io.gfile.stat(path).length for path in files
                if tf.io.gfile.exists(path))
    if found < needed:
        raise CheckpointCorruptError(
            f"{', '.join(files)}: checkpoint data is truncated or corrupt "
            f"({found} bytes, expected at least {needed} for the tensors its "
            "index lists). "
            "Copy or download the checkpoint again.")


def _read_tensors(prefix, names):
    """Reads `names` from a checkpoint; a short or damaged data file is named.

    Returns:
        dict name -> numpy array.

    Raises:
        CheckpointCorruptError: the `.data-*` file holds fewer bytes than the
            index promises, or fails its checksum (TF raises a bare
            `IndexError: Read less bytes than requested` or a DataLossError).
    """
    reader = tf.train.load_checkpoint(prefix)
    values = {}
    for name in names:
        try:
            values[name] = reader.get_tensor(name)
        except (tf.errors.OpError, IndexError) as error:
            raise CheckpointCorruptError(
                f"{', '.join(_data_files(prefix))}: checkpoint data is "
                f"truncated or corrupt (reading {name!r} failed: "
                f"{str(error).splitlines()[0]}). Copy or download the "
                "checkpoint again.") from None
    return values


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


def is_optimizer_state(name):
    """True for checkpoint entries that are optimizer state or bookkeeping."""
    return bool(_NON_WEIGHT_PATTERN.search(name))


def resolve_checkpoint(path):
    """Turns what a user passes as `--init_checkpoint` into a checkpoint prefix.

    Accepts a prefix (`dir/bert_model.ckpt`, `dir/model.ckpt-343`), a directory
    with a `checkpoint` state file (its latest checkpoint wins), or a directory
    holding `bert_model.ckpt.index`.

    Returns:
        str, a prefix whose `.index` file exists.

    Raises:
        FileNotFoundError: nothing checkpoint-like is at `path`; the message says
            what was looked for.
    """
    path = os.fspath(path)
    if tf.io.gfile.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest:
            return latest
        released = os.path.join(path, RELEASED_CHECKPOINT_NAME)
        if tf.io.gfile.exists(released + ".index"):
            return released
        raise FileNotFoundError(
            f"No checkpoint in directory {path}: expected a `checkpoint` state "
            f"file or `{RELEASED_CHECKPOINT_NAME}.index`.")
    if tf.io.gfile.exists(path + ".index"):
        return path
    if path.endswith(".index") and tf.io.gfile.exists(path):
        return path[:-len(".index")]
    # A data file named instead of the prefix (model.ckpt.data-00000-of-00001).
    data_suffix = re.search(r"\.data-\d+-of-\d+$", path)
    if data_suffix and tf.io.gfile.exists(path[:data_suffix.start()] + ".index"):
        return path[:data_suffix.start()]
    raise FileNotFoundError(
        f"Checkpoint not found: {path} (looked for {path}.index, or a directory "
        "holding one).")


def list_checkpoint(path):
    """`{name: shape list}` of every tensor in a checkpoint (the index suffices)."""
    return _read_variables(resolve_checkpoint(path))


def model_weights_by_name(model):
    """`{TF1 name: Keras variable}` for every weight of `model`.

    Raises:
        ValueError: two weights map to the same TF1 name (a model built so its
            paths do not follow the naming rule).
    """
    weights = {}
    for variable in model.weights:
        name = tf1_name(variable)
        if name in weights and weights[name] is not variable:
            raise ValueError(
                f"Two weights of {model.name} map to the TF1 name {name!r}: "
                f"{weights[name].path} and {variable.path}.")
        weights[name] = variable
    return weights


def _optimizer_slots(optimizer, variable):
    slots = optimizer.slot_variables(variable)
    return {f"{tf1_name(variable)}/{slot}": slots[slot] for slot in SLOT_NAMES
            if slot in slots}


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
        FileNotFoundError: no checkpoint at `checkpoint`.
        CheckpointCorruptError: the index is unreadable or the data files
            hold fewer bytes than its tensors need.
        CheckpointMismatchError: no weight name matches, or some shapes differ
            (every differing weight is named with both shapes).
    """
    prefix = resolve_checkpoint(checkpoint)
    shapes = _read_variables(prefix)
    weights = model_weights_by_name(model)
    matched = [name for name in weights if name in shapes]
    if not matched:
        sample = sorted(n for n in shapes if not is_optimizer_state(n))[:5]
        raise CheckpointMismatchError(
            f"Checkpoint {prefix} matches no weight of model {model.name!r}. "
            f"It holds e.g. {sample}; the model expects e.g. "
            f"{sorted(weights)[:5]}.")
    mismatches = [
        f"  {name}: checkpoint {list(shapes[name])} vs model "
        f"{list(weights[name].shape)}"
        for name in matched if list(shapes[name]) != list(weights[name].shape)]
    if mismatches:
        raise CheckpointMismatchError(
            f"Checkpoint {prefix} does not fit the model config; nothing was "
            f"loaded. {len(mismatches)} shape mismatch(es):\n"
            + "\n".join(mismatches) + _mismatch_hints(shapes, weights))
    # After the shape checks: a config that does not fit is found from the
    # index alone, even where the data files are absent or short.
    _check_data_size(prefix, shapes)
    return prefix, shapes


def load_tf1_checkpoint(model, checkpoint, optimizer=None, verbose=True):
    """Loads a TF1 BERT checkpoint into a model built from this package.

    Optimizer state (`*/adam_m`, `*/adam_v`, `global_step`, ...) is skipped,
    unless `optimizer` is given: then its slots and `iterations` are restored
    too, so training resumes where the checkpoint left off. Weights the
    checkpoint lacks (e.g. a new classifier head) keep their initial values.

    Args:
        model: a `BertModel` or task model (`modeling.models`).
        checkpoint: a prefix, or a directory (see `resolve_checkpoint`).
        optimizer: optional `modeling.optimization.AdamWeightDecay` whose
            variables are built (`optimizer.build(model.trainable_variables)`).
        verbose: log loaded, missing and unused names (absl logging, INFO).

    Returns:
        LoadStatus.

    Raises:
        FileNotFoundError: no checkpoint there.
        CheckpointMismatchError: no weight name matches, or any shape differs;
            checked before anything is assigned.
        CheckpointCorruptError: the index or data file is truncated or
            damaged (names the file); nothing is assigned.

    Source: `get_assignment_map_from_checkpoint` plus
    `tf.train.init_from_checkpoint` in the original scripts (same-name mapping,
    extras ignored, missing ones left initialised).
    """
    prefix, shapes = check_compatible(model, checkpoint)
    weights = model_weights_by_name(model)
    loaded = sorted(name for name in weights if name in shapes)
    missing = sorted(name for name in weights if name not in shapes)
    unused = sorted(name for name in shapes
                    if name not in weights and not is_optimizer_state(name))
    slot_pairs = []
    if optimizer is not None:
        for name in loaded:
            for slot_name, slot in _optimizer_slots(optimizer, weights[name]).items():
                if slot_name in shapes:
                    slot_pairs.append((slot, slot_name))
    restore_optimizer = bool(slot_pairs) and GLOBAL_STEP in shapes
    # Everything is read before anything is assigned, so a damaged file
    # leaves the model as it was.
    values = _read_tensors(prefix, loaded + (
        [slot_name for _, slot_name in slot_pairs] + [GLOBAL_STEP]
        if restore_optimizer else []))
    assignments = [(weights[name], values[name]) for name in loaded]
    optimizer_restored = False
    if restore_optimizer:
        assignments.extend((slot, values[slot_name]) for slot, slot_name in slot_pairs)
        assignments.append((optimizer.iterations, values[GLOBAL_STEP]))
        optimizer_restored = True

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
        if optimizer_restored:
            logging.info("Restored optimizer state at global_step %d.",
                         int(values[GLOBAL_STEP]))
    return LoadStatus(prefix, loaded, missing, unused, optimizer_restored)


def _tensors_to_save(model, optimizer, global_step):
    tensors = {name: tf.convert_to_tensor(variable.value)
               for name, variable in model_weights_by_name(model).items()}
    if optimizer is not None:
        for variable in model.trainable_weights:
            for slot_name, slot in _optimizer_slots(optimizer, variable).items():
                tensors[slot_name] = tf.convert_to_tensor(slot.value)
        if global_step is None:
            global_step = int(optimizer.iterations.numpy())
    if global_step is not None:
        tensors[GLOBAL_STEP] = tf.constant(int(global_step), tf.int64)
    return tensors


def save_tf1_checkpoint(model, prefix, optimizer=None, global_step=None,
                        overwrite=False, extra_tensors=None):
    """Writes a TF1 name-based checkpoint the original code can load.

    Writes `<prefix>.index` and `<prefix>.data-00000-of-00001` with the
    original variable names, shapes and orientation. Written under a temporary
    name and renamed, index last, so a crash never leaves a half checkpoint
    under `prefix`.

    Args:
        model: a `BertModel` or task model.
        prefix: e.g. `out/bert_model.ckpt` or `out/model.ckpt-343`.
        optimizer: optional; adds `<name>/adam_m`, `<name>/adam_v` for each
            trainable weight and `global_step` (as the original's training
            checkpoints).
        global_step: optional int written as `global_step` (int64); defaults to
            `optimizer.iterations` when an optimizer is given.
        overwrite: allow replacing an existing checkpoint at `prefix`.
        extra_tensors: optional `{name: tensor}` written as well (e.g. the
            float16 loss scale, `loss_scale`/`good_steps`, which loaders skip).

    Returns:
        str, the prefix written.

    Raises:
        FileExistsError: a checkpoint already exists at `prefix` and
            `overwrite` is False (a user's checkpoint is never replaced by
            accident).
    """
    prefix = os.fspath(prefix)
    if tf.io.gfile.exists(prefix + ".index") and not overwrite:
        raise FileExistsError(
            f"A checkpoint already exists at {prefix}; not overwriting it. "
            "Choose another path or pass overwrite=True.")
    directory = os.path.dirname(prefix)
    if directory:
        tf.io.gfile.makedirs(directory)
    tensors = _tensors_to_save(model, optimizer, global_step)
    tensors.update(extra_tensors or {})
    names = sorted(tensors)
    # Index last: a reader never finds an index without its data.
    with atomic_output(prefix, suffixes=(".data-00000-of-00001", ".index")) as tmp_prefix:
        tf.raw_ops.SaveV2(
            prefix=tmp_prefix, tensor_names=names,
            shape_and_slices=[""] * len(names),
            tensors=[tensors[name] for name in names])
    return prefix


def remove_unlisted_checkpoints(output_dir, prefix="model.ckpt"):
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
