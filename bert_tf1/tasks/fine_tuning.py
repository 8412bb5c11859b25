"""`FineTuningTask`: the one train / evaluate / predict of every fine-tuning
task, whose hooks the task modules fill (classification, squad, tagging,
multiple_choice); evaluation during training: `bert_tf1.tasks.eval_during_training`.
"""
import os
import random

import numpy as np
import tensorflow as tf
from absl import logging
from keras import ops

from bert_tf1.data.io import dynamic_padding
from bert_tf1.data.io.record_scan import naming_record_errors
from bert_tf1.data.io.results import (check_finite_rows, check_finite_values,
                                      format_test_results,
                                      write_key_value_file, write_text_atomically)
from bert_tf1.data.tokenization import full_tokenizer
from bert_tf1.modeling import training
from bert_tf1.modeling.training import evaluation
from bert_tf1.modeling.training import runtime as runtime_lib
from bert_tf1.modeling.training.loop import PaddedOutputs
from bert_tf1.tasks import checks, eval_during_training, model_folder, modes
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.modes import MODES, requested
from bert_tf1.tasks.task import Task

#: run_squad.py's seed for its one shuffle of the training examples before
#: they are written (tf.data's buffer of 100 sees one stretch of a file).
SHUFFLE_SEED = 12345


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
    #: The `bert_tf1.serving` model type --export_dir writes the model as.
    export_model_type = None

    def __init__(self, config, create_model=None):
        super().__init__(config, create_model)
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

    def export_arguments(self):
        """`bert_tf1.serving.export_model`'s arguments besides the model,
        its type and preprocessor (labels, window settings) for
        --export_dir."""
        return {}

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
        model_folder.check_model_files(config, self.trains(),
                                        self.precision)
        if getattr(config, "export_dir", None) or getattr(
                config, "export_format", None):
            from bert_tf1.tasks import export_after_training

            export_after_training.check_export_flags(config)
        if self.trains() and hasattr(config, "eval_steps"):
            eval_during_training.check_flags(self)

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
                    model, dataset.map(tf.autograph.experimental.do_not_convert(
                        lambda *element: element[0]))
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
            model_folder.write_model_files(config, self.precision)
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
                    callbacks=eval_during_training.callbacks(
                        self, len(examples)))
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

    def after_modes(self, results):
        """With --export_dir: the model as it is now, exported
        (`bert_tf1.tasks.export_after_training`); results["export"] is the
        folder."""
        if getattr(self.config, "export_dir", None):
            from bert_tf1.tasks import export_after_training

            results["export"] = export_after_training.export_trained_model(
                self)

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
