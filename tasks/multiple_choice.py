"""Multiple choice (SWAG, HellaSwag, your own TSV): BERT paper §4.4.

    task = MultipleChoiceTask(MultipleChoiceConfig(
        train_file="swag/train.csv", eval_file="swag/val.csv",
        data_format="swag", vocab_file=..., bert_config_file=...,
        init_checkpoint=..., output_dir=..., do_train=True, do_eval=True))
    task.run()   # train / evaluate / predict as the do_* fields say

The original repository never shipped SWAG; its author's recipe, which this
follows: each example becomes num_choices rows `[CLS] context [SEP] ending
[SEP]` (data/multiple_choice), a batch [batch, num_choices, seq] runs
through the encoder as [batch * num_choices, seq], one vector scores each
row's pooled output, and a softmax over an example's num_choices scores
gives its choice probabilities (`modeling.BertMultipleChoice`). The
defaults are the paper's SWAG fine-tuning: 3 epochs, learning rate 2e-5,
batch size 16.

Files in output_dir, as run_classifier.py's: train.tf_record,
eval.tf_record, predict.tf_record, model.ckpt-N, eval_results.txt
(eval_accuracy, eval_loss, global_step, loss) and test_results.tsv (one
line of num_choices probabilities per example of predict_file, in input
order).
"""
import dataclasses
import os
import random

import numpy as np
from absl import logging

from tasks import checks, modes
from tasks.base import FineTuningConfig, Task
from tasks.errors import UserError
from tasks.modes import requested

#: The training examples are shuffled once with this seed before they are
#: written (as run_squad.py does): tf.data's shuffle buffer of 100 would
#: otherwise see one stretch of a file (SWAG rows come video by video).
TRAIN_SHUFFLE_SEED = 12345

#: mode name -> (config field of its file, the flag named in messages).
DATA_FILES = {"train": ("train_file", "--train_file"),
              "eval": ("eval_file", "--eval_file"),
              "predict": ("predict_file", "--predict_file")}

#: mode name -> the features file written into output_dir.
RECORD_FILES = {"train": "train.tf_record", "eval": "eval.tf_record",
                "predict": "predict.tf_record"}


@dataclasses.dataclass(kw_only=True)
class MultipleChoiceConfig(FineTuningConfig):
    """run_multiple_choice.py's flags; the paper's SWAG defaults (§4.4).

    Attributes:
        train_file, eval_file, predict_file: the data of each mode, in
            `data_format` (predict_file may be unlabelled).
        data_format: "swag" (CSV), "hellaswag" (JSON Lines) or "tsv" (see
            `data.multiple_choice.readers`).
        num_choices: int >= 2; every row of every file must have exactly
            this many endings.
        do_eval, eval_batch_size: evaluation on eval_file.
    """
    train_file: str = None
    eval_file: str = None
    predict_file: str = None
    data_format: str = "swag"
    num_choices: int = 4
    do_eval: bool = False
    eval_batch_size: int = 8
    train_batch_size: int = 16
    learning_rate: float = 2e-5
    num_train_epochs: float = 3.0


class MultipleChoiceTask(Task):
    """BertMultipleChoice fine-tuning, evaluation and prediction.

    Raises (from `prepare()`, before anything is written):
        UserError: no do_* field; a mode without its file; an unknown
            data_format; num_choices < 2; a data file that is missing,
            empty or malformed (a row with another number of choices, a
            label outside 0..num_choices-1: the message names file and
            line); a train or eval file without labels; no training step;
            a vocab or checkpoint that does not fit the config; an
            unwritable output_dir.
    """

    modes = ("train", "eval", "predict")

    def __init__(self, config):
        super().__init__(config)
        self.examples = {}

    def build_model(self):
        from modeling import BertMultipleChoice

        return BertMultipleChoice(self.bert_config)

    # -- checks ---------------------------------------------------------------

    def read_examples(self, mode):
        """The MultipleChoiceExamples of a mode's file (read and checked once).

        Args:
            mode: "train", "eval" or "predict".

        Raises:
            UserError: see the class docstring.
        """
        from data.multiple_choice.readers import read_examples

        if mode not in self.examples:
            config = self.config
            field, flag = DATA_FILES[mode]
            path = getattr(config, field)
            do_flag = "--do_" + mode
            if not path:
                raise UserError(f"{do_flag} needs {flag}, but none was given")
            checks.check_data_file(path, flag)
            examples = read_examples(path, config.data_format,
                                     config.num_choices)
            checks.check_examples(examples, path, flag)
            if mode != "predict" and examples[0].label is None:
                # The readers accept a file without labels only as a whole.
                raise UserError(
                    f"{path}: no labels (a test file?); {do_flag} needs the "
                    "index of the right ending on every row")
            self.examples[mode] = examples
        return self.examples[mode]

    def num_train_steps(self):
        """The original's count: int(examples / batch size * epochs)."""
        return self.original_train_steps(len(self.read_examples("train")))

    def check_inputs(self):
        from data.multiple_choice.readers import DATA_FORMATS
        from data.tokenization import full_tokenizer

        config = self.config
        full_tokenizer.validate_case_matches_checkpoint(config.do_lower_case,
                                                        config.init_checkpoint)
        modes.check_some_requested(config, ("train", "eval", "predict"))
        if str(config.data_format).lower() not in DATA_FORMATS:
            raise UserError(f"--data_format={config.data_format}: expected "
                            f"one of {', '.join(DATA_FORMATS)}")
        if (isinstance(config.num_choices, bool)
                or not isinstance(config.num_choices, int)
                or config.num_choices < 2):
            raise UserError(f"--num_choices={config.num_choices}: expected "
                            "an integer >= 2")
        checks.check_positive(train_batch_size=config.train_batch_size,
                              eval_batch_size=config.eval_batch_size,
                              predict_batch_size=config.predict_batch_size)
        self.tokenizer = self.load_tokenizer()
        for mode in requested(config, self.modes):
            self.read_examples(mode.name)
        if config.do_train:
            checks.check_train_steps(self.num_train_steps(),
                                     len(self.read_examples("train")),
                                     config.train_file, config)

    # -- data -----------------------------------------------------------------

    def _write_features(self, examples, folder, mode):
        from data.multiple_choice.records import (
            file_based_convert_examples_to_features)

        path = os.path.join(folder, RECORD_FILES[mode])
        file_based_convert_examples_to_features(
            examples, self.config.max_seq_length, self.tokenizer, path,
            num_choices=self.config.num_choices)
        return path

    def _dataset(self, path, is_training, batch_size):
        from data.multiple_choice.records import multiple_choice_dataset

        return multiple_choice_dataset(
            path, self.config.num_choices, self.config.max_seq_length,
            is_training, batch_size, include_is_real_example=not is_training)

    def inference_dataset(self, mode, batch_size, folder):
        """Writes eval/predict features and reads them back, every example kept.

        On TPU every batch must be full, so the examples are padded to a
        multiple of `batch_size` with `PaddingExample`s (all-zero rows,
        is_real_example 0), as run_classifier.py does.

        Args:
            mode: "eval" or "predict".
            folder: where the features file goes (`Task.worker_folder`); the
                dataset reads it, so use it before that folder is removed.

        Returns:
            (dataset of (features, label_ids, is_real_example) batches,
            number of real examples, which come first).
        """
        from data.multiple_choice.examples import PaddingExample
        from modeling.training import runtime

        examples = list(self.read_examples(mode))
        num_actual = len(examples)
        if runtime.is_tpu_strategy(self.strategy):
            while len(examples) % batch_size:
                examples.append(PaddingExample())
        path = self._write_features(examples, folder, mode)
        logging.info("***** Running %s *****",
                     "evaluation" if mode == "eval" else "prediction")
        logging.info("  Num examples = %d (%d actual, %d padding)",
                     len(examples), num_actual, len(examples) - num_actual)
        logging.info("  Batch size = %d", batch_size)
        return self._dataset(path, False, batch_size), num_actual

    def predict_logits(self, mode, batch_size):
        """Logits of every example of a mode's file, with labels and weights.

        Returns:
            (float32 logits [N, num_choices], int32 label_ids [N], float32
            is_real_example [N], number of real examples); N counts the TPU
            padding, which comes after the real examples.

        Raises:
            RuntimeError: the model returned another number of rows than the
                file holds (they would be paired with the wrong labels).
        """
        with self.worker_folder() as folder:
            dataset, num_actual = self.inference_dataset(mode, batch_size,
                                                         folder)
            logits, labels, weights = self.logits_and_labels(dataset)
        if logits.shape != (len(labels), self.config.num_choices):
            raise RuntimeError(f"Got predictions of shape {logits.shape} for "
                               f"{len(labels)} examples of "
                               f"{self.config.num_choices} choices.")
        return logits, labels, weights, num_actual

    # -- the three modes ------------------------------------------------------

    def train(self):
        """Featurizes train_file (shuffled once) and fine-tunes.

        Returns:
            dict with `loss` and `global_step` (`Task.train_model`).
        """
        self.prepare()
        config = self.config
        examples = list(self.read_examples("train"))
        random.Random(TRAIN_SHUFFLE_SEED).shuffle(examples)
        num_train_steps = self.num_train_steps()
        num_warmup_steps = int(num_train_steps * config.warmup_proportion)
        with self.worker_folder() as folder:
            train_file = self._write_features(examples, folder, "train")
            logging.info("***** Running training *****")
            logging.info("  Num examples = %d (%d choices each)",
                         len(examples), config.num_choices)
            logging.info("  Batch size = %d", config.train_batch_size)
            logging.info("  Num steps = %d", num_train_steps)
            dataset = self._dataset(train_file, True, config.train_batch_size)
            return self.train_model(dataset, num_train_steps,
                                    config.train_batch_size,
                                    config.learning_rate, num_warmup_steps)

    def evaluate(self):
        """Accuracy and loss over every example of eval_file.

        Returns:
            dict: eval_accuracy (share of examples whose highest-scoring
            choice is the label), eval_loss (mean softmax cross-entropy over
            the choices), global_step, and loss (the Estimator's: the mean
            over eval batches of each batch's mean loss, TPU padding
            included, as run_classifier.py's file); written to
            eval_results.txt.
        """
        from data.io.results import write_key_value_file
        from modeling.models import losses

        self.prepare()
        self.restore_weights()
        config = self.config
        logits, labels, weights, _ = self.predict_logits(
            "eval", config.eval_batch_size)
        per_example_loss = np.asarray(
            losses.per_example_classifier_loss(logits, labels), np.float64)
        total = weights.sum()
        batch_size = config.eval_batch_size
        result = {
            "eval_accuracy": float(
                ((logits.argmax(-1) == labels) * weights).sum() / total),
            "eval_loss": float((per_example_loss * weights).sum() / total),
            "global_step": self.global_step,
            "loss": float(np.mean([
                per_example_loss[i:i + batch_size].mean()
                for i in range(0, len(per_example_loss), batch_size)])),
        }
        logging.info("***** Eval results *****")
        for key in sorted(result):
            logging.info("  %s = %s", key, result[key])
        if self.is_chief:
            write_key_value_file(
                os.path.join(config.output_dir, "eval_results.txt"), result)
        return result

    def predict(self):
        """Choice probabilities of every example of predict_file.

        Returns:
            float32 array [num_examples, num_choices], the softmax over each
            example's choice scores, in input order (TPU padding dropped);
            also written to test_results.tsv (`str(float32)` values,
            tab-separated, as run_classifier.py's).
        """
        from keras import ops

        from data.multiple_choice.results import write_test_results

        self.prepare()
        self.restore_weights()
        config = self.config
        logits, _, _, num_actual = self.predict_logits(
            "predict", config.predict_batch_size)
        rows = np.asarray(ops.softmax(logits, axis=-1),
                          np.float32)[:num_actual]
        if self.is_chief:
            path = os.path.join(config.output_dir, "test_results.tsv")
            write_test_results(path, rows)
            logging.info("Wrote %d predictions to %s", len(rows), path)
        return rows
