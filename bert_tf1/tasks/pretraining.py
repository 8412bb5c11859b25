"""Masked-LM + next-sentence pre-training: the original run_pretraining.py.

Files in output_dir, as the original: model.ckpt-N and (evaluation)
eval_results.txt.
"""
import dataclasses
import os

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.record_scan import naming_record_errors, scan_record_files
from bert_tf1.data.io.record_specs import pretraining_record_spec
from bert_tf1.data.io.results import write_key_value_file
from bert_tf1.data.pretraining.dataset import (pretraining_dataset,
                                               split_inputs_and_labels)
from bert_tf1.modeling import BertPretrainer
from bert_tf1.modeling.models.losses import per_example_log_prob_loss
from bert_tf1.modeling.training import runtime
from bert_tf1.tasks import checks, modes
from bert_tf1.tasks.configs import TaskConfig
from bert_tf1.tasks.task import Task
from bert_tf1.tasks.errors import UserError


@dataclasses.dataclass(kw_only=True)
class PretrainingConfig(TaskConfig):
    """The original run_pretraining.py flags plus this project's additions
    (`dynamic_masking`, `masked_lm_prob`, `vocab_file`). The optimizer is
    `runtime.optimizer` (--optimizer, or its alias --optimizer_type)."""
    input_file: str = None
    max_predictions_per_seq: int = 20
    do_train: bool = False
    do_eval: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_steps: int = 100000
    num_warmup_steps: int = 10000
    max_eval_steps: int = 100
    dynamic_masking: bool = False
    masked_lm_prob: float = 0.15
    vocab_file: str = None


def _per_example_loss(log_probs, labels):
    return np.asarray(per_example_log_prob_loss(log_probs, labels), np.float64)


class PretrainingMetrics:
    """Accumulates the original's pre-training evaluation metrics (`update`
    per batch, then `result()`): masked_lm_accuracy and masked_lm_loss
    weighted by masked_lm_weights, next_sentence_accuracy and
    next_sentence_loss, and loss (the mean of each batch's training loss),
    in float64.

    Source: run_pretraining.py, model_fn (metric_fn) and the Estimator's loss.
    """

    def __init__(self):
        self._mlm_correct = 0.0
        self._mlm_loss = 0.0
        self._mlm_weight = 0.0
        self._nsp_correct = 0.0
        self._nsp_loss = 0.0
        self._nsp_count = 0
        self._batch_losses = []

    def update(self, masked_lm_log_probs, masked_lm_ids, masked_lm_weights,
               next_sentence_log_probs, next_sentence_labels):
        """Adds one batch: log-probs float [B, P, V] (or [B * P, V]), ids
        int and weights float [B, P]; next-sentence log-probs float [B, 2]
        and labels int [B] (or [B, 1])."""
        log_probs = np.asarray(masked_lm_log_probs, np.float64)
        log_probs = log_probs.reshape(-1, log_probs.shape[-1])
        ids = np.asarray(masked_lm_ids).reshape(-1)
        weights = np.asarray(masked_lm_weights, np.float64).reshape(-1)
        mlm_example_loss = _per_example_loss(log_probs, ids)
        self._mlm_correct += float(
            (weights * (log_probs.argmax(-1) == ids)).sum())
        self._mlm_loss += float((weights * mlm_example_loss).sum())
        self._mlm_weight += float(weights.sum())

        nsp = np.asarray(next_sentence_log_probs, np.float64)
        labels = np.asarray(next_sentence_labels).reshape(-1)
        nsp_example_loss = _per_example_loss(nsp, labels)
        self._nsp_correct += float((nsp.argmax(-1) == labels).sum())
        self._nsp_loss += float(nsp_example_loss.sum())
        self._nsp_count += len(labels)

        batch_mlm_loss = ((weights * mlm_example_loss).sum()
                          / (weights.sum() + 1e-5))
        self._batch_losses.append(batch_mlm_loss + nsp_example_loss.mean())

    def result(self):
        """dict of the five metrics (floats); raises ValueError if empty."""
        if not self._batch_losses:
            raise ValueError("no evaluation batch was seen")
        return {
            "loss": float(np.mean(self._batch_losses)),
            "masked_lm_accuracy": self._mlm_correct / self._mlm_weight
            if self._mlm_weight else 0.0,
            "masked_lm_loss": self._mlm_loss / self._mlm_weight
            if self._mlm_weight else 0.0,
            "next_sentence_accuracy": self._nsp_correct / self._nsp_count,
            "next_sentence_loss": self._nsp_loss / self._nsp_count,
        }


class PretrainingTask(Task):
    """BertPretrainer training and evaluation on pre-training TFRecords.

    Raises (from `prepare()`, before anything is written):
        UserError: neither mode, an input glob matching no (non-empty) file,
            records written with another max_seq_length /
            max_predictions_per_seq, --dynamic_masking without a vocab, a
            checkpoint that does not fit, an unwritable output_dir.
    """

    modes = ("train", "eval")

    def build_model(self):
        return BertPretrainer(self.bert_config)

    def check_inputs(self):
        config = self.config
        modes.check_some_requested(config, ("train", "eval"))
        if config.dynamic_masking and not config.vocab_file:
            raise UserError("--dynamic_masking needs --vocab_file (for the "
                            "ids of [MASK], [CLS] and [SEP]).")
        if config.runtime.optimizer not in runtime.OPTIMIZERS:
            raise UserError(f"--optimizer={config.runtime.optimizer}: "
                            f"expected one of {', '.join(runtime.OPTIMIZERS)}")
        checks.check_positive(train_batch_size=config.train_batch_size,
                              eval_batch_size=config.eval_batch_size,
                              max_predictions_per_seq=config.max_predictions_per_seq)
        if config.do_train:
            checks.check_positive(num_train_steps=config.num_train_steps)
            checks.check_schedule(config.learning_rate)
        if config.do_eval:
            checks.check_positive(max_eval_steps=config.max_eval_steps)
        self.input_files = checks.check_input_files(config.input_file)
        pretraining_record_spec(config.max_seq_length,
                                config.max_predictions_per_seq).check_files(
                                    self.input_files)
        # A file cut in its middle is otherwise read short, without an error.
        scan_record_files(self.input_files)
        self.tokenizer = None
        if config.dynamic_masking:
            self.tokenizer = self.load_tokenizer(do_lower_case=True)
        logging.info("*** Input Files ***")
        for input_file in self.input_files:
            logging.info("  %s", input_file)

    def _dataset(self, batch_size, is_training):
        return pretraining_dataset(
            self.input_files, self.config.max_seq_length,
            self.config.max_predictions_per_seq, batch_size,
            is_training=is_training, seed=self.config.runtime.seed)

    def train(self):
        """Trains to num_train_steps; returns {loss, global_step}."""
        self.prepare()
        config = self.config
        logging.info("***** Running training *****")
        logging.info("  Batch size = %d", config.train_batch_size)
        dataset = self._dataset(config.train_batch_size, is_training=True)
        if config.dynamic_masking:
            # keras_hub loads slowly: only for the runs that mask.
            from bert_tf1.data.pretraining.dynamic_masking import DynamicMasking

            dataset = dataset.map(DynamicMasking.from_tokenizer(
                self.tokenizer, config.max_predictions_per_seq,
                config.masked_lm_prob), num_parallel_calls=tf.data.AUTOTUNE)
        dataset = dataset.map(split_inputs_and_labels)
        with naming_record_errors(self.input_files, "pre-training"):
            return self.train_model(
                dataset, config.num_train_steps, config.train_batch_size,
                config.learning_rate, config.num_warmup_steps,
                optimizer_model=self.model)

    def evaluate(self):
        """The original's eval metrics over max_eval_steps batches
        (`PretrainingMetrics` and global_step), written to eval_results.txt."""
        self.prepare()
        self.restore_weights()
        config = self.config
        logging.info("***** Running evaluation *****")
        logging.info("  Batch size = %d", config.eval_batch_size)
        dataset = self._dataset(config.eval_batch_size, is_training=False)
        model = self.model
        # Batch by batch: all outputs at once would hold max_eval_steps x
        # [batch, max_predictions_per_seq, vocab_size] log-probabilities.
        predict = tf.function(lambda inputs: model(inputs, training=False),
                              autograph=False)
        metrics = PretrainingMetrics()
        with naming_record_errors(self.input_files, "pre-training"):
            for features in dataset.take(config.max_eval_steps):
                inputs, labels = split_inputs_and_labels(features)
                outputs = predict(inputs)
                metrics.update(outputs["masked_lm_log_probs"].numpy(),
                               labels["masked_lm_ids"].numpy(),
                               labels["masked_lm_weights"].numpy(),
                               outputs["next_sentence_log_probs"].numpy(),
                               labels["next_sentence_labels"].numpy())
        result = metrics.result()
        result["global_step"] = self.global_step
        self.log_results(result)
        if self.is_chief:
            self.make_output_dir()
            write_key_value_file(
                os.path.join(config.output_dir, "eval_results.txt"), result)
            self.report_evaluation(result)
        return result
