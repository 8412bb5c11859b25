"""SQuAD 1.1 / 2.0 fine-tuning and prediction: the original run_squad.py.

Files in output_dir: the original's, and eval_results.json when the predict
file has gold answers. Batches keep the fixed layout by default (the
original's loss and n-best search read padded positions); with
`dynamic_padding=True` prediction batches are cut and the logits padded back
with -10000 (docs/fine_tuning_speed.md).
"""
import dataclasses
import os

import tensorflow as tf

from bert_tf1.data.squad import evaluate as squad_evaluate
from bert_tf1.data.squad.examples import load_squad_json, read_squad_examples
from bert_tf1.data.squad.features import (FeatureWriter, check_window_flags,
                                          convert_examples_to_features,
                                          squad_dataset)
from bert_tf1.data.squad.postprocess import (raw_results, write_json_atomic,
                                            write_predictions)
from bert_tf1.modeling import BertSquad
from bert_tf1.tasks import checks
from bert_tf1.tasks.configs import FineTuningConfig
from bert_tf1.tasks.fine_tuning import SHUFFLE_SEED, FineTuningTask
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.model_building import build_script_model

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
    #: Off by default, unlike the other tasks (module docstring).
    dynamic_padding: bool = False


@tf.autograph.experimental.do_not_convert  # no tensor control flow
def _split_labels(batch):
    features = {k: v for k, v in batch.items() if k not in _LABEL_KEYS}
    return features, {k: batch[k] for k in _LABEL_KEYS}


class SquadTask(FineTuningTask):
    """BertSquad training and prediction (answers, n-best lists, metrics).

    Raises (from `prepare()`, before anything is written):
        UserError: the original's flag checks, a missing/empty/invalid
            train_file or predict_file, a vocab or checkpoint that does not
            fit the config, an unwritable output_dir.
    """

    modes = ("train", "predict")
    record_files = {"train": "train.tf_record", "predict": "eval.tf_record"}
    records_name = "SQuAD"
    token_outputs = True
    #: Padded positions of cut batches score lowest in the n-best search.
    token_output_padding = -10000.0
    cut_training_batches = False
    train_shuffle_seed = SHUFFLE_SEED
    export_model_type = "squad"

    def __init__(self, config, create_model=None):
        super().__init__(config, create_model)
        self.features = {}

    def build_model(self):
        return build_script_model(self.create_model or BertSquad,
                                  (self.bert_config,), BertSquad)

    def export_arguments(self):
        """The windows and answers of this run's flags."""
        config = self.config
        return {"doc_stride": config.doc_stride,
                "max_query_length": config.max_query_length,
                "max_answer_length": config.max_answer_length,
                "n_best_size": config.n_best_size}

    def check_task(self):
        """run_squad.py's `validate_flags_or_throw` (its messages), plus
        n_best_size and max_answer_length > 0."""
        config = self.config
        if config.do_train and not config.train_file:
            raise UserError(
                "If `do_train` is True, then `train_file` must be specified.")
        if config.do_predict and not config.predict_file:
            raise UserError("If `do_predict` is True, then `predict_file` "
                            "must be specified.")
        check_window_flags(config.max_seq_length, config.max_query_length,
                           config.doc_stride)
        checks.check_positive(n_best_size=config.n_best_size,
                              max_answer_length=config.max_answer_length)

    def padding_example(self):
        return None  # the original run_squad.py adds no TPU padding examples

    def read_examples(self, mode):
        """SquadExamples of train_file ("train") or predict_file."""
        path, flag = self.data_file(mode), f"--do_{mode}"
        checks.check_data_file(path, flag)
        examples = read_squad_examples(
            path, is_training=mode == "train",
            version_2_with_negative=self.config.version_2_with_negative)
        checks.check_examples(examples, path, flag)
        return examples

    def write_features(self, examples, path, mode):
        """Windows of `doc_stride` over each context; the prediction
        windows are kept (`self.features`) for the answers."""
        config = self.config
        kept = self.features[mode] = []
        is_training = mode == "train"
        with FeatureWriter(path, is_training=is_training) as writer:
            def output(feature):
                if not is_training:
                    kept.append(feature)
                writer.process_feature(feature)

            convert_examples_to_features(
                examples, self.tokenizer, config.max_seq_length,
                config.doc_stride, config.max_query_length, is_training,
                output)
        return writer.num_features

    def read_dataset(self, path, mode, batch_size):
        # Prediction reads every window once, in order, its count known.
        dataset = squad_dataset(path, self.config.max_seq_length,
                                is_training=mode == "train",
                                batch_size=batch_size,
                                seed=self.config.runtime.seed)
        return dataset.map(_split_labels) if mode == "train" else dataset

    def write_outputs(self, outputs, num_actual):
        """Answers for predict_file, written as the original's JSON files
        (chief only): {"predictions": {qas_id: text}, "null_odds": (SQuAD
        2.0), "eval": `write_eval_results`}; None on other workers.

        Raises:
            NonFiniteResultError: NaN/Inf logits (on every worker).
        """
        config = self.config
        features = self.features["predict"]
        results = raw_results(features, outputs, os.path.join(
            config.output_dir, "predictions.json"))
        if not self.is_chief:
            return None
        predictions, _, null_odds = write_predictions(
            self.examples_of("predict"), features, results, config.n_best_size,
            config.max_answer_length, config.do_lower_case,
            *(os.path.join(config.output_dir, name) for name in (
                "predictions.json", "nbest_predictions.json",
                "null_odds.json")),
            version_2_with_negative=config.version_2_with_negative,
            null_score_diff_threshold=config.null_score_diff_threshold,
            verbose_logging=config.verbose_logging)
        return {"predictions": predictions, "null_odds": null_odds,
                "eval": self.write_eval_results(predictions, null_odds)}

    def write_eval_results(self, predictions, null_odds):
        """eval_results.json with the official metrics of the questions
        that have gold answers (`bert_tf1.data.squad.evaluate.evaluate_graded`), or
        None when there are none."""
        config = self.config
        result = squad_evaluate.evaluate_graded(
            load_squad_json(config.predict_file), predictions,
            null_odds if config.version_2_with_negative else None,
            config.predict_file)
        if result is not None:
            self.log_results(result)
            write_json_atomic(result, os.path.join(config.output_dir,
                                                   "eval_results.json"))
            self.report_evaluation(result)
        return result
