"""What every task shares: config, checks, strategy, model, checkpoint, training.

A task (Model Garden's `Task` shape) is built from a dataclass config and
runs every check in `prepare()` before it writes anything; `FineTuningTask`
holds the one train / evaluate / predict whose hooks the task modules fill.
"""
import dataclasses
import functools
import math
import os
import random

import numpy as np
import tensorflow as tf
from absl import logging
from keras import ops

from bert_tf1.data.io import dynamic_padding, output_lock
from bert_tf1.data.io.record_scan import naming_record_errors
from bert_tf1.data.io.results import (check_finite_rows, check_finite_values,
                                      format_test_results,
                                      write_key_value_file, write_text_atomically)
from bert_tf1.data.tokenization import full_tokenizer
from bert_tf1.modeling import BertConfig, optimization, training
from bert_tf1.modeling.training import evaluation
from bert_tf1.modeling.training import runtime as runtime_lib
from bert_tf1.modeling.training.loop import PaddedOutputs
from bert_tf1.modeling.layers import lora
from bert_tf1.tasks import checks, model_folder, modes
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.modes import MODES, requested

#: run_squad.py's seed for its one shuffle of the training examples before
#: they are written (tf.data's buffer of 100 sees one stretch of a file).
SHUFFLE_SEED = 12345


@dataclasses.dataclass(kw_only=True)
class TaskConfig:
    """Fields every task has: the original's flags, the --allow_* flags
    (`bert_tf1.tasks.cli.define_common_flags`), `dynamic_padding` (cut each batch to
    its longest example, `bert_tf1.data.io.dynamic_padding`; not under a TPU strategy
    or `use_xla`) and `runtime` (`bert_tf1.modeling.training.runtime.RuntimeOptions`).
    """
    bert_config_file: str = None  # or a `bert_tf1.modeling.BertConfig`
    output_dir: str = None
    init_checkpoint: str = None
    max_seq_length: int = 128
    allow_partial_checkpoint: bool = False
    allow_non_finite_checkpoint: bool = False
    allow_random_weights: bool = False
    dynamic_padding: bool = True
    runtime: runtime_lib.RuntimeOptions = dataclasses.field(
        default_factory=runtime_lib.RuntimeOptions)


@dataclasses.dataclass(kw_only=True)
class FineTuningConfig(TaskConfig):
    """The flags run_classifier.py and run_squad.py share (same defaults),
    and the LoRA flags (`check_lora_flags`, docs/lora.md)."""
    vocab_file: str = None
    do_lower_case: bool = True
    do_train: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    lora_rank: int = 0
    lora_alpha: float = None
    lora_targets: str = ",".join(lora.DEFAULT_TARGETS)


@dataclasses.dataclass(kw_only=True)
class EvaluatingConfig(FineTuningConfig):
    """Fine-tuning with an eval mode (run_classifier.py, run_ner.py,
    run_multiple_choice.py): do_eval, eval_batch_size, and the flags of
    `bert_tf1.tasks.script_flags.define_padding_flags` and `define_evaluation_flags`.
    """
    do_eval: bool = False
    eval_batch_size: int = 8
    group_by_length: bool = False
    eval_every_epoch: bool = False
    eval_steps: int = 0
    keep_best_checkpoint: str = None
    early_stopping_patience: int = 0


def check_lora_flags(config):
    """Checks a task config's LoRA fields (no-op without them).

    Raises:
        UserError: one line naming the flag: a bad rank, alpha or target,
            --lora_alpha/--lora_targets without --lora_rank, or
            --feature_layers (the feature-based tagger's encoder is frozen:
            there is nothing to adapt).
    """
    rank = getattr(config, "lora_rank", 0) or 0
    if not isinstance(rank, int) or rank < 0:
        raise UserError(f"--lora_rank={rank}: expected 0 (off) or an "
                        "integer >= 1")
    if not rank:
        if getattr(config, "lora_alpha", None) is not None:
            raise UserError("--lora_alpha needs --lora_rank >= 1")
        return
    if getattr(config, "feature_layers", None):
        raise UserError(
            f"--lora_rank={rank} with --feature_layers: the feature-based "
            "tagger keeps its encoder frozen, so there is nothing to adapt; "
            "drop one of them")
    try:
        lora.check_lora_arguments(rank, config.lora_alpha,
                                  config.lora_targets)
    except ValueError as error:
        flag = "--lora_alpha" if "alpha" in str(error) else "--lora_targets"
        value = config.lora_alpha if flag == "--lora_alpha" else (
            config.lora_targets)
        raise UserError(f"{flag}={value}: {error}") from None


class Task:
    """The common skeleton: subclasses implement `build_model()`,
    `check_inputs()`, the mode methods, and name their modes in `modes`."""

    modes = ()

    def __init__(self, config):
        self.config = config
        if isinstance(config.bert_config_file, BertConfig):
            config.bert_config_file.validate()
            self.bert_config = config.bert_config_file
        else:
            if not config.bert_config_file:
                raise UserError("--bert_config_file is required")
            checks.check_data_file(config.bert_config_file,
                                   "--bert_config_file")
            self.bert_config = BertConfig.from_json_file(
                config.bert_config_file)
        self.global_step = None
        self._prepared = False
        self._weights_ready = False
        self._output_lock = None

    @functools.cached_property
    def strategy(self):
        """The `tf.distribute.Strategy` (precision policy applied first)."""
        return runtime_lib.setup(self.config.runtime)

    @property
    def is_chief(self):
        return runtime_lib.is_chief(self.strategy)

    @functools.cached_property
    def model(self):
        """The task model, built once under the strategy's scope (LoRA
        adapters enabled with `lora_rank`)."""
        config = self.config
        with self.strategy.scope():
            model = self.build_model()
            if getattr(config, "lora_rank", 0):
                model.enable_lora(config.lora_rank, config.lora_alpha,
                                  config.lora_targets)
        return model

    def build_model(self):
        raise NotImplementedError

    def check_inputs(self):
        """Task-specific checks (data files for each requested mode)."""

    def load_tokenizer(self, do_lower_case=None):
        """`FullTokenizer` of `config.vocab_file`, its ids checked against
        the config's `vocab_size`; `do_lower_case` defaults to the config's."""
        config = self.config
        if do_lower_case is None:
            do_lower_case = config.do_lower_case
        checks.check_data_file(config.vocab_file, "--vocab_file")
        return full_tokenizer.tokenizer_for_model(
            config.vocab_file, do_lower_case, self.bert_config.vocab_size,
            config.bert_config_file)

    def prepare(self):
        """Runs every check once, before any file is written; then takes the
        output_dir lock (`bert_tf1/data/io/output_lock.py`) until `close()`.

        Raises:
            UserError: from any of these checks.
        """
        if self._prepared:
            return
        config = self.config
        # First: a multi-worker strategy must come before other TF work.
        self.strategy  # noqa: B018 (property: sets up the strategy once)
        self.bert_config.check_sequence_length(
            config.max_seq_length, "--max_seq_length", config.bert_config_file,
            minimum=3)
        self.check_inputs()
        check_lora_flags(config)
        if config.output_dir is not None:
            checks.check_output_dir_writable(config.output_dir)
            checks.check_output_dir_free(config.output_dir)
        self.checkpoint = checks.choose_checkpoint(
            config.output_dir, config.init_checkpoint,
            allow_non_finite=config.allow_non_finite_checkpoint)
        if self.checkpoint.path:
            checks.check_checkpoint_fits(
                self.model, self.checkpoint.path, config.bert_config_file,
                allow_partial=config.allow_partial_checkpoint)
            checks.check_checkpoint_finite(
                self.model, self.checkpoint.path,
                config.allow_non_finite_checkpoint)
        elif not self.trains():
            checks.check_random_weights_allowed(config)
        logging.info("Checkpoint: %s.", self.checkpoint.describe())
        if config.output_dir is not None and self.is_chief:
            # The chief takes the lock; the other workers checked it above.
            self._output_lock = output_lock.OutputLock(
                config.output_dir,
                cluster=output_lock.cluster_fingerprint()).acquire()
        self._prepared = True

    def trains(self):
        return bool(getattr(self.config, "do_train", False))

    def close(self):
        """Releases the output_dir lock (`run()` does this when it ends)."""
        if self._output_lock is not None:
            self._output_lock.release()
            self._output_lock = None

    def dynamic_padding(self, mode="predict"):
        """True when `mode`'s batches are cut to their longest example."""
        config = self.config
        if mode == "train" and not getattr(self, "cut_training_batches",
                                           True):
            return False
        return bool(config.dynamic_padding) and not (
            config.runtime.use_xla
            or runtime_lib.is_tpu_strategy(self.strategy))

    def make_output_dir(self):
        tf.io.gfile.makedirs(self.config.output_dir)

    def worker_folder(self):
        """Context manager: output_dir on the chief; on other workers a
        temporary folder removed when the block ends
        (`runtime.worker_output_dir`)."""
        self.make_output_dir()
        return runtime_lib.worker_output_dir(self.strategy,
                                             self.config.output_dir)

    def train_model(self, dataset, num_train_steps, batch_size, learning_rate,
                    num_warmup_steps, optimizer_model=None, callbacks=()):
        """Trains `self.model` from `self.checkpoint` on `dataset` (repeating
        `(features, labels)` batches of `batch_size`) with
        `bert_tf1.modeling.training.run_training` and
        `bert_tf1.modeling.optimization.create_optimizer`; returns {loss, global_step}.
        """
        config = self.config
        self.prepare()
        self.make_output_dir()
        if self.checkpoint.source != "output_dir" and self.is_chief:
            checks.record_init_checkpoint(config.output_dir,
                                          config.init_checkpoint)
        with self.strategy.scope():
            optimizer = optimization.create_optimizer(
                learning_rate, num_train_steps, num_warmup_steps,
                optimizer_type=config.runtime.optimizer, model=optimizer_model,
                gradient_accumulation_steps=(
                    config.runtime.gradient_accumulation_steps))
        result = training.run_training(
            self.model, optimizer, dataset, num_train_steps, config.output_dir,
            config.runtime, batch_size, strategy=self.strategy,
            start_from=self.checkpoint, callbacks=list(callbacks))
        self.global_step = result["global_step"]
        self._weights_ready = True
        # Named, not read back: another worker may not see the state file yet.
        self.checkpoint = training.CheckpointChoice(
            os.path.join(config.output_dir, "%s-%d" % (
                training.TRAINING_CHECKPOINT_PREFIX, self.global_step)),
            "output_dir",
            allow_non_finite=config.allow_non_finite_checkpoint)
        return result

    def log_results(self, result):
        logging.info("***** Eval results *****")
        for key in sorted(result):
            logging.info("  %s = %s", key, result[key])

    def report_evaluation(self, results):
        """Chief only: `results` (name -> number) to TensorBoard
        (`output_dir/eval/`, at `self.global_step`), then
        `training_curves.png` redrawn."""
        if not self.is_chief:
            return
        training.write_eval_summaries(self.config.output_dir, results,
                                      self.global_step)
        training.write_training_curves(self.config.output_dir)

    def restore_weights(self):
        """Loads `self.checkpoint` for inference, once; sets global_step."""
        if self._weights_ready:
            return self.global_step
        self.prepare()
        self.global_step = training.restore_for_inference(
            self.model, self.checkpoint,
            allow_random_weights=self.config.allow_random_weights)
        self._weights_ready = True
        return self.global_step

    def run(self):
        """Checks everything, runs the requested modes in order; returns
        dict mode name -> what the mode's method returned."""
        self.prepare()
        try:
            return {mode.name: getattr(self, mode.method)()
                    for mode in requested(self.config, self.modes)}
        finally:
            self.close()


class FineTuningTask(Task):
    """One train / evaluate / predict for every fine-tuning task; a subclass
    declares `build_model()`, `read_examples(mode)` (checked, UserError
    naming file and line), `write_features(examples, path, mode)` -> number
    of records, `read_dataset(path, mode, batch_size)` (fixed layout:
    training `(features, labels[, weights])`; inference `(features, labels,
    weights)` or `features`, every record once in order),
    `compute_results(outputs, labels, weights, num_actual)` -> the
    eval_results.txt dict, `write_outputs(outputs, num_actual)` -> what
    `predict()` returns; optionally the hooks with a default and the class
    attributes below.
    """

    modes = ("train", "eval", "predict")
    #: The features file of each mode (in output_dir on the chief).
    record_files = {"train": "train.tf_record", "eval": "eval.tf_record",
                    "predict": "predict.tf_record"}
    #: What the records are, for read errors.
    records_name = "records"
    #: Outputs per position, padded back after cut batches (no labels read).
    token_outputs = False
    #: The value of those padded positions.
    token_output_padding = 0.0
    #: Seed of one shuffle of the training examples before writing, or None.
    train_shuffle_seed = None
    #: Cut training batches (False: the loss reads padded positions).
    cut_training_batches = True
    #: Evaluation numbers to TensorBoard and training_curves.png.
    eval_summaries = False

    def __init__(self, config):
        super().__init__(config)
        self.examples = {}
        self.num_records = {}
        self._written = {}

    # -- hooks with a default ---------------------------------------------------

    def check_task(self):
        """The task's own flag checks (before the tokenizer and data)."""

    def data_file(self, mode):
        """The data file of `mode` (for messages)."""
        return getattr(self.config, mode + "_file")

    def padding_example(self):
        """An example of weight 0 (TPU padding), or None for no padding."""
        return dynamic_padding.PaddingInputExample()

    def before_training(self):
        """Runs after prepare(), before the training features are written."""

    def write_eval_outputs(self, outputs, labels, num_actual):
        """Files beside eval_results.txt (chief only)."""

    def read_examples(self, mode):
        raise NotImplementedError

    def metric_names(self):
        """The names `compute_results` returns (global_step aside), known
        before any evaluation; None: not known in advance."""
        return None

    def examples_of(self, mode):
        """`read_examples(mode)`, read once (cached by the mode's split)."""
        split = MODES[mode].split
        if split not in self.examples:
            self.examples[split] = self.read_examples(mode)
        return self.examples[split]

    def num_train_steps(self):
        """The original's int(examples / train_batch_size * epochs)."""
        config = self.config
        return int(len(self.examples_of("train")) / config.train_batch_size
                   * config.num_train_epochs)

    def classification_results(self, per_example, logits, labels, weights):
        """eval_loss (weighted mean of `per_example` [N]), global_step, loss
        (the Estimator's: the mean over eval batches of each batch's mean,
        TPU padding included, as the original's file) and, given `logits`
        [N, k], eval_accuracy (weighted share of argmax == `labels` [N])."""
        total = weights.sum()
        size = self.config.eval_batch_size
        result = {
            "eval_loss": float((per_example * weights).sum() / total),
            "global_step": self.global_step,
            "loss": float(np.mean([per_example[i:i + size].mean() for i in
                                   range(0, len(per_example), size)])),
        }
        if logits is not None:
            result["eval_accuracy"] = float(
                ((logits.argmax(-1) == labels) * weights).sum() / total)
        return result

    def write_test_results(self, rows, softmax=True):
        """test_results.tsv (`bert_tf1.data.io.results.format_test_results`) of the
        real examples' `rows` [num_actual, k], softmaxed unless `softmax` is
        False; chief only. Returns the values, float32 [num_actual, k].

        Raises:
            NonFiniteResultError: a value is NaN/Inf (on every worker).
        """
        if softmax:
            rows = np.asarray(ops.softmax(rows, axis=-1), np.float32)
        path = os.path.join(self.config.output_dir, "test_results.tsv")
        check_finite_rows(path, rows, what="test example")
        if self.is_chief:
            write_text_atomically(path, format_test_results(rows))
            logging.info("Wrote %d predictions to %s", len(rows), path)
        return rows

    # -- checks -----------------------------------------------------------------

    def check_inputs(self):
        config = self.config
        full_tokenizer.validate_case_matches_checkpoint(config.do_lower_case,
                                                        config.init_checkpoint)
        modes.check_some_requested(config, self.modes)
        self.check_task()
        checks.check_positive(**{f"{name}_batch_size": getattr(
            config, f"{name}_batch_size") for name in self.modes})
        self.tokenizer = self.load_tokenizer()
        for mode in requested(config, self.modes):
            self.examples_of(mode.name)
        if config.do_train:
            checks.check_train_steps(self.num_train_steps(),
                                     len(self.examples_of("train")),
                                     self.data_file("train"), config)
            checks.check_schedule(config.learning_rate,
                                  config.warmup_proportion)
        if getattr(config, "group_by_length", False) and not (
                self.dynamic_padding("train")):
            raise UserError(
                "--group_by_length needs cut batches: --dynamic_padding=true,"
                " no TPU strategy and no --use_xla")
        model_folder.check_model_files(config, self.trains())
        if self.trains() and hasattr(config, "eval_steps"):
            self.check_evaluation_flags()

    def check_evaluation_flags(self):
        """Evaluation during training needs eval data; best and patience
        need evaluations."""
        config = self.config
        if config.eval_steps and config.eval_steps < 0:
            raise UserError(f"--eval_steps={config.eval_steps}: expected a "
                            "number of steps > 0 (or 0: no evaluation)")
        if not self.evaluates_during_training():
            if config.keep_best_checkpoint or config.early_stopping_patience:
                raise UserError("--keep_best_checkpoint and "
                                "--early_stopping_patience need "
                                "--eval_every_epoch or --eval_steps")
            return
        self.examples_of("eval")
        if config.early_stopping_patience and not config.keep_best_checkpoint:
            raise UserError("--early_stopping_patience needs "
                            "--keep_best_checkpoint=<metric> to compare")
        if config.keep_best_checkpoint:
            checks.check_metric_name(config.keep_best_checkpoint,
                                     self.metric_names())

    # -- data -------------------------------------------------------------------

    def make_dataset(self, mode, examples, folder, batch_size):
        """(batches, path): `examples`' features written into `folder` (once)
        and read back, cut or grouped by length."""
        path = os.path.join(folder, self.record_files[mode])
        if self._written.get(mode) != path or not tf.io.gfile.exists(path):
            self.num_records[mode] = self.write_features(examples, path, mode)
            self._written[mode] = path
        dataset = self.read_dataset(path, mode, batch_size)
        if not self.dynamic_padding(mode):
            return dataset, path
        seq_length = self.config.max_seq_length
        if mode == "train" and getattr(self.config, "group_by_length", False):
            megabatch = max(1, min(dynamic_padding.MEGABATCH,
                                   len(examples) // batch_size))
            return dynamic_padding.group_by_length(
                dataset, batch_size, seq_length,
                seed=self.config.runtime.seed, megabatch=megabatch), path
        return dataset.map(dynamic_padding.cut_to_longest(seq_length),
                           num_parallel_calls=tf.data.AUTOTUNE), path

    def inference_examples(self, mode, batch_size):
        """The mode's examples, padded to full batches on TPU; and the
        number of real ones (they come first)."""
        examples = list(self.examples_of(mode))
        num_actual = len(examples)
        padding = self.padding_example()
        if padding is not None and runtime_lib.is_tpu_strategy(self.strategy):
            while len(examples) % batch_size:
                examples.append(padding)
        return examples, num_actual

    def predict_logits(self, mode, batch_size):
        """(outputs, label_ids, weights, num_actual) of every example of
        `mode`: one row per record (per-token outputs padded back to
        max_seq_length), TPU padding after the num_actual real examples;
        label_ids, weights None for `token_outputs` or an unlabelled
        dataset; outputs None when there is no record.

        Raises:
            RuntimeError: the model returned another number of rows than
                the file holds.
        """
        examples, num_actual = self.inference_examples(mode, batch_size)
        with self.worker_folder() as folder:
            dataset, path = self.make_dataset(mode, examples, folder,
                                              batch_size)
            num_records = self.num_records[mode]
            logging.info("***** Running %s *****",
                         "evaluation" if mode == "eval" else "prediction")
            logging.info("  Num examples = %d (%d actual, %d padding)",
                         len(examples), num_actual, len(examples) - num_actual)
            if num_records != len(examples):
                logging.info("  Num split examples = %d", num_records)
            logging.info("  Batch size = %d", batch_size)
            if not num_records:
                return None, None, None, num_actual
            with naming_record_errors([path], self.records_name):
                labelled = isinstance(dataset.element_spec, tuple)
                model = self.model
                if self.token_outputs and self.dynamic_padding(mode):
                    with self.strategy.scope():  # Back to max_seq_length.
                        model = PaddedOutputs(model, self.config.max_seq_length,
                                              self.token_output_padding)
                outputs = training.predict(
                    model, dataset.map(lambda *element: element[0])
                    if labelled else dataset,
                    self.strategy)
                labels = weights = None
                if labelled and not self.token_outputs:
                    rows = [(y, w) for _, y, w in dataset.as_numpy_iterator()]
                    labels = np.concatenate([y for y, _ in rows])
                    weights = np.concatenate([w for _, w in rows])
        count = len(tf.nest.flatten(outputs)[0])
        if count != num_records:
            raise RuntimeError(f"Got {count} predictions for {num_records} "
                               "examples.")
        if not isinstance(outputs, dict):
            outputs = np.asarray(outputs, np.float32)
        return outputs, labels, weights, num_actual

    # -- the three modes --------------------------------------------------------

    def train(self):
        """Featurizes the training data and fine-tunes (`Task.train_model`)."""
        self.prepare()
        config = self.config
        examples = list(self.examples_of("train"))
        if self.train_shuffle_seed is not None:
            random.Random(self.train_shuffle_seed).shuffle(examples)
        num_train_steps = self.num_train_steps()
        self.make_output_dir()
        if self.is_chief:
            model_folder.write_model_files(config)
        self.before_training()
        with self.worker_folder() as folder:
            dataset, path = self.make_dataset("train", examples, folder,
                                              config.train_batch_size)
            logging.info("***** Running training *****")
            logging.info("  Num examples = %d", len(examples))
            if self.num_records["train"] != len(examples):
                logging.info("  Num split examples = %d",
                             self.num_records["train"])
            logging.info("  Batch size = %d", config.train_batch_size)
            logging.info("  Num steps = %d", num_train_steps)
            with naming_record_errors([path], self.records_name):
                result = self.train_model(
                    dataset, num_train_steps, config.train_batch_size,
                    config.learning_rate,
                    int(num_train_steps * config.warmup_proportion),
                    callbacks=self.training_callbacks(len(examples)))
        self.use_best_checkpoint()
        return result

    def evaluate(self, write=True):
        """`compute_results` over every eval example, written (unless not
        `write`: evaluation during training) to eval_results.txt.

        Raises:
            NonFiniteResultError: a value is NaN/Inf (on every worker).
        """
        config = self.config
        if write:
            self.prepare()
            self.restore_weights()
        outputs, labels, weights, num_actual = self.predict_logits(
            "eval", config.eval_batch_size)
        result = self.compute_results(outputs, labels, weights, num_actual)
        if not write:
            return result
        path = os.path.join(config.output_dir, "eval_results.txt")
        check_finite_values(path, result)
        self.log_results(result)
        if self.is_chief:
            self.write_eval_outputs(outputs, labels, num_actual)
            write_key_value_file(path, result)
            if self.eval_summaries:
                self.report_evaluation(result)
        return result

    def predict(self):
        """Predictions for every example of the predict data, written as
        the task's files (`write_outputs`, chief only)."""
        self.prepare()
        self.restore_weights()
        outputs, _, _, num_actual = self.predict_logits(
            "predict", self.config.predict_batch_size)
        return self.write_outputs(outputs, num_actual)

    # -- evaluation during training ---------------------------------------------

    def evaluates_during_training(self):
        config = self.config
        return bool(getattr(config, "eval_every_epoch", False)
                    or getattr(config, "eval_steps", 0))

    def training_callbacks(self, num_examples):
        """The evaluation-during-training callback, when asked for: every
        eval_steps steps, else every ceil(examples / train_batch_size)."""
        config = self.config
        if not self.evaluates_during_training():
            return []

        def evaluate_fn():
            self.global_step = int(self.model.optimizer.iterations.numpy())
            return self.evaluate(write=False)

        every = int(config.eval_steps) if config.eval_steps else math.ceil(
            num_examples / config.train_batch_size)
        return [evaluation.EvaluateDuringTraining(
            evaluate_fn, every, config.output_dir,
            keep_best_metric=config.keep_best_checkpoint or None,
            early_stopping_patience=config.early_stopping_patience or None,
            model=self.model)]

    def use_best_checkpoint(self):
        """After training with keep_best_checkpoint: this run's evaluation
        and prediction use output_dir/best/ (its weights are loaded)."""
        config = self.config
        if not getattr(config, "keep_best_checkpoint", None):
            return
        best = evaluation.best_checkpoint(config.output_dir)
        if best is None:
            return
        self.checkpoint = training.CheckpointChoice(
            best, "output_dir",
            allow_non_finite=config.allow_non_finite_checkpoint)
        self._weights_ready = False
        self.restore_weights()
