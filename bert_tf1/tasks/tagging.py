"""Sequence tagging (NER, BERT paper §5.3): run_ner.py's task.

Fine-tuning: `BertTokenClassifier`; feature-based (`feature_layers`, paper
Table 7): `BertFeatureTagger` over activations cached once
(bert_tf1/tasks/tagging_cache.py). Data: `bert_tf1.tasks.tagging_data.TaggingData`;
files: docs/tagging.md.
"""
import dataclasses
import os

from absl import logging

from bert_tf1.data.tagging.features import padding_window
from bert_tf1.data.tagging.metric import conlleval_report
from bert_tf1.data.tagging.outputs import (LABEL_LIST_FILE, write_label_list,
                                           write_predictions)
from bert_tf1.data.tagging.records import tagging_dataset, write_tagging_records
from bert_tf1.data.tagging.schemes import entity_types
from bert_tf1.modeling import BertFeatureTagger, BertTokenClassifier, training
from bert_tf1.tasks.configs import EvaluatingConfig
from bert_tf1.tasks.fine_tuning import FineTuningTask
from bert_tf1.tasks.model_building import build_script_model
from bert_tf1.tasks.modes import requested
from bert_tf1.tasks.tagging_cache import FeatureCache
from bert_tf1.tasks.tagging_data import TaggingData

#: --learning_rate default of the fine-tuned tagger (the original's).
FINE_TUNING_LEARNING_RATE = 5e-5
#: --learning_rate default with --feature_layers: the BiLSTM and output
#: layer train from scratch on frozen activations (docs/tagging.md says
#: what this value rests on).
FEATURE_BASED_LEARNING_RATE = 2e-3


@dataclasses.dataclass(kw_only=True)
class TaggingConfig(EvaluatingConfig):
    """run_ner.py's flags (do_lower_case defaults to false: cased model);
    `feature_layers` None or "" fine-tunes, else one of
    modeling.FEATURE_LAYERS; `lstm_units` None: `TaggingTask.lstm_units`;
    `learning_rate` None: FINE_TUNING_LEARNING_RATE, or
    FEATURE_BASED_LEARNING_RATE with `feature_layers`."""
    do_lower_case: bool = False
    train_file: str = None
    eval_file: str = None
    predict_file: str = None
    data_format: str = "conll"
    tag_scheme: str = "iob2"
    doc_stride: int = 64
    feature_layers: str = None
    lstm_units: int = None
    learning_rate: float = None


class TaggingTask(FineTuningTask):
    """Token tagging: fine-tuning or feature-based; the examples of a mode
    are its windows (`self.features[mode]`).

    Raises (from `prepare()`, before anything is written):
        UserError: no do_* field, the errors of `TaggingData`, a tag outside
            the label list, no training step, a vocab or checkpoint that
            does not fit the config.
    """

    records_name = "tagging"
    token_outputs = True
    export_model_type = "tagger"

    def __init__(self, config, create_model=None):
        if config.learning_rate is None:
            config = dataclasses.replace(
                config, learning_rate=FEATURE_BASED_LEARNING_RATE
                if config.feature_layers else FINE_TUNING_LEARNING_RATE)
        super().__init__(config, create_model)
        self.data = None
        self.label_list = None
        self.feature_cache = None

    @property
    def feature_based(self):
        return bool(self.config.feature_layers)

    @property
    def lstm_units(self):
        """`config.lstm_units`, else feature-based: hidden size; else 768."""
        if self.config.lstm_units is not None:
            return self.config.lstm_units
        return self.bert_config.hidden_size if self.feature_based else 768

    def build_model(self):
        if self.feature_based:
            return BertFeatureTagger(self.bert_config, len(self.label_list),
                                     self.config.feature_layers,
                                     lstm_units=self.lstm_units)
        return build_script_model(
            self.create_model or BertTokenClassifier,
            (self.bert_config, len(self.label_list)), BertTokenClassifier)

    def check_task(self):
        """The flags, then every requested file read and the label list
        chosen (`TaggingData`)."""
        self.data = TaggingData(
            self.config, [mode.name for mode in requested(self.config,
                                                          self.modes)],
            self.bert_config.num_hidden_layers)
        self.label_list = self.data.label_list
        self.features = self.data.windows

    def read_examples(self, mode):
        return self.data.make_windows(mode, self.tokenizer)

    def export_arguments(self):
        """The tags (label_list.txt's) and --doc_stride's windows."""
        return {"label_list": list(self.label_list),
                "doc_stride": self.config.doc_stride}

    def padding_example(self):
        return padding_window(self.config.max_seq_length)

    def write_features(self, windows, path, mode):
        return write_tagging_records(windows, path)

    def read_dataset(self, path, mode, batch_size):
        """(features, label_ids) batches; features hold the token mask
        `label_weights` (`bert_tf1.data.tagging.records.tagging_dataset`)."""
        return tagging_dataset(path, self.config.max_seq_length,
                               mode == "train", batch_size)

    def make_dataset(self, mode, windows, folder, batch_size):
        """The feature-based tagger reads its cached activations
        (`bert_tf1.tasks.tagging_cache`); the others the records."""
        if not self.feature_based:
            return super().make_dataset(mode, windows, folder, batch_size)
        config = self.config
        if self.feature_cache is None:
            self.feature_cache = FeatureCache(
                self.model, max(config.eval_batch_size,
                                config.predict_batch_size,
                                config.train_batch_size))
        self.num_records[mode] = len(windows)
        return self.feature_cache.dataset(folder, mode, windows, batch_size)

    def before_training(self):
        """Writes label_list.txt; the feature-based tagger's frozen encoder
        gets its weights before its activations are cached."""
        if self.is_chief:
            write_label_list(os.path.join(self.config.output_dir,
                                          LABEL_LIST_FILE), self.label_list)
        if self.feature_based:
            training.restore_for_inference(self.model, self.checkpoint)

    def metric_names(self):
        """`TaggingData.eval_results`' names: an F1 per type of the labels."""
        return ["eval_precision", "eval_recall", "eval_f1", "eval_accuracy",
                "eval_loss"] + [f"eval_f1_{name}" for name in
                                entity_types(self.label_list)]

    def compute_results(self, logits, labels, weights, num_actual):
        """`TaggingData.eval_results` and global_step."""
        result, self.eval_tags, self.scores = self.data.eval_results(
            logits[:num_actual])
        result["global_step"] = self.global_step
        return result

    def log_results(self, result):
        logging.info("***** Eval results *****\n%s",
                     conlleval_report(self.scores))

    def write_eval_outputs(self, logits, labels, num_actual):
        """eval_predictions.txt: the eval words with their predicted tags."""
        write_predictions(os.path.join(self.config.output_dir,
                                       "eval_predictions.txt"),
                          self.data.read_documents("eval"), self.eval_tags)

    def write_outputs(self, logits, num_actual):
        """predictions.txt: one tag per predict_file token (--tag_scheme);
        returns them, nested [document][sentence][word]."""
        tags = self.data.file_tags("predict", logits[:num_actual])
        if self.is_chief:
            path = os.path.join(self.config.output_dir, "predictions.txt")
            write_predictions(path, self.data.read_documents("predict"), tags)
            logging.info("Wrote %d tags to %s", sum(
                len(s) for d in tags for s in d), path)
        return tags

