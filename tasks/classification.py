"""Sentence (pair) classification on GLUE/XNLI: the original run_classifier.py.

    task = ClassificationTask(ClassificationConfig(
        task_name="MRPC", data_dir=".../MRPC", vocab_file=..., output_dir=...,
        bert_config_file=..., init_checkpoint=..., do_train=True))
    task.run()   # train / evaluate / predict as the do_* fields say

Files in output_dir, as the original: train.tf_record, eval.tf_record,
predict.tf_record, model.ckpt-N, eval_results.txt, test_results.tsv; and
eval_predictions.tsv (each dev example's gold and predicted label and the
class probabilities) beside eval_results.txt.
"""
import dataclasses
import os

import numpy as np
from absl import logging

from tasks import checks, modes
from tasks.base import FineTuningConfig, Task
from tasks.errors import UserError
from tasks.modes import MODES, requested

@dataclasses.dataclass(kw_only=True)
class ClassificationConfig(FineTuningConfig):
    """The original run_classifier.py flags (same names and defaults)."""
    task_name: str = None
    data_dir: str = None
    do_eval: bool = False
    eval_batch_size: int = 8


class ClassificationTask(Task):
    """BertClassifier fine-tuning, evaluation and prediction.

    Raises (from `prepare()`, before anything is written):
        UserError: no do_* field, unknown task, a data file missing or
            without examples, no training step, a vocab or checkpoint that
            does not fit the config, an unwritable output_dir.
    """

    def __init__(self, config):
        super().__init__(config)
        from data.glue.processors import get_processor

        if not config.task_name:
            raise UserError("--task_name is required")
        try:
            self.processor = get_processor(config.task_name)
        except ValueError as error:
            raise UserError(f"--task_name: {error}") from None
        self.label_list = self.processor.get_labels()
        self.num_labels = (1 if self.processor.is_regression
                           else len(self.label_list))
        self.examples = {}

    modes = ("train", "eval", "predict")

    def build_model(self):
        from modeling import BertClassifier

        return BertClassifier(self.bert_config, self.num_labels)

    # -- checks ---------------------------------------------------------------

    def data_file(self, set_type):
        """The file a set is read from (for messages)."""
        names = getattr(self.processor, "file_names", {})
        name = names.get(set_type, f"<{set_type} set>")
        return os.path.join(self.config.data_dir or "", name)

    def read_examples(self, set_type):
        """The examples of "train", "dev" or "test" (read once)."""
        if set_type not in self.examples:
            mode = next(m for m in MODES.values() if m.split == set_type)
            flag = "--" + mode.flag
            if not self.config.data_dir:
                raise UserError(f"{flag} needs --data_dir")
            read = getattr(self.processor, f"get_{set_type}_examples")
            examples = read(self.config.data_dir)
            checks.check_examples(examples, self.data_file(set_type), flag)
            self.examples[set_type] = examples
        return self.examples[set_type]

    def num_train_steps(self):
        """The original's count: int(examples / batch size * epochs)."""
        return self.original_train_steps(len(self.read_examples("train")))

    def check_inputs(self):
        from data.tokenization import full_tokenizer

        config = self.config
        full_tokenizer.validate_case_matches_checkpoint(config.do_lower_case,
                                                        config.init_checkpoint)
        modes.check_some_requested(config, ("train", "eval", "predict"))
        checks.check_positive(train_batch_size=config.train_batch_size,
                              eval_batch_size=config.eval_batch_size,
                              predict_batch_size=config.predict_batch_size)
        self.tokenizer = self.load_tokenizer()
        for mode in requested(config, self.modes):
            self.read_examples(mode.split)
        if config.do_train:
            checks.check_train_steps(self.num_train_steps(),
                                     len(self.read_examples("train")),
                                     self.data_file("train"), config)

    # -- data -----------------------------------------------------------------

    def _write_features(self, examples, folder, file_name):
        from data.glue.features import file_based_convert_examples_to_features

        path = os.path.join(folder, file_name)
        file_based_convert_examples_to_features(
            examples, self.label_list, self.config.max_seq_length,
            self.tokenizer, path)
        return path

    def _dataset(self, path, is_training, batch_size):
        from data.glue.features import classifier_dataset

        return classifier_dataset(path, self.config.max_seq_length,
                                  is_training, batch_size,
                                  is_regression=self.processor.is_regression,
                                  seed=self.config.runtime.seed)

    def inference_dataset(self, set_type, batch_size, folder, file_name, title):
        """Writes eval/predict features and reads them back, every example kept.

        Args:
            folder: where the features file goes (`Task.worker_folder`); the
                dataset reads it, so use it before that folder is removed.

        Returns:
            (dataset of (features, label_ids, is_real_example) batches,
            number of real examples before TPU padding).
        """
        from data.glue.processors import PaddingInputExample
        from modeling.training import runtime

        examples = list(self.read_examples(set_type))
        num_actual = len(examples)
        if runtime.is_tpu_strategy(self.strategy):
            # On TPU every batch is full: pad with weight-0 examples.
            while len(examples) % batch_size:
                examples.append(PaddingInputExample())
        path = self._write_features(examples, folder, file_name)
        logging.info("***** Running %s *****", title)
        logging.info("  Num examples = %d (%d actual, %d padding)",
                     len(examples), num_actual, len(examples) - num_actual)
        logging.info("  Batch size = %d", batch_size)
        return self._dataset(path, False, batch_size), num_actual

    # -- the three modes ------------------------------------------------------

    def train(self):
        """Featurizes train.tsv and fine-tunes; returns {loss, global_step}."""
        self.prepare()
        config = self.config
        examples = self.read_examples("train")
        num_train_steps = self.num_train_steps()
        num_warmup_steps = int(num_train_steps * config.warmup_proportion)
        with self.worker_folder() as folder:
            train_file = self._write_features(examples, folder,
                                              "train.tf_record")
            logging.info("***** Running training *****")
            logging.info("  Num examples = %d", len(examples))
            logging.info("  Batch size = %d", config.train_batch_size)
            logging.info("  Num steps = %d", num_train_steps)
            dataset = self._dataset(train_file, True,
                                    config.train_batch_size).map(
                lambda features, labels, weights: (features, labels))
            with self.reading_records([train_file], "classifier"):
                return self.train_model(dataset, num_train_steps,
                                        config.train_batch_size,
                                        config.learning_rate, num_warmup_steps)

    def predict_logits(self, dataset, path=None):
        """Logits [N, num_labels], labels [N] and weights [N] of every example.

        Args:
            dataset: batches of `inference_dataset`.
            path: its TFRecord file (named by read errors).

        Raises:
            RuntimeError: the model returned another number of rows than the
                file holds (they would be paired with the wrong labels).
        """
        with self.reading_records([path] if path else [], "classifier"):
            logits, labels, weights = self.logits_and_labels(dataset)
        if len(logits) != len(labels):
            raise RuntimeError(f"Got {len(logits)} predictions for "
                               f"{len(labels)} examples.")
        return logits, labels, weights

    def evaluate(self):
        """The original's eval_results.txt values over every dev example.

        Returns:
            dict: eval_loss, loss, global_step, eval_accuracy (classification)
            and the task's GLUE metrics; written to eval_results.txt.
        """
        from data.glue.metrics import task_metrics
        from data.io.results import check_finite_values, write_key_value_file
        from modeling.models import losses

        self.prepare()
        self.restore_weights()
        config = self.config
        with self.worker_folder() as folder:
            dataset, num_actual = self.inference_dataset(
                "dev", config.eval_batch_size, folder, "eval.tf_record",
                "evaluation")
            logits, labels, weights = self.predict_logits(
                dataset, os.path.join(folder, "eval.tf_record"))
        if self.processor.is_regression:
            per_example_loss = losses.per_example_regression_loss(logits, labels)
        else:
            per_example_loss = losses.per_example_classifier_loss(logits, labels)
        per_example_loss = np.asarray(per_example_loss)
        total = weights.sum()
        batch_size = config.eval_batch_size
        result = {
            "eval_loss": float((per_example_loss * weights).sum() / total),
            "global_step": self.global_step,
            # The Estimator's `loss`: the mean over eval batches of each
            # batch's mean loss.
            "loss": float(np.mean([
                per_example_loss[i:i + batch_size].mean()
                for i in range(0, len(per_example_loss), batch_size)])),
        }
        if not self.processor.is_regression:
            result["eval_accuracy"] = float(
                ((logits.argmax(-1) == labels) * weights).sum() / total)
        result.update(task_metrics(config.task_name, logits, labels, weights))
        # NaN metrics are refused (NonFiniteResultError), every worker alike.
        check_finite_values(os.path.join(config.output_dir,
                                         "eval_results.txt"), result)
        logging.info("***** Eval results *****")
        for key in sorted(result):
            logging.info("  %s = %s", key, result[key])
        if self.is_chief:
            write_key_value_file(
                os.path.join(config.output_dir, "eval_results.txt"), result)
            self.write_eval_predictions(logits[:num_actual], labels[:num_actual])
            self.report_evaluation(result)
        return result

    def write_eval_predictions(self, logits, label_ids):
        """`eval_predictions.tsv`: one row per dev example, in file order.

        Columns (tab-separated, a header first): `guid`, `gold_label`,
        `predicted_label` (the most probable), then `probability_<label>`
        for each label in label-list order (the softmax of the logits, as
        `test_results.tsv` writes them). Regression (STS-B): `guid`,
        `gold_score`, `predicted_score`.

        Args:
            logits: float32 [num_examples, num_labels] of the dev examples.
            label_ids: int [num_examples] (float for regression).
        """
        from keras import ops

        from data.io.results import write_text_atomically

        examples = self.read_examples("dev")
        if self.processor.is_regression:
            header = ["guid", "gold_score", "predicted_score"]
            rows = [[example.guid, str(np.float32(gold)),
                     str(np.float32(row[0]))]
                    for example, gold, row in zip(examples, label_ids, logits)]
        else:
            probabilities = np.asarray(ops.softmax(logits, axis=-1))
            header = ["guid", "gold_label", "predicted_label"] + [
                f"probability_{label}" for label in self.label_list]
            rows = [[example.guid, self.label_list[int(gold)],
                     self.label_list[int(np.argmax(row))]]
                    + [str(np.float32(value)) for value in row]
                    for example, gold, row in zip(examples, label_ids,
                                                  probabilities)]
        path = os.path.join(self.config.output_dir, "eval_predictions.tsv")
        write_text_atomically(path, "".join(
            "\t".join(row) + "\n" for row in [header] + rows))
        logging.info("Wrote %d dev predictions to %s", len(rows), path)
        return path

    def predict(self):
        """Class probabilities (or regression scores) of every test example.

        Returns:
            float32 array [num_examples, num_labels] ([num_examples, 1] for
            regression), also written to test_results.tsv as the original's
            tab-separated `str(float32)` values.
        """
        from keras import ops

        from data.io.results import check_finite_rows, write_text_atomically

        self.prepare()
        self.restore_weights()
        config = self.config
        with self.worker_folder() as folder:
            dataset, num_actual = self.inference_dataset(
                "test", config.predict_batch_size, folder,
                "predict.tf_record", "prediction")
            logits, _, _ = self.predict_logits(
                dataset, os.path.join(folder, "predict.tf_record"))
        if self.processor.is_regression:
            rows = logits[:num_actual, :1]
        else:
            rows = np.asarray(ops.softmax(logits, axis=-1))[:num_actual]
        path = os.path.join(config.output_dir, "test_results.tsv")
        # NaN probabilities look like results: refused, every worker alike.
        check_finite_rows(path, rows, what="test example")
        if self.is_chief:
            lines = ["\t".join(str(np.float32(value)) for value in row) + "\n"
                     for row in rows]
            write_text_atomically(path, "".join(lines))
            logging.info("Wrote %d predictions to %s", len(lines), path)
        return rows
