"""Checks that run before any file is written or any training starts.

Each raises `bert_tf1.tasks.errors.UserError` with one message naming the file or flag,
what was found and what was expected; the tasks call them from `prepare()`.
"""
import os
import re

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf1.data.io import output_lock
from bert_tf1.data.io.results import write_text_atomically
from bert_tf1.data.pretraining.dataset import expand_input_files
from bert_tf1.modeling import checkpoints, training
from bert_tf1.modeling.interop import sources
from bert_tf1.modeling.layers import lora
from bert_tf1.tasks.errors import UserError

_LAYER_PATTERN = re.compile(r"^bert/encoder/layer_(\d+)/")


def check_positive(**values):
    """Raises unless every named flag value is > 0 (e.g. batch sizes)."""
    for name, value in values.items():
        if value is None or value <= 0:
            raise UserError(f"--{name}={value}: expected a value > 0")


def check_schedule(learning_rate, warmup_proportion=None):
    """`--learning_rate` > 0 (None: the task's default) and
    `--warmup_proportion` (None: none) in [0, 1]."""
    if learning_rate is not None and not learning_rate > 0:
        raise UserError(f"--learning_rate={learning_rate}: expected a value "
                        "> 0")
    if warmup_proportion is not None and not 0 <= warmup_proportion <= 1:
        raise UserError(f"--warmup_proportion={warmup_proportion}: expected "
                        "a share of the training steps in [0, 1]")


def check_metric_name(value, names, flag="--keep_best_checkpoint"):
    """`value` is one of the evaluation's `names` (None: not known yet)."""
    if names is not None and value not in names:
        raise UserError(f"{flag}={value}: not a number this task's "
                        f"evaluation gives; expected one of "
                        f"{', '.join(sorted(names))}")


def check_distinct(labels, flag):
    """No label of `labels` (a list of str from `flag`) is given twice."""
    seen = set()
    for label in labels:
        if label in seen:
            raise UserError(f"{flag}: label {label!r} is given twice; "
                            "expected each label once (its position is its "
                            "id)")
        seen.add(label)


def check_data_file(path, flag):
    """The file `path` that `flag` (e.g. "--do_train") needs exists, is a
    file and is not empty."""
    if not path:
        raise UserError(f"{flag} needs a data file, but none was given")
    if not tf.io.gfile.exists(path):
        raise UserError(f"{path}: file not found (needed by {flag})")
    if tf.io.gfile.isdir(path):
        raise UserError(f"{path}: is a directory, expected a file (needed by "
                        f"{flag})")
    if tf.io.gfile.stat(path).length == 0:
        raise UserError(f"{path}: file is empty (needed by {flag})")


def check_examples(examples, path, flag):
    """A data file read for `flag` gave at least one example."""
    if not examples:
        raise UserError(f"{path}: no examples (empty or header-only file), "
                        f"expected at least one for {flag}")


def check_train_steps(num_train_steps, num_examples, path, config):
    """At least one training step: examples / train_batch_size * epochs."""
    if num_train_steps < 1:
        raise UserError(
            "%s: %d examples / --train_batch_size=%d * --num_train_epochs=%g "
            "gives no training step; expected at least 1" % (
                path, num_examples, config.train_batch_size,
                config.num_train_epochs))


def check_input_files(input_file, flag="--input_file"):
    """The files (in pattern order) of a comma-separated glob list, each
    one checked by `check_data_file`."""
    try:
        files = expand_input_files(input_file or "")
    except ValueError as error:
        raise UserError(f"{flag}={input_file}: {error}") from None
    for path in files:
        check_data_file(path, flag)
    return files


def check_output_dir_writable(output_dir, flag="--output_dir"):
    """`output_dir` (or its nearest existing parent) is a writable folder;
    remote paths are not checked, nothing is created."""
    if not output_dir:
        raise UserError(f"{flag} is empty; expected a folder to write to")
    if "://" in str(output_dir):
        return
    path = os.path.abspath(os.fspath(output_dir))
    existing = path
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise UserError(f"{flag}={output_dir}: {existing} is a file, expected "
                        "a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"{flag}={output_dir}: {existing} is not writable")


def check_output_dir_free(output_dir):
    """No other live run (workers of this run's own TF_CONFIG cluster aside,
    `bert_tf1/data/io/output_lock.py`) writes to `output_dir`.

    Raises:
        UserError (OutputDirLockedError): names the other run's pid, host,
            start time and command.
    """
    if output_dir:
        output_lock.check_unlocked(output_dir,
                                   cluster=output_lock.cluster_fingerprint())


def check_random_weights_allowed(config):
    """Evaluation/prediction without any checkpoint needs
    `config.allow_random_weights` (then a warning), else a UserError."""
    if config.allow_random_weights:
        logging.warning("No checkpoint: evaluating/predicting with random "
                        "weights (--allow_random_weights).")
        return
    where = (f"--output_dir {config.output_dir} has no training checkpoint"
             if config.output_dir else "there is no output_dir checkpoint")
    raise UserError(
        f"no checkpoint to evaluate or predict with: {where} and no "
        "--init_checkpoint was given. Pass --init_checkpoint (or train first "
        "with --do_train), or --allow_random_weights=true to use a randomly "
        "initialised model.")


def check_checkpoint_finite(model, checkpoint, allow_non_finite=False):
    """Every weight of `checkpoint` the model would load is finite (a
    resume's optimizer slots are checked when they are loaded).

    Raises:
        UserError (CheckpointNonFiniteError): names the checkpoint and each
            tensor with NaN/Inf, unless `allow_non_finite` (then a warning).
    """
    if sources.checkpoint_kind(checkpoint) != "tf1":
        weights = sources.find_checkpoint(checkpoint).weights
        bad = [name for name in checkpoints.model_weights_by_name(model)
               if name in weights and not np.isfinite(weights[name]).all()]
        if bad and not allow_non_finite:
            raise UserError(f"{checkpoint} holds NaN/Inf in {len(bad)} "
                            f"weight(s), e.g. {', '.join(bad[:3])}; pass "
                            "--allow_non_finite_checkpoint=true to load it")
        return
    prefix = checkpoints.resolve_checkpoint(checkpoint)
    names = checkpoints.list_checkpoint(prefix)
    wanted = [name for name in checkpoints.model_weights_by_name(model)
              if name in names]
    checkpoints.check_finite_checkpoint(prefix, wanted, allow_non_finite)


def _canonical(prefix):
    return prefix if "://" in prefix else os.path.abspath(prefix)


def read_init_checkpoint_record(output_dir):
    """The init checkpoint recorded when training in `output_dir` started:
    a prefix, "" (random values), or None (no record)."""
    path = os.path.join(output_dir, sources.INIT_CHECKPOINT_RECORD)
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path) as reader:
        return reader.read().strip()


def record_init_checkpoint(output_dir, init_checkpoint):
    """Writes `output_dir/init_checkpoint.txt` when training starts afresh."""
    prefix = ""
    if init_checkpoint:
        prefix = _canonical(training.init_checkpoint_path(init_checkpoint))
    write_text_atomically(
        os.path.join(output_dir, sources.INIT_CHECKPOINT_RECORD),
        prefix + "\n")


def choose_checkpoint(output_dir, init_checkpoint, allow_non_finite=False):
    """The `bert_tf1.modeling.training.CheckpointChoice` of a run
    (`bert_tf1.modeling.training.choose_start`); an `--init_checkpoint` given as well
    must be the one output_dir's training started from, or its newest.

    Raises:
        UserError: `--init_checkpoint` names no checkpoint or conflicts with
            output_dir's; a bad `checkpoint` state file
            (`checkpoints.CheckpointStateError`).
    """
    try:
        choice = training.choose_start(output_dir, init_checkpoint,
                                       allow_non_finite=allow_non_finite)
    except checkpoints.CheckpointNotFoundError as error:
        raise UserError(f"--init_checkpoint: {error}") from None
    if choice.source != "output_dir" or not init_checkpoint:
        return choice
    init_prefix = _canonical(training.init_checkpoint_path(init_checkpoint))
    if init_prefix != _canonical(choice.path):
        recorded = read_init_checkpoint_record(output_dir)
        if recorded != init_prefix:
            started = ("an unrecorded checkpoint" if recorded is None else
                       repr(recorded) if recorded else "random values")
            raise UserError(
                f"--output_dir {output_dir} already holds the training "
                f"checkpoint {choice.path} (started from {started}), which "
                f"would be used instead of --init_checkpoint "
                f"{init_checkpoint}. To start from {init_checkpoint}, use "
                "a fresh --output_dir; to continue from or use "
                f"{os.path.basename(choice.path)}, drop --init_checkpoint")
    return choice


def _encoder_layers(names):
    return sorted({int(m.group(1)) for m in map(_LAYER_PATTERN.match, names) if m})


def _layer_text(layers):
    if not layers:
        return "no encoder layer"
    return f"{len(layers)} encoder layers ({layers[0]}..{layers[-1]})"


def shorten_mismatch(message, shown=3):
    """The mismatch message with at most `shown` of its per-weight lines."""
    lines = message.splitlines()
    weights = [line.strip() for line in lines
               if line.startswith("  ") and not line.startswith("  ...")]
    others = [line.strip() for line in lines if not line.startswith("  ")]
    total = re.search(r"(\d+) shape mismatch", message)
    total = int(total.group(1)) if total else len(weights)
    if total > shown:
        weights = weights[:shown] + [f"... {total - shown} more"]
    head, tail = others[:1], others[1:]
    # The head ends with "mismatch(es):", which introduces the list.
    head = [line.rstrip(":") + ":" for line in head]
    return " ".join(head[:1] + ["; ".join(weights + tail)])


def check_checkpoint_fits(model, checkpoint, bert_config_file,
                          allow_partial=False):
    """Shapes (`bert_tf1.modeling.checkpoints.check_compatible`) and the set of
    `bert/` weights of `checkpoint` against `model`, nothing assigned; other
    layers need `allow_partial`, a new task head is always fine.

    Raises:
        UserError: shapes differ, or the layers differ without allow_partial.
    """
    try:
        if sources.checkpoint_kind(checkpoint) == "tf1":
            prefix, shapes = checkpoints.check_compatible(model, checkpoint)
        else:  # A Hugging Face or keras-hub folder: its weights, by TF1 name.
            prefix, shapes = checkpoint, {
                name: list(np.shape(value)) for name, value in
                sources.find_checkpoint(checkpoint).weights.items()}
            checkpoints.check_shapes(model, shapes, checkpoint)
    except checkpoints.CheckpointMismatchError as error:
        raise UserError(f"{bert_config_file} does not fit {checkpoint}: "
                        f"{shorten_mismatch(str(error))}") from None
    # LoRA adapters are new weights, as a new head is.
    model_names = {name for name in checkpoints.model_weights_by_name(model)
                   if name.startswith("bert/") and name.rsplit("/", 1)[-1]
                   not in lora.ADAPTER_NAMES}
    checkpoint_names = {name for name in shapes if name.startswith("bert/")
                        and not checkpoints.is_optimizer_state(name)}
    if model_names == checkpoint_names or allow_partial:
        if model_names != checkpoint_names:
            logging.warning("--allow_partial_checkpoint: %s has %s, the model "
                            "%s.", prefix, _layer_text(_encoder_layers(
                                checkpoint_names)),
                            _layer_text(_encoder_layers(model_names)))
        return prefix
    ckpt_layers = _encoder_layers(checkpoint_names)
    model_layers = _encoder_layers(model_names)
    if ckpt_layers != model_layers:
        found = (f"{prefix} has {_layer_text(ckpt_layers)} but "
                 f"{bert_config_file} has num_hidden_layers="
                 f"{len(model_layers)}")
    else:
        lacking = sorted(model_names - checkpoint_names)[:3]
        extra = sorted(checkpoint_names - model_names)[:3]
        found = (f"{prefix} and the model built from {bert_config_file} "
                 f"differ in weights (model only: {lacking}; checkpoint only: "
                 f"{extra})")
    raise UserError(f"{found}; expected the same encoder. Use the "
                    "bert_config.json that came with the checkpoint, or pass "
                    "--allow_partial_checkpoint=true if this is intended")
