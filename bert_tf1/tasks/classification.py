"""Sentence (pair) classification on GLUE/XNLI: the original run_classifier.py.

Files in output_dir: the original's, and eval_predictions.tsv.
"""
import dataclasses
import os

import numpy as np
import tensorflow as tf
from absl import logging
from keras import ops

from bert_tf1.data.glue import features as glue_features
from bert_tf1.data.glue.metrics import task_metric_names, task_metrics
from bert_tf1.data.glue.processors import get_processor
from bert_tf1.data.io.results import (eval_predictions_text,
                                      write_text_atomically)
from bert_tf1.modeling import BertClassifier
from bert_tf1.modeling.models import losses
from bert_tf1.tasks import checks
from bert_tf1.tasks.configs import EvaluatingConfig
from bert_tf1.tasks.fine_tuning import FineTuningTask
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.model_building import build_script_model
from bert_tf1.tasks.modes import MODES


@dataclasses.dataclass(kw_only=True)
class ClassificationConfig(EvaluatingConfig):
    """The original run_classifier.py flags (same names and defaults)."""
    task_name: str = None
    data_dir: str = None


class ClassificationTask(FineTuningTask):
    """BertClassifier fine-tuning, evaluation and prediction.

    Raises (from `prepare()`, before anything is written):
        UserError: no do_* field, unknown task, a data file missing or
            without examples, no training step, a vocab or checkpoint that
            does not fit the config, an unwritable output_dir.
    """

    records_name = "classifier"
    eval_summaries = True
    export_model_type = "classifier"

    def __init__(self, config, create_model=None):
        super().__init__(config, create_model)
        if not config.task_name:
            raise UserError("--task_name is required")
        try:
            self.processor = get_processor(config.task_name)
        except ValueError as error:
            raise UserError(f"--task_name: {error}") from None
        self.label_list = self.processor.get_labels()
        self.regression = self.processor.is_regression
        self.num_labels = 1 if self.regression else len(self.label_list)

    def build_model(self):
        return build_script_model(
            self.create_model or BertClassifier,
            (self.bert_config, self.num_labels), BertClassifier,
            num_labels=self.num_labels)

    def export_arguments(self):
        """The task's labels (a regression, num_labels 1: none)."""
        return {"label_list": None if self.regression
                else [str(label) for label in self.label_list]}

    def data_file(self, mode):
        names = getattr(self.processor, "file_names", {})
        split = MODES[mode].split
        return os.path.join(self.config.data_dir or "",
                            names.get(split, f"<{split} set>"))

    def read_examples(self, mode):
        if not self.config.data_dir:
            raise UserError(f"--{MODES[mode].flag} needs --data_dir")
        read = getattr(self.processor, f"get_{MODES[mode].split}_examples")
        examples = read(self.config.data_dir)
        checks.check_examples(examples, self.data_file(mode),
                              "--" + MODES[mode].flag)
        return examples

    def write_features(self, examples, path, mode):
        return glue_features.file_based_convert_examples_to_features(
            examples, self.label_list, self.config.max_seq_length,
            self.tokenizer, path)

    def read_dataset(self, path, mode, batch_size):
        dataset = glue_features.classifier_dataset(
            path, self.config.max_seq_length, mode == "train", batch_size,
            is_regression=self.regression, seed=self.config.runtime.seed)
        if mode == "train":
            return dataset.map(tf.autograph.experimental.do_not_convert(
                lambda features, labels, weights: (features, labels)))
        return dataset

    def metric_names(self):
        """The evaluation's names (`compute_results`, global_step aside)."""
        return (["eval_loss", "loss"] + ([] if self.regression else [
            "eval_accuracy"]) + list(task_metric_names(self.config.task_name)))

    def compute_results(self, logits, labels, weights, num_actual):
        loss = (losses.per_example_regression_loss if self.regression
                else losses.per_example_classifier_loss)
        result = self.classification_results(
            np.asarray(loss(logits, labels)),
            None if self.regression else logits, labels, weights)
        result.update(task_metrics(self.config.task_name, logits, labels,
                                   weights))
        return result

    def write_eval_outputs(self, logits, labels, num_actual):
        self.write_eval_predictions(logits[:num_actual], labels[:num_actual])

    def write_eval_predictions(self, logits, label_ids):
        """`eval_predictions.tsv` (`bert_tf1.data.io.results.eval_predictions_text`)
        of the dev examples' logits [N, num_labels] and label_ids [N]."""
        values = (logits if self.regression
                  else np.asarray(ops.softmax(logits, axis=-1)))
        path = os.path.join(self.config.output_dir, "eval_predictions.tsv")
        write_text_atomically(path, eval_predictions_text(
            [example.guid for example in self.examples_of("eval")],
            self.label_list, label_ids, values, self.regression))
        logging.info("Wrote %d dev predictions to %s", len(values), path)
        return path

    def write_outputs(self, logits, num_actual):
        """test_results.tsv: the class probabilities (regression: the
        score) of every test example; returns them, float32 [N, k]."""
        if self.regression:
            return self.write_test_results(logits[:num_actual, :1],
                                           softmax=False)
        return self.write_test_results(logits[:num_actual])
