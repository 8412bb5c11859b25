"""Checks that run before any file is written or any training starts.

Each raises `tasks.errors.UserError` with one message naming the file or flag,
what was found and what was expected. The tasks call them from `prepare()`;
`tests/tasks/test_checks.py` calls them directly.

Checkpoint choice (the Estimator's rule, stated in the log every time): the
newest `model.ckpt-N` in `output_dir` wins over `--init_checkpoint`. So that a
rerun after an interruption still resumes, training records the checkpoint it
started from in `output_dir/init_checkpoint.txt`; passing `--init_checkpoint`
with an output_dir whose training started from something else is an error
that says which checkpoint would be used and how to choose.
"""
import os
import re

import tensorflow as tf
from absl import logging

from data.io import output_lock
from data.io.results import write_text_atomically
from data.pretraining.dataset import expand_input_files
from data.tokenization import full_tokenizer
from modeling import checkpoints, training
from tasks.errors import UserError

INIT_CHECKPOINT_RECORD = "init_checkpoint.txt"
_LAYER_PATTERN = re.compile(r"^bert/encoder/layer_(\d+)/")


def check_positive(**values):
    """Raises unless every named flag value is > 0 (e.g. batch sizes)."""
    for name, value in values.items():
        if value is None or value <= 0:
            raise UserError(f"--{name}={value}: expected a value > 0")


def check_data_file(path, flag):
    """The file `flag` needs exists, is a file and is not empty.

    Args:
        path: str, the data file.
        flag: str, what needs it (e.g. "--do_train"), for the message.
    """
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
    """A data file read for `flag` gave at least one example.

    Raises:
        UserError: no example (an empty or header-only file).
    """
    if not examples:
        raise UserError(f"{path}: no examples (empty or header-only file), "
                        f"expected at least one for {flag}")


def check_train_steps(num_train_steps, num_examples, path, config):
    """At least one training step: examples / train_batch_size * epochs.

    Raises:
        UserError: the count gives 0 steps (names the file and the flags).
    """
    if num_train_steps < 1:
        raise UserError(
            "%s: %d examples / --train_batch_size=%d * --num_train_epochs=%g "
            "gives no training step; expected at least 1" % (
                path, num_examples, config.train_batch_size,
                config.num_train_epochs))


def check_input_files(input_file, flag="--input_file"):
    """Expands a comma-separated glob list; every match must be non-empty.

    Returns:
        list of str, the files in pattern order.
    """
    try:
        files = expand_input_files(input_file or "")
    except ValueError as error:
        raise UserError(f"{flag}={input_file}: {error}") from None
    for path in files:
        check_data_file(path, flag)
    return files


def check_vocab(vocab_file, do_lower_case, bert_config, bert_config_file):
    """Loads the tokenizer and checks its ids fit the config's `vocab_size`.

    Returns:
        `FullTokenizer`.
    """
    check_data_file(vocab_file, "--vocab_file")
    return full_tokenizer.tokenizer_for_model(
        vocab_file, do_lower_case, bert_config.vocab_size, bert_config_file)


def check_output_dir_writable(output_dir, flag="--output_dir"):
    """`output_dir` (or its nearest existing parent) is a writable folder.

    Remote paths (`gs://...`) are not checked. Nothing is created.
    """
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
    """No other live run writes to `output_dir` (nothing is written here).

    Workers of this run's own multi-worker cluster (same `TF_CONFIG`
    cluster) do not count; see `data/io/output_lock.py`.

    Raises:
        UserError (OutputDirLockedError): names the other run's pid, host,
            start time and command.
    """
    if output_dir:
        output_lock.check_unlocked(output_dir,
                                   cluster=output_lock.cluster_fingerprint())


def check_random_weights_allowed(config):
    """Evaluation/prediction without any checkpoint needs --allow_random_weights.

    Random weights give predictions that look like results; a state file
    pointing at a missing file, or a forgotten --init_checkpoint, used to
    end that way with exit status 0.

    Raises:
        UserError: no checkpoint and not `config.allow_random_weights`.
    """
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
    """Every tensor of `checkpoint` the model would load is finite.

    Reads those weights once, one at a time (a NaN found here stops the run
    before anything is written; loading checks the values it reads again,
    optimizer slots included).

    Raises:
        UserError (CheckpointNonFiniteError): names the checkpoint and each
            tensor with NaN/Inf, unless `allow_non_finite` (then a warning).
    """
    prefix = checkpoints.resolve_checkpoint(checkpoint)
    names = checkpoints.list_checkpoint(prefix)
    # The weights only: a resume's Adam slots (twice their size) are checked
    # when they are loaded, before anything is assigned.
    wanted = [name for name in checkpoints.model_weights_by_name(model)
              if name in names]
    checkpoints.check_finite_checkpoint(prefix, wanted, allow_non_finite)


def _canonical(prefix):
    return prefix if "://" in prefix else os.path.abspath(prefix)


def read_init_checkpoint_record(output_dir):
    """The init checkpoint recorded when training in `output_dir` started.

    Returns:
        str (a prefix, or "" for a run from random values), or None when
        no record exists (an output_dir from before this rule).
    """
    path = os.path.join(output_dir, INIT_CHECKPOINT_RECORD)
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path) as reader:
        return reader.read().strip()


def record_init_checkpoint(output_dir, init_checkpoint):
    """Writes `output_dir/init_checkpoint.txt` when training starts afresh."""
    prefix = ""
    if init_checkpoint:
        prefix = _canonical(checkpoints.resolve_checkpoint(init_checkpoint))
    write_text_atomically(os.path.join(output_dir, INIT_CHECKPOINT_RECORD),
                          prefix + "\n")


def choose_checkpoint(output_dir, init_checkpoint, allow_non_finite=False):
    """The checkpoint a run will use, checked against `--init_checkpoint`.

    The rule is `modeling.training.choose_start` (a training checkpoint in
    `output_dir` wins: a rerun resumes, an eval/predict run uses the
    fine-tuned weights). With `--init_checkpoint` given as well, that is
    only accepted when the output_dir's training was started from that same
    checkpoint (recorded in init_checkpoint.txt) or `--init_checkpoint`
    names the newest training checkpoint itself. The task keeps the result
    and restores exactly it (`Task.train_model`, `Task.restore_weights`).

    Returns:
        `modeling.training.CheckpointChoice`.

    Raises:
        UserError: `--init_checkpoint` names no checkpoint, or conflicts
            with the training checkpoint in `output_dir`; output_dir's
            `checkpoint` state file names a path outside it or a missing
            checkpoint (`checkpoints.CheckpointStateError`).
    """
    try:
        choice = training.choose_start(output_dir, init_checkpoint,
                                       allow_non_finite=allow_non_finite)
    except checkpoints.CheckpointNotFoundError as error:
        raise UserError(f"--init_checkpoint: {error}") from None
    if choice.source != "output_dir" or not init_checkpoint:
        return choice
    init_prefix = _canonical(checkpoints.resolve_checkpoint(init_checkpoint))
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
    """Shapes and layer count of `checkpoint` against `model`, nothing assigned.

    Shapes: `modeling.checkpoints.check_compatible`. Layers: the encoder
    layers (and any other `bert/` weight) of the checkpoint and of the model
    must be the same set, unless `allow_partial` (--allow_partial_checkpoint).
    A new task head (a weight outside `bert/` that the checkpoint lacks) and
    pre-training heads the model does not use are always fine.

    Raises:
        UserError: shapes differ, or the layers differ without allow_partial.
    """
    try:
        prefix, shapes = checkpoints.check_compatible(model, checkpoint)
    except checkpoints.CheckpointMismatchError as error:
        raise UserError(f"{bert_config_file} does not fit {checkpoint}: "
                        f"{shorten_mismatch(str(error))}") from None
    model_names = {name for name in checkpoints.model_weights_by_name(model)
                   if name.startswith("bert/")}
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
