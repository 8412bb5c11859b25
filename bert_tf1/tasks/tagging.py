"""Sequence tagging (NER, BERT paper §5.3): run_ner.py's task.

Fine-tuning: `BertTokenClassifier`; feature-based (`feature_layers`, paper
Table 7): `BertFeatureTagger` over activations cached once
(bert_tf1/tasks/tagging_cache.py). Data: `TaggingData`; files: docs/tagging.md.
"""
import dataclasses
import os

import numpy as np
from absl import logging
from keras import ops

from bert_tf1.data.tagging.decoding import predicted_tags
from bert_tf1.data.tagging.documents import all_tags, convert_documents
from bert_tf1.data.tagging.features import (check_window_flags,
                                            convert_documents_to_features,
                                            padding_window)
from bert_tf1.data.tagging.metric import conll_scores, conlleval_report
from bert_tf1.data.tagging.outputs import (LABEL_LIST_FILE, choose_label_list,
                                           write_label_list, write_predictions)
from bert_tf1.data.tagging.readers import DATA_FORMATS, read_tagged_file
from bert_tf1.data.tagging.records import tagging_dataset, write_tagging_records
from bert_tf1.data.tagging.schemes import (TRAINING_SCHEME, entity_types,
                                           normalize_scheme, scheme_labels)
from bert_tf1.modeling import BertFeatureTagger, BertTokenClassifier, training
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.feature_tagger import check_feature_layers
from bert_tf1.tasks import checks
from bert_tf1.tasks.configs import EvaluatingConfig
from bert_tf1.tasks.fine_tuning import FineTuningTask
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.modes import requested
from bert_tf1.tasks.tagging_cache import FeatureCache, window_arrays

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


def check_tagging_flags(config, num_hidden_layers):
    """Checks the flags of a `TaggingConfig` (--feature_layers against
    `num_hidden_layers`); returns the files' normalized tag scheme.

    Raises:
        UserError: naming the flag, its value and what was expected.
    """
    if config.data_format not in DATA_FORMATS:
        raise UserError(f"--data_format={config.data_format}: expected "
                        f"one of {', '.join(DATA_FORMATS)}")
    try:
        scheme = normalize_scheme(config.tag_scheme)
    except ValueError as error:
        raise UserError(f"--tag_scheme={config.tag_scheme}: {error}") from None
    if config.feature_layers:
        try:
            check_feature_layers(config.feature_layers, num_hidden_layers)
        except ValueError as error:
            raise UserError(f"--feature_layers={config.feature_layers}: "
                            f"{error} ({config.bert_config_file})") from None
    if config.lstm_units is not None:
        checks.check_positive(lstm_units=config.lstm_units)
    check_window_flags(config.max_seq_length, config.doc_stride)
    return scheme


class TaggingData:
    """The documents of a `TaggingConfig`'s files for `modes`, read once,
    their windows (`bert_tf1.data.tagging.features.TaggingFeatures`), the files' tag
    `scheme` and the `label_list` (`bert_tf1.data.tagging.outputs.choose_label_list`).

    Raises:
        UserError: a bad flag, a file missing, empty or with a bad line
            (file and line named), no or another training's label_list.txt.
    """

    def __init__(self, config, modes, num_hidden_layers):
        self.config = config
        self.scheme = check_tagging_flags(config, num_hidden_layers)
        self.documents = {}
        self.windows = {}
        for mode in modes:
            self.read_documents(mode)
        train_labels = None
        if config.do_train:
            train_labels = scheme_labels(entity_types(all_tags(
                self.training_documents("train"))), TRAINING_SCHEME)
        self.label_list = choose_label_list(config.output_dir, train_labels,
                                            config.train_file)

    def read_documents(self, mode):
        """The documents of a mode's file, as read (in --tag_scheme), once."""
        if mode not in self.documents:
            path = getattr(self.config, mode + "_file")
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

    def make_windows(self, mode, tokenizer):
        """The windows of a mode's documents; a tag outside the label list
        is found here, before any file is written (file and line named)."""
        config = self.config
        documents = self.training_documents(mode)
        windows = self.windows[mode] = convert_documents_to_features(
            documents, tokenizer, self.label_list, config.max_seq_length,
            config.doc_stride)
        logging.info("%s: %d documents, %d words, %d windows.",
                     getattr(config, mode + "_file"), len(documents),
                     sum(d.num_words for d in documents), len(windows))
        return windows

    def file_tags(self, mode, logits):
        """The tags of float32 `logits` [num_windows, seq, num_labels],
        nested [document][sentence][word], in the files' scheme."""
        return predicted_tags(self.windows[mode], logits,
                              self.read_documents(mode), self.label_list,
                              self.scheme)

    def mean_scored_loss(self, mode, logits):
        """Mean cross-entropy of `logits` over the scored positions
        (label_weights 1) of a mode's windows."""
        arrays = window_arrays(self.windows[mode])
        log_probs = ops.log_softmax(ops.convert_to_tensor(logits), axis=-1)
        per_position = np.asarray(losses.per_example_log_prob_loss(
            log_probs, arrays["label_ids"]))
        weights = arrays["label_weights"]
        return float((per_position * weights).sum() / max(weights.sum(), 1.0))

    def eval_results(self, logits):
        """(results, tags, scores) of the eval windows' float32 `logits`
        against eval_file (`bert_tf1.data.tagging.metric.conll_scores`): results
        eval_precision, eval_recall, eval_f1, eval_f1_<type>, eval_accuracy
        (per token), eval_loss (`mean_scored_loss`); tags: `file_tags`."""
        tags = self.file_tags("eval", logits)
        scores = conll_scores(
            [s.tags for d in self.read_documents("eval") for s in d.sentences],
            [s for d in tags for s in d])
        overall = scores.overall
        result = {"eval_precision": overall.precision,
                  "eval_recall": overall.recall, "eval_f1": overall.f1,
                  "eval_accuracy": scores.accuracy,
                  "eval_loss": self.mean_scored_loss("eval", logits)}
        for name, counts in scores.per_type.items():
            result[f"eval_f1_{name}"] = counts.f1
        return result, tags, scores


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

    def __init__(self, config):
        if config.learning_rate is None:
            config = dataclasses.replace(
                config, learning_rate=FEATURE_BASED_LEARNING_RATE
                if config.feature_layers else FINE_TUNING_LEARNING_RATE)
        super().__init__(config)
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
        return BertTokenClassifier(self.bert_config, len(self.label_list))

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

