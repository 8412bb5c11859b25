"""SQuAD 1.1 / 2.0 fine-tuning and prediction: the original run_squad.py.

Files in output_dir, as the original: train.tf_record, eval.tf_record,
model.ckpt-N, predictions.json, nbest_predictions.json, null_odds.json
(SQuAD 2.0), plus eval_results.json when the predict file has gold answers.
"""
import dataclasses
import os
import random

import numpy as np
from absl import logging

from tasks import checks, modes
from tasks.base import FineTuningConfig, Task
from tasks.errors import UserError

# The original's pre-shuffle of the training examples.
TRAIN_SHUFFLE_SEED = 12345
_LABEL_KEYS = ("start_positions", "end_positions")


@dataclasses.dataclass(kw_only=True)
class SquadConfig(FineTuningConfig):
    """The original run_squad.py flags (same names and defaults)."""
    train_file: str = None
    predict_file: str = None
    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64
    n_best_size: int = 20
    max_answer_length: int = 30
    verbose_logging: bool = False
    version_2_with_negative: bool = False
    null_score_diff_threshold: float = 0.0


def _split_labels(batch):
    features = {k: v for k, v in batch.items() if k not in _LABEL_KEYS}
    return features, {k: batch[k] for k in _LABEL_KEYS}


def split_by_gold_answers(dataset):
    """(the dataset with only the questions that have an `answers` list,
    the ids of those that have none).

    A predict file may mix graded and ungraded questions (some without
    `answers`); evaluation then covers the graded ones, said in the log,
    rather than being skipped for all.
    """
    graded, ungraded = [], []
    for article in dataset:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            qas = [qa for qa in paragraph["qas"]
                   if isinstance(qa.get("answers"), list)]
            ungraded += [qa.get("id") for qa in paragraph["qas"]
                         if not isinstance(qa.get("answers"), list)]
            if qas:
                paragraphs.append(dict(paragraph, qas=qas))
        if paragraphs:
            graded.append(dict(article, paragraphs=paragraphs))
    return graded, ungraded


class SquadTask(Task):
    """BertSquad training and prediction (answers, n-best lists, metrics).

    Raises (from `prepare()`, before anything is written):
        UserError: the original's flag checks, a missing/empty/invalid
            train_file or predict_file, a vocab or checkpoint that does not
            fit the config, an unwritable output_dir.
    """

    def __init__(self, config):
        super().__init__(config)
        self.examples = {}

    modes = ("train", "predict")

    def build_model(self):
        from modeling import BertSquad

        return BertSquad(self.bert_config)

    def read_examples(self, is_training):
        """SquadExamples of train_file (True) or predict_file (False), once."""
        from data.squad.examples import read_squad_examples

        if is_training not in self.examples:
            path = self.config.train_file if is_training else self.config.predict_file
            flag = "--do_train" if is_training else "--do_predict"
            checks.check_data_file(path, flag)
            examples = read_squad_examples(
                path, is_training=is_training,
                version_2_with_negative=self.config.version_2_with_negative)
            checks.check_examples(examples, path, flag)
            self.examples[is_training] = examples
        return self.examples[is_training]

    def num_train_steps(self):
        """Counted from examples, not features, as the original."""
        return self.original_train_steps(len(self.read_examples(True)))

    def check_inputs(self):
        """The original's validate_flags_or_throw, then the data files."""
        from data.tokenization import full_tokenizer

        config = self.config
        full_tokenizer.validate_case_matches_checkpoint(config.do_lower_case,
                                                        config.init_checkpoint)
        modes.check_some_requested(config, ("train", "predict"))
        if config.do_train and not config.train_file:
            raise UserError(
                "If `do_train` is True, then `train_file` must be specified.")
        if config.do_predict and not config.predict_file:
            raise UserError(
                "If `do_predict` is True, then `predict_file` must be "
                "specified.")
        if config.max_seq_length <= config.max_query_length + 3:
            raise UserError(
                "The max_seq_length (%d) must be greater than "
                "max_query_length (%d) + 3" % (config.max_seq_length,
                                               config.max_query_length))
        if config.doc_stride < 1:
            raise UserError("doc_stride must be at least 1, got %d"
                            % config.doc_stride)
        checks.check_positive(train_batch_size=config.train_batch_size,
                              predict_batch_size=config.predict_batch_size,
                              n_best_size=config.n_best_size,
                              max_answer_length=config.max_answer_length)
        self.tokenizer = self.load_tokenizer()
        if config.do_train:
            checks.check_train_steps(self.num_train_steps(),
                                     len(self.read_examples(True)),
                                     config.train_file, config)
        if config.do_predict:
            self.read_examples(False)

    def _convert(self, examples, is_training, output_fn):
        from data.squad.features import convert_examples_to_features

        config = self.config
        convert_examples_to_features(
            examples=examples, tokenizer=self.tokenizer,
            max_seq_length=config.max_seq_length, doc_stride=config.doc_stride,
            max_query_length=config.max_query_length, is_training=is_training,
            output_fn=output_fn)

    def train(self):
        """Shuffles and featurizes train_file, then trains."""
        from data.squad.features import FeatureWriter, squad_dataset

        self.prepare()
        config = self.config
        train_examples = list(self.read_examples(True))
        num_train_steps = self.num_train_steps()
        num_warmup_steps = int(num_train_steps * config.warmup_proportion)
        random.Random(TRAIN_SHUFFLE_SEED).shuffle(train_examples)
        with self.worker_folder() as folder:
            train_file = os.path.join(folder, "train.tf_record")
            with FeatureWriter(train_file, is_training=True) as writer:
                self._convert(train_examples, True, writer.process_feature)
            logging.info("***** Running training *****")
            logging.info("  Num orig examples = %d", len(train_examples))
            logging.info("  Num split examples = %d", writer.num_features)
            logging.info("  Batch size = %d", config.train_batch_size)
            logging.info("  Num steps = %d", num_train_steps)
            dataset = squad_dataset(train_file, config.max_seq_length,
                                    is_training=True,
                                    batch_size=config.train_batch_size,
                                    seed=config.runtime.seed).map(
                                        _split_labels)
            with self.reading_records([train_file], "SQuAD"):
                return self.train_model(dataset, num_train_steps,
                                        config.train_batch_size,
                                        config.learning_rate, num_warmup_steps)

    def predict_raw_results(self):
        """Featurizes predict_file and runs the model on every window.

        Returns:
            (examples, features, list of `RawResult`).
        """
        import tensorflow as tf

        from data.io.results import check_finite_rows
        from data.squad.features import FeatureWriter, squad_dataset
        from data.squad.postprocess import RawResult

        config = self.config
        eval_examples = self.read_examples(False)
        eval_features = []
        with self.worker_folder() as folder:
            eval_file = os.path.join(folder, "eval.tf_record")
            with FeatureWriter(eval_file, is_training=False) as writer:
                def append_feature(feature):
                    eval_features.append(feature)
                    writer.process_feature(feature)

                self._convert(eval_examples, False, append_feature)
            logging.info("***** Running predictions *****")
            logging.info("  Num orig examples = %d", len(eval_examples))
            logging.info("  Num split examples = %d", len(eval_features))
            logging.info("  Batch size = %d", config.predict_batch_size)
            if not eval_features:
                return eval_examples, eval_features, []
            # drop_remainder=False: every window gets logits.
            dataset = squad_dataset(eval_file, config.max_seq_length,
                                    is_training=False,
                                    batch_size=config.predict_batch_size)
            num_batches = -(-len(eval_features) // config.predict_batch_size)
            dataset = dataset.apply(
                tf.data.experimental.assert_cardinality(num_batches))
            with self.reading_records([eval_file], "SQuAD"):
                outputs = self.predict_outputs(dataset)
        start_logits = np.asarray(outputs["start_logits"], np.float32)
        end_logits = np.asarray(outputs["end_logits"], np.float32)
        # NaN logits would give arbitrary answers that look real.
        check_finite_rows(os.path.join(config.output_dir, "predictions.json"),
                          np.concatenate([start_logits, end_logits], axis=-1),
                          what="SQuAD window")
        if len(start_logits) != len(eval_features):
            raise RuntimeError("Got %d results for %d features." % (
                len(start_logits), len(eval_features)))
        results = [RawResult(unique_id=feature.unique_id, start_logits=start,
                             end_logits=end)
                   for feature, start, end in zip(eval_features, start_logits,
                                                  end_logits)]
        return eval_examples, eval_features, results

    def predict(self):
        """Answers for predict_file, written as the original's JSON files.

        Every worker runs the model on all of predict_file by itself; only
        the chief writes.

        Returns:
            dict with "predictions" ({qas_id: answer text}), "null_odds"
            (SQuAD 2.0, else empty) and "eval" (the official metrics when the
            file has gold answers, else None); None on a non-chief worker.
        """
        from data.squad.postprocess import write_predictions

        self.prepare()
        self.restore_weights()
        config = self.config
        examples, features, results = self.predict_raw_results()
        if not self.is_chief:
            return None
        output_dir = config.output_dir
        predictions, _, null_odds = write_predictions(
            examples, features, results, config.n_best_size,
            config.max_answer_length, config.do_lower_case,
            os.path.join(output_dir, "predictions.json"),
            os.path.join(output_dir, "nbest_predictions.json"),
            os.path.join(output_dir, "null_odds.json"),
            version_2_with_negative=config.version_2_with_negative,
            null_score_diff_threshold=config.null_score_diff_threshold,
            verbose_logging=config.verbose_logging)
        return {"predictions": predictions, "null_odds": null_odds,
                "eval": self.write_eval_results(predictions, null_odds)}

    def write_eval_results(self, predictions, null_odds):
        """eval_results.json with the official metrics, if answers are known."""
        from data.squad import evaluate as squad_evaluate
        from data.squad.examples import load_squad_json
        from data.squad.postprocess import write_json_atomic

        from data.io.errors import cut_list

        config = self.config
        dataset, ungraded = split_by_gold_answers(
            load_squad_json(config.predict_file))
        if not dataset:
            logging.info("%s has no gold answers: no eval_results.json.",
                         config.predict_file)
            return None
        if ungraded:
            logging.warning(
                "%s: %d question(s) have no \"answers\" list and are left out "
                "of eval_results.json (%s); the other questions are scored.",
                config.predict_file, len(ungraded), cut_list(ungraded))
        result = squad_evaluate.evaluate(
            dataset, predictions,
            na_probs=null_odds if config.version_2_with_negative else None)
        logging.info("***** Eval results *****")
        for key, value in result.items():
            logging.info("  %s = %s", key, value)
        write_json_atomic(result, os.path.join(config.output_dir,
                                               "eval_results.json"))
        self.report_evaluation(result)
        return result
