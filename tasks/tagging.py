"""Sequence tagging (NER, BERT paper §5.3): run_ner.py's task.

    task = TaggingTask(TaggingConfig(
        train_file="train.conll", eval_file="dev.conll", data_format="conll",
        tag_scheme="iob2", vocab_file=..., bert_config_file=...,
        init_checkpoint=..., output_dir=..., do_train=True, do_eval=True))
    task.run()   # train / evaluate / predict as the do_* fields say

Two taggers, one data path (data/tagging: whole documents in windows of
max_seq_length advancing by doc_stride, each word labelled and predicted at
its first word piece in the window where it has the most context):
  * fine-tuning (default): `BertTokenClassifier`;
  * feature-based (`feature_layers` set, paper Table 7):
    `BertFeatureTagger`, a frozen encoder whose activations are computed
    once and cached (tasks/tagging_cache.py), then a two-layer BiLSTM.
The no-BERT baseline (a BiLSTM over random word-piece embeddings) is a demo:
demos/wordpiece_bilstm_ner.py.

Files in output_dir: label_list.txt (written by training; read by every
later eval/predict run, so ids always mean what they meant in training),
train.tf_record / eval.tf_record / predict.tf_record, model.ckpt-N,
eval_results.txt and eval_predictions.txt (--do_eval), predictions.txt
(--do_predict), and for the feature-based tagger
<split>_features.<key>.tf_record. Tags are written in the input's
--tag_scheme; training uses IOB2 (data.tagging.schemes.TRAINING_SCHEME).
"""
import dataclasses
import os

import numpy as np
from absl import logging
from keras import ops

from data.tagging.decoding import predicted_tags
from data.tagging.documents import all_tags, convert_documents
from data.tagging.features import (convert_documents_to_features,
                                   padding_window)
from data.tagging.metric import conll_scores, conlleval_report
from data.tagging.outputs import (LABEL_LIST_FILE, choose_label_list,
                                  write_label_list, write_predictions)
from data.tagging.readers import read_tagged_file
from data.tagging.records import tagging_dataset, write_tagging_records
from data.tagging.schemes import (TRAINING_SCHEME, convert_tags,
                                  entity_types, scheme_labels)
from modeling import BertFeatureTagger, BertTokenClassifier, training
from modeling.models import losses
from tasks import checks
from tasks.base import EvaluatingConfig, FineTuningTask
from tasks.errors import UserError
from tasks.modes import requested
from tasks.tagging_cache import FeatureCache, cached_dataset, window_arrays
from tasks.tagging_checks import check_tagging_flags

#: --learning_rate default of the fine-tuned tagger (the original's).
FINE_TUNING_LEARNING_RATE = 5e-5
#: --learning_rate default with --feature_layers: the BiLSTM and output
#: layer train from scratch on frozen activations (docs/tagging.md says
#: what this value rests on).
FEATURE_BASED_LEARNING_RATE = 2e-3



@dataclasses.dataclass(kw_only=True)
class TaggingConfig(EvaluatingConfig):
    """run_ner.py's flags (the shared ones keep the original's defaults,
    except do_lower_case: false, as the paper's cased NER model).

    Attributes (beyond EvaluatingConfig):
        train_file, eval_file, predict_file: tagged files (predict_file's
            tags, if any, are ignored).
        data_format: "conll", "uner" or "chinese_bio"
            (data.tagging.readers).
        tag_scheme: the files' scheme: "iob1", "iob2"/"bio", "bioes".
        doc_stride: pieces between window starts.
        feature_layers: None or "" to fine-tune; else one of
            modeling.FEATURE_LAYERS for the feature-based tagger.
        lstm_units: units per LSTM direction of the feature-based
            tagger's BiLSTM; None: the encoder's hidden size (the paper's 768
            for BERT-Base).
        learning_rate: None: FINE_TUNING_LEARNING_RATE (5e-5), or
            FEATURE_BASED_LEARNING_RATE when feature_layers is set.
    """
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
    """Token tagging: fine-tuning or feature-based.

    The examples of a mode are its windows (`self.features[mode]`).

    Raises (from `prepare()`, before anything is written):
        UserError: no do_* field; a bad --data_format, --tag_scheme,
            --feature_layers or window size; a file missing, empty
            or with a bad line (file and line named); a tag outside the
            label list; no label_list.txt for eval/predict without
            training, or one from another training; no training step; a
            vocab or checkpoint that does not fit the config.
    """

    records_name = "tagging"
    token_outputs = True

    def __init__(self, config):
        if config.learning_rate is None:
            config = dataclasses.replace(
                config, learning_rate=FEATURE_BASED_LEARNING_RATE
                if config.feature_layers else FINE_TUNING_LEARNING_RATE)
        super().__init__(config)
        self.documents = {}
        self.features = {}
        self.label_list = None
        self.feature_cache = None

    @property
    def feature_based(self):
        return bool(self.config.feature_layers)

    @property
    def lstm_units(self):
        """`config.lstm_units`, default the encoder's hidden size when
        feature-based, else 768."""
        if self.config.lstm_units is not None:
            return self.config.lstm_units
        return self.bert_config.hidden_size if self.feature_based else 768

    def build_model(self):
        num_labels = len(self.label_list)
        config = self.config
        if self.feature_based:
            return BertFeatureTagger(self.bert_config, num_labels,
                                     config.feature_layers,
                                     lstm_units=self.lstm_units)
        return BertTokenClassifier(self.bert_config, num_labels)

    # -- checks -----------------------------------------------------------------

    def check_task(self):
        """The choices, then every requested file read and the label list
        chosen (before the tokenizer and the windows)."""
        config = self.config
        self.scheme = check_tagging_flags(config,
                                          self.bert_config.num_hidden_layers)
        for mode in requested(config, self.modes):
            self.read_documents(mode.name)
        train_labels = None
        if config.do_train:
            train_labels = scheme_labels(entity_types(all_tags(
                self.training_documents("train"))), TRAINING_SCHEME)
        self.label_list = choose_label_list(config.output_dir, train_labels,
                                            config.train_file)

    def read_documents(self, mode):
        """The documents of a mode's file, as read (in --tag_scheme), once."""
        if mode not in self.documents:
            path = self.data_file(mode)
            if not path:
                raise UserError(f"--do_{mode} needs --{mode}_file")
            checks.check_data_file(path, f"--do_{mode}")
            self.documents[mode] = read_tagged_file(
                path, self.config.data_format, self.scheme,
                has_tags=mode != "predict")
        return self.documents[mode]

    def training_documents(self, mode):
        """A mode's documents with tags in the training scheme (IOB2)."""
        return convert_documents(self.read_documents(mode), self.scheme)

    def read_examples(self, mode):
        """The windows of a mode's documents; a tag outside the label list
        is found here, before any file is written (file and line named)."""
        config = self.config
        documents = self.training_documents(mode)
        features = convert_documents_to_features(
            documents, self.tokenizer, self.label_list, config.max_seq_length,
            config.doc_stride)
        logging.info("%s: %d documents, %d words, %d windows.",
                     self.data_file(mode), len(documents),
                     sum(d.num_words for d in documents), len(features))
        self.features[mode] = features
        return features

    # -- data -------------------------------------------------------------------

    def padding_example(self):
        return padding_window(self.config.max_seq_length)

    def write_features(self, windows, path, mode):
        return write_tagging_records(windows, path)

    def read_dataset(self, path, mode, batch_size):
        """(features, label_ids) batches; features hold the token mask
        `label_weights` (`data.tagging.records.tagging_dataset`)."""
        return tagging_dataset(path, self.config.max_seq_length,
                               mode == "train", batch_size)

    def make_dataset(self, mode, windows, folder, batch_size):
        """The feature-based tagger reads its cached activations
        (`tasks.tagging_cache`, its own length buckets); the others the
        records."""
        if not self.feature_based:
            return super().make_dataset(mode, windows, folder, batch_size)
        config = self.config
        if self.feature_cache is None:
            self.feature_cache = FeatureCache(
                self.model, max(config.eval_batch_size,
                                config.predict_batch_size,
                                config.train_batch_size))
        arrays = window_arrays(windows)
        path = self.feature_cache.ensure(folder, mode, arrays)
        self.num_records[mode] = len(windows)
        return cached_dataset(path, arrays, self.model.feature_width,
                              mode == "train", batch_size), path

    def window_logits(self, mode, batch_size):
        """float32 logits [num_windows, max_seq_length, num_labels] of
        every real window of a mode, in window order."""
        logits, _, _, num_actual = self.predict_logits(mode, batch_size)
        return logits[:num_actual]

    def _tags_in_file_scheme(self, mode, logits):
        tags = predicted_tags(self.features[mode], logits,
                              self.read_documents(mode), self.label_list)
        return [[convert_tags(sentence, TRAINING_SCHEME, self.scheme)
                 for sentence in document] for document in tags]

    # -- the modes --------------------------------------------------------------

    def before_training(self):
        """Writes label_list.txt; the feature-based tagger's frozen encoder
        gets its weights before its activations are cached."""
        if self.is_chief:
            write_label_list(os.path.join(self.config.output_dir,
                                          LABEL_LIST_FILE), self.label_list)
        if self.feature_based:
            training.restore_for_inference(self.model, self.checkpoint)

    def compute_results(self, logits, labels, weights, num_actual):
        """Entity P/R/F1 (conlleval) of every eval_file word:
        eval_precision, eval_recall, eval_f1, eval_f1_<type> for every type
        in gold or predictions, eval_accuracy (token accuracy), eval_loss
        (mean cross-entropy over scored words), global_step."""
        logits = logits[:num_actual]
        self.eval_tags = self._tags_in_file_scheme("eval", logits)
        documents = self.read_documents("eval")
        self.scores = conll_scores(
            [s.tags for d in documents for s in d.sentences],
            [s for d in self.eval_tags for s in d])
        overall = self.scores.overall
        result = {"eval_precision": overall.precision,
                  "eval_recall": overall.recall, "eval_f1": overall.f1,
                  "eval_accuracy": self.scores.accuracy,
                  "eval_loss": _mean_scored_loss(
                      logits, window_arrays(self.features["eval"])),
                  "global_step": self.global_step}
        for name, counts in self.scores.per_type.items():
            result[f"eval_f1_{name}"] = counts.f1
        return result

    def log_results(self, result):
        logging.info("***** Eval results *****\n%s",
                     conlleval_report(self.scores))

    def write_eval_outputs(self, logits, labels, num_actual):
        """eval_predictions.txt: the eval words with their predicted tags."""
        write_predictions(os.path.join(self.config.output_dir,
                                       "eval_predictions.txt"),
                          self.read_documents("eval"), self.eval_tags)

    def write_outputs(self, logits, num_actual):
        """predictions.txt: one tag per predict_file token (--tag_scheme);
        returns them, nested [document][sentence][word]."""
        tags = self._tags_in_file_scheme("predict", logits[:num_actual])
        if self.is_chief:
            path = os.path.join(self.config.output_dir, "predictions.txt")
            write_predictions(path, self.read_documents("predict"), tags)
            logging.info("Wrote %d tags to %s", sum(
                len(s) for d in tags for s in d), path)
        return tags


def _mean_scored_loss(logits, arrays):
    """Mean cross-entropy over the scored positions (label_weights 1)."""
    log_probs = ops.log_softmax(ops.convert_to_tensor(logits), axis=-1)
    per_position = np.asarray(losses.per_example_log_prob_loss(
        log_probs, arrays["label_ids"]))
    weights = arrays["label_weights"]
    return float((per_position * weights).sum() / max(weights.sum(), 1.0))
