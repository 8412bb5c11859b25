"""Evaluation during training: history, the best checkpoint, early stopping.

`EvaluateDuringTraining` (a Keras callback given to `run_training`) writes,
on the chief, `eval_history.jsonl`, TensorBoard scalars in `eval/` and
`best/`. Not Keras' `EarlyStopping`/`ModelCheckpoint`: the best weights must
be a TF1 checkpoint the loaders accept, and the stop must survive a rerun.
Files, kill and resume rules: docs/evaluation_during_training.md.
"""
import json
import math
import os

import numpy as np
import keras
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.results import write_key_value_file
from bert_tf1.modeling import checkpoints
from bert_tf1.modeling.training import summaries
from bert_tf1.modeling.training.checkpoint_state import (TRAINING_CHECKPOINT_PREFIX,
                                                         checkpoint_step,
                                                         latest_training_checkpoint,
                                                         list_as_newest,
                                                         remove_unlisted_checkpoints)
from bert_tf1.modeling.training.runtime import is_chief

HISTORY_FILE = "eval_history.jsonl"
BEST_SUBDIR = "best"
BEST_RESULTS_FILE = "eval_results.txt"
GLOBAL_STEP_KEY = "global_step"
EARLY_STOPPED_KEY = "early_stopped"
_RESERVED = (GLOBAL_STEP_KEY, EARLY_STOPPED_KEY)


class EvaluationHistoryError(UserError):
    """`eval_history.jsonl` holds a line that is not an evaluation record."""


def _history_path(output_dir):
    return os.path.join(os.fspath(output_dir), HISTORY_FILE)


def _best_dir(output_dir):
    return os.path.join(os.fspath(output_dir), BEST_SUBDIR)


def lower_is_better(metric):
    """True for `eval_loss` and every name ending in `loss`; others: higher."""
    return metric.endswith("loss")


def _read_history_lines(path):
    """(records, complete): `complete` is False when a kill cut the last line."""
    if not tf.io.gfile.exists(path):
        return [], True
    with tf.io.gfile.GFile(path, "rb") as reader:
        text = reader.read().decode("utf-8")
    lines = text.split("\n")
    records = []
    complete = True
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        last = number == len(lines)  # No newline after it: a cut write.
        if record is None and last:
            logging.warning("%s: ignoring its last line, cut short (the run "
                            "was killed while writing it).", path)
            complete = False
            continue
        if not isinstance(record, dict) or not isinstance(
                record.get(GLOBAL_STEP_KEY), int):
            raise EvaluationHistoryError(
                f"{path}, line {number}: expected a JSON object with an "
                f"integer \"global_step\", found {line.strip()[:80]!r}. Fix "
                "or delete the file.")
        records.append(record)
    return records, complete


def read_history(output_dir):
    """The evaluations recorded in `output_dir/eval_history.jsonl`.

    Args:
        output_dir: a training run's folder.

    Returns:
        list of dict, in the order written: `global_step` (int), the
        metrics (numbers; null for non-finite values) and, on the line of
        the evaluation that stopped training, `early_stopped: True`. Empty
        without a history file. A last line cut short by a kill is left out.

    Raises:
        EvaluationHistoryError: a line is not a JSON object with an integer
            `global_step` (names the file and line).
    """
    return _read_history_lines(_history_path(output_dir))[0]


def early_stop_step(output_dir):
    """The global step at which early stopping ended training, or None."""
    for record in read_history(output_dir):
        if record.get(EARLY_STOPPED_KEY):
            return record[GLOBAL_STEP_KEY]
    return None


def stopped_early(output_dir):
    """True when early stopping ended training in `output_dir` (then
    `run_training` trains no further there).

    Raises:
        EvaluationHistoryError: see `read_history`.
    """
    return early_stop_step(output_dir) is not None


def best_checkpoint(output_dir):
    """Prefix of `output_dir/best/model.ckpt-N`, the best evaluation's
    weights, or None when there is none.

    Raises:
        checkpoints.CheckpointStateError: `best/checkpoint` names a path
            outside `best/` or a checkpoint that is missing.
    """
    return latest_training_checkpoint(_best_dir(output_dir))


def _read_key_values(path):
    """`key = value` lines as numbers (ints stay ints); None if unreadable."""
    if not tf.io.gfile.exists(path):
        return None
    values = {}
    with tf.io.gfile.GFile(path, "r") as reader:
        for line in reader.read().splitlines():
            key, separator, value = line.partition(" = ")
            if not separator:
                return None
            try:
                values[key.strip()] = int(value)
            except ValueError:
                try:
                    values[key.strip()] = float(value)
                except ValueError:
                    values[key.strip()] = value.strip()
    return values


def _as_number(key, value):
    if isinstance(value, (tf.Tensor, tf.Variable)):
        value = value.numpy()
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (np.float16, np.float32)):
        # The shortest decimal that reads back as the same float32 (0.8, not
        # 0.800000011920929), as the original's eval_results.txt prints it.
        value = float(str(value))
    if isinstance(value, (float, np.floating)) or (
            isinstance(value, np.generic) and hasattr(value, "__float__")):
        value = float(value)
        return value if math.isfinite(value) else None
    raise TypeError(f"evaluate_fn returned {key} = {value!r}; expected a "
                    "number.")


def _check_positive_int(value, what):
    if isinstance(value, bool) or not isinstance(
            value, (int, np.integer)) or value < 1:
        raise UserError(f"{what} must be an integer >= 1, got {value!r}")


def _is_better(value, best, lower):
    if value is None:
        return False
    if best is None:
        return True
    return value < best if lower else value > best


class EvaluateDuringTraining(keras.callbacks.Callback):
    """Evaluates every `every_steps` global steps; keeps the best; may stop.

    When it evaluates (a multiple of `every_steps` of `optimizer.iterations`,
    the first step past one under `steps_per_execution` > 1, and the end of
    training), what it writes and how a rerun resumes:
    docs/evaluation_during_training.md.

    Args:
        evaluate_fn: callable with no arguments returning a dict name ->
            number (Python or NumPy scalars, 0-d tensors); on several
            workers each must get the same numbers.
        every_steps: int >= 1.
        output_dir: the training run's folder (the one `run_training` gets).
        keep_best_metric: a name `evaluate_fn` returns, or None; `*loss` is
            better lower, others higher. Each improvement replaces
            `output_dir/best/`.
        early_stopping_patience: int >= 1 or None: evaluations in a row
            without improvement after which training stops for good.
        model: the model evaluated and saved; default `self.model`.
        chief: whether this worker writes files; default
            `runtime.is_chief` of the model's distribution strategy.

    Attributes:
        best_value, best_step: the best `keep_best_metric` so far and its
            step (None before any).
        evaluations_without_improvement: int.

    Raises (from the training call):
        UserError: `every_steps` or `early_stopping_patience` is not a
            positive int, or patience without `keep_best_metric` (at
            construction); `keep_best_metric` is not among the names
            `evaluate_fn` returned (at the first evaluation, naming them).
        EvaluationHistoryError: an existing `eval_history.jsonl` is damaged.
        TypeError: `evaluate_fn` returned something other than a dict of
            numbers (a bug in it).
    """

    def __init__(self, evaluate_fn, every_steps, output_dir,
                 keep_best_metric=None, early_stopping_patience=None,
                 model=None, chief=None):
        super().__init__()
        _check_positive_int(every_steps, "evaluation every_steps")
        if early_stopping_patience is not None:
            _check_positive_int(early_stopping_patience,
                                "early_stopping_patience")
            if not keep_best_metric:
                raise UserError(
                    "early_stopping_patience needs keep_best_metric: the "
                    "metric whose improvement it waits for (e.g. eval_loss "
                    "or eval_accuracy)")
        self._evaluate_fn = evaluate_fn
        self._every = int(every_steps)
        self._output_dir = os.fspath(output_dir)
        self._metric = keep_best_metric or None
        self._patience = (int(early_stopping_patience)
                          if early_stopping_patience is not None else None)
        self._lower = lower_is_better(self._metric) if self._metric else None
        self._target_model = model
        self._chief_arg = chief
        self._chief = None
        self._last_step = None
        self._resumed = False
        self.best_value = None
        self.best_step = None
        self.evaluations_without_improvement = 0
        self.stopped_at = None

    def _trained(self):
        return self._target_model if self._target_model is not None else self.model

    def _step(self):
        return int(self._trained().optimizer.iterations.numpy())

    def on_train_begin(self, logs=None):
        # `run_training` may call fit more than once (float16 overflow):
        # the history is read back once, at the step training started from.
        if self._resumed:
            return
        self._resumed = True
        self._chief = (is_chief(self._trained().distribute_strategy)
                       if self._chief_arg is None else bool(self._chief_arg))
        self._last_step = self._step()
        self._resume(self._last_step)

    def on_train_batch_end(self, batch, logs=None):
        step = self._step()
        if self.stopped_at is not None:
            self._trained().stop_training = True
            return
        if step // self._every > self._last_step // self._every:
            self._evaluate(step)

    def on_train_end(self, logs=None):
        step = self._step()
        if step == self._last_step or self.stopped_at is not None:
            return
        if getattr(self._trained(), "stop_training", False):
            # Another callback stopped training (preemption): exit quickly.
            return
        self._evaluate(step)

    def _best_record(self):
        """`best/eval_results.txt` as a dict, or None; finishes a
        replacement that a kill interrupted."""
        folder = _best_dir(self._output_dir)
        prefix = best_checkpoint(self._output_dir)
        results = _read_key_values(os.path.join(folder, BEST_RESULTS_FILE))
        if results is None or not isinstance(results.get(GLOBAL_STEP_KEY), int):
            return None
        step = results[GLOBAL_STEP_KEY]
        if prefix is None or checkpoint_step(prefix) != step:
            # eval_results.txt is written before the state file: a kill in
            # between leaves the new, complete checkpoint unlisted.
            name = f"{TRAINING_CHECKPOINT_PREFIX}-{step}"
            if not tf.io.gfile.exists(os.path.join(folder, name + ".index")):
                logging.warning("%s/%s names step %d, whose checkpoint is not "
                                "in %s; ignoring it.", folder,
                                BEST_RESULTS_FILE, step, folder)
                return None
            if self._chief:
                self._commit_best(folder, name)
        return results

    def _resume(self, start):
        path = _history_path(self._output_dir)
        records, complete = _read_history_lines(path)
        kept = [r for r in records if r[GLOBAL_STEP_KEY] <= start]
        dropped = [r[GLOBAL_STEP_KEY] for r in records
                   if r[GLOBAL_STEP_KEY] > start]
        best = self._best_record() if self._metric else None
        restored = False
        if best is not None and best[GLOBAL_STEP_KEY] <= start and not any(
                r[GLOBAL_STEP_KEY] == best[GLOBAL_STEP_KEY] for r in kept):
            # best/ was written, the history line was not (a kill between).
            kept.append(dict(best))
            kept.sort(key=lambda r: r[GLOBAL_STEP_KEY])
            restored = True
        if self._chief and (dropped or restored or not complete):
            write_text_atomically(path, "".join(
                json.dumps(r, allow_nan=False) + "\n" for r in kept))
            if dropped:
                logging.info(
                    "Resuming at step %d: removed %d evaluation(s) of later "
                    "steps (%s) from %s; those weights were not kept.", start,
                    len(dropped), ", ".join(map(str, dropped)), path)
        if self._chief:
            summaries.purge_events(
                os.path.join(self._output_dir, summaries.EVAL_SUBDIR),
                start + 1)
        for record in kept:
            if self._metric and self._metric in record:
                self._update_best(self._candidate(record),
                                  record[GLOBAL_STEP_KEY])
            if record.get(EARLY_STOPPED_KEY):
                self.stopped_at = record[GLOBAL_STEP_KEY]
        if best is not None and best[GLOBAL_STEP_KEY] > start and _is_better(
                best.get(self._metric), self.best_value, self._lower):
            # best/ holds weights of a step after the resumed checkpoint
            # (their history line was removed): still the value to beat.
            self.best_value = best.get(self._metric)
            self.best_step = best[GLOBAL_STEP_KEY]
        if kept:
            logging.info(
                "Evaluation history of %s: %d evaluation(s) up to step %d%s.",
                self._output_dir, len(kept), kept[-1][GLOBAL_STEP_KEY],
                "" if self.best_value is None else
                f"; best {self._metric} = {self.best_value} at step "
                f"{self.best_step}, {self.evaluations_without_improvement} "
                "evaluation(s) since without improvement")

    def _candidate(self, metrics):
        """`keep_best_metric`'s value; None when any number is NaN/Inf."""
        values = [v for k, v in metrics.items() if k not in _RESERVED]
        if any(v is None for v in values):
            return None
        return metrics.get(self._metric)

    def _update_best(self, value, step):
        """Counts one evaluation; True when it improves the best."""
        if _is_better(value, self.best_value, self._lower):
            self.best_value = value
            self.best_step = step
            self.evaluations_without_improvement = 0
            return True
        self.evaluations_without_improvement += 1
        return False

    def _evaluate(self, step):
        self._last_step = step
        raw = self._evaluate_fn()
        if not isinstance(raw, dict):
            raise TypeError(f"evaluate_fn returned {type(raw).__name__}; "
                            "expected a dict name -> number.")
        metrics = {str(key): _as_number(key, value)
                   for key, value in sorted(raw.items())
                   if key not in _RESERVED}
        if self._metric and self._metric not in metrics:
            raise UserError(
                f"keep_best_metric {self._metric!r} is not among the "
                f"evaluation's numbers: {', '.join(sorted(metrics)) or 'none'}")
        record = {GLOBAL_STEP_KEY: step, **metrics}
        improved = False
        if self._metric:
            improved = self._update_best(self._candidate(metrics), step)
            if (self._patience is not None and not improved and
                    self.evaluations_without_improvement >= self._patience):
                self.stopped_at = step
                record[EARLY_STOPPED_KEY] = True
        logging.info("Evaluation at step %d: %s%s", step, ", ".join(
            f"{key} = {value}" for key, value in metrics.items()),
            "" if not self._metric else
            f" (best {self._metric} = {self.best_value} at step "
            f"{self.best_step})")
        if self._chief:
            if improved:
                self._save_best(step, metrics)
            self._append(record)
            summaries.write_eval_summaries(
                self._output_dir, {k: v for k, v in metrics.items()
                                   if v is not None}, step)
        if self.stopped_at is not None:
            logging.info(
                "Early stopping at step %d: %s has not improved on %s (step "
                "%d) for %d evaluation(s); the best weights are in %s.", step,
                self._metric, self.best_value, self.best_step,
                self.evaluations_without_improvement,
                _best_dir(self._output_dir))
            self._trained().stop_training = True

    def _append(self, record):
        path = _history_path(self._output_dir)
        line = json.dumps(record, allow_nan=False) + "\n"
        if "://" in path:
            # Object stores cannot append: rewrite the whole file atomically.
            old = ""
            if tf.io.gfile.exists(path):
                with tf.io.gfile.GFile(path, "r") as reader:
                    old = reader.read()
            write_text_atomically(path, old + line)
            return
        os.makedirs(self._output_dir, exist_ok=True)
        # One write of a whole line, then fsync: a kill leaves complete lines
        # (a cut last line is ignored and dropped on resume).
        with open(path, "a", encoding="utf-8") as writer:
            writer.write(line)
            writer.flush()
            os.fsync(writer.fileno())

    def _save_best(self, step, metrics):
        folder = _best_dir(self._output_dir)
        name = f"{TRAINING_CHECKPOINT_PREFIX}-{step}"
        # Order: checkpoint, its eval_results.txt, then the state file (the
        # commit); older checkpoints are removed last. `_best_record` finishes
        # a replacement a kill cut after eval_results.txt.
        checkpoints.save_tf1_checkpoint(self._trained(),
                                        os.path.join(folder, name),
                                        global_step=step, overwrite=True)
        write_key_value_file(os.path.join(folder, BEST_RESULTS_FILE),
                             {GLOBAL_STEP_KEY: step, **metrics})
        self._commit_best(folder, name)
        logging.info("New best %s = %s at step %d: saved %s.", self._metric,
                     metrics[self._metric], step, os.path.join(folder, name))

    @staticmethod
    def _commit_best(folder, name):
        list_as_newest(folder, name, keep_checkpoint_max=1)
        remove_unlisted_checkpoints(folder)
