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
(The NER demo's no-BERT baseline subclasses this task:
demos/wordpiece_bilstm_ner.py.)

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

from tasks import checks, modes
from tasks.base import FineTuningConfig, Task
from tasks.errors import UserError
from tasks.modes import requested

LABEL_LIST_FILE = "label_list.txt"
#: The split (file prefix) and file flag of each mode.
_SPLITS = {"train": "train_file", "eval": "eval_file",
           "predict": "predict_file"}


@dataclasses.dataclass(kw_only=True)
class TaggingConfig(FineTuningConfig):
    """run_ner.py's flags (the shared ones keep the original's defaults,
    except do_lower_case: false, as the paper's cased NER model).

    Attributes (beyond FineTuningConfig):
        train_file, eval_file, predict_file: tagged files (predict_file's
            tags, if any, are ignored).
        data_format: "conll", "uner" or "chinese_bio"
            (data.tagging.readers).
        tag_scheme: the files' scheme: "iob1", "iob2"/"bio", "bioes".
        doc_stride: pieces between window starts.
        do_eval, eval_batch_size: as run_classifier.py.
        feature_layers: None or "" to fine-tune; else one of
            modeling.FEATURE_LAYERS for the feature-based tagger.
        lstm_units: units per LSTM direction of the feature-based
            tagger's BiLSTM; None: the encoder's hidden size (the paper's 768
            for BERT-Base).
    """
    do_lower_case: bool = False
    train_file: str = None
    eval_file: str = None
    predict_file: str = None
    data_format: str = "conll"
    tag_scheme: str = "iob2"
    doc_stride: int = 64
    do_eval: bool = False
    eval_batch_size: int = 8
    feature_layers: str = None
    lstm_units: int = None


def _padding_window(seq_length):
    """A window that scores nothing (TPU batches must be full)."""
    from data.tagging.features import TaggingFeatures

    zeros = [0] * seq_length
    return TaggingFeatures(
        document_index=-1, window_index=-1, start=0, tokens=[],
        input_ids=zeros, input_mask=zeros, segment_ids=zeros,
        label_ids=zeros, label_weights=[0.0] * seq_length,
        word_refs=[None] * seq_length, scored=())


class TaggingTask(Task):
    """Token tagging: fine-tuning or feature-based.

    Raises (from `prepare()`, before anything is written):
        UserError: no do_* field; a bad --data_format, --tag_scheme,
            --feature_layers or window size; a file missing, empty
            or with a bad line (file and line named); a tag outside the
            label list; no label_list.txt for eval/predict without
            training, or one from another training; no training step; a
            vocab or checkpoint that does not fit the config.
    """

    modes = ("train", "eval", "predict")

    def __init__(self, config):
        super().__init__(config)
        self.documents = {}
        self.features = {}
        self.label_list = None
        self.feature_cache = None

    # -- the model --------------------------------------------------------------

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
        from modeling import BertFeatureTagger, BertTokenClassifier

        num_labels = len(self.label_list)
        config = self.config
        if self.feature_based:
            return BertFeatureTagger(self.bert_config, num_labels,
                                     config.feature_layers,
                                     lstm_units=self.lstm_units)
        return BertTokenClassifier(self.bert_config, num_labels)

    # -- checks -----------------------------------------------------------------

    def _check_choices(self):
        from data.tagging.features import check_window_flags
        from data.tagging.readers import DATA_FORMATS
        from data.tagging.schemes import normalize_scheme
        from modeling.models.feature_tagger import check_feature_layers

        config = self.config
        if config.data_format not in DATA_FORMATS:
            raise UserError(f"--data_format={config.data_format}: expected "
                            f"one of {', '.join(DATA_FORMATS)}")
        try:
            self.scheme = normalize_scheme(config.tag_scheme)
        except ValueError as error:
            raise UserError(f"--tag_scheme={config.tag_scheme}: {error}"
                            ) from None
        if self.feature_based:
            try:
                check_feature_layers(config.feature_layers,
                                     self.bert_config.num_hidden_layers)
            except ValueError as error:
                raise UserError(f"--feature_layers={config.feature_layers}: "
                                f"{error} ({config.bert_config_file})"
                                ) from None
        checks.check_positive(train_batch_size=config.train_batch_size,
                              eval_batch_size=config.eval_batch_size,
                              predict_batch_size=config.predict_batch_size,
                              lstm_units=self.lstm_units)
        check_window_flags(config.max_seq_length, config.doc_stride)

    def read_documents(self, split):
        """The documents of a split's file, as read (in --tag_scheme), once."""
        from data.tagging.readers import read_tagged_file

        if split not in self.documents:
            flag = _SPLITS[split]
            path = getattr(self.config, flag)
            if not path:
                raise UserError(f"--do_{split} needs --{flag}")
            checks.check_data_file(path, f"--do_{split}")
            self.documents[split] = read_tagged_file(
                path, self.config.data_format, self.scheme,
                has_tags=split != "predict")
        return self.documents[split]

    def training_documents(self, split):
        """A split's documents with tags in the training scheme (IOB2)."""
        from data.tagging.documents import convert_documents

        return convert_documents(self.read_documents(split), self.scheme)

    def _choose_label_list(self):
        from data.tagging.documents import all_tags
        from data.tagging.outputs import read_label_list
        from data.tagging.schemes import (TRAINING_SCHEME, entity_types,
                                          scheme_labels)

        import tensorflow as tf

        config = self.config
        written = os.path.join(config.output_dir or "", LABEL_LIST_FILE)
        exists = bool(config.output_dir) and tf.io.gfile.exists(written)
        if config.do_train:
            types = entity_types(all_tags(self.training_documents("train")))
            labels = scheme_labels(types, TRAINING_SCHEME)
            if exists and read_label_list(written) != labels:
                raise UserError(
                    f"{written} holds the labels of another training "
                    f"({', '.join(read_label_list(written))}), not those of "
                    f"{config.train_file} ({', '.join(labels)}); use a fresh "
                    "--output_dir")
            return labels
        if not exists:
            raise UserError(
                f"{written}: no such file. Without --do_train the labels "
                "come from the label_list.txt that training wrote in "
                "--output_dir; pass the output_dir of the training run")
        return read_label_list(written)

    def _make_features(self, split):
        from data.tagging.features import convert_documents_to_features

        config = self.config
        documents = self.training_documents(split)
        features = convert_documents_to_features(
            documents, self.tokenizer, self.label_list, config.max_seq_length,
            config.doc_stride)
        logging.info("%s: %d documents, %d words, %d windows.",
                     getattr(config, _SPLITS[split]), len(documents),
                     sum(d.num_words for d in documents), len(features))
        self.features[split] = features

    def num_train_steps(self):
        """int(windows / train_batch_size * num_train_epochs): windows are
        the training examples (a long document gives several)."""
        return self.original_train_steps(len(self.features["train"]))

    def check_inputs(self):
        from data.tokenization import full_tokenizer

        config = self.config
        full_tokenizer.validate_case_matches_checkpoint(config.do_lower_case,
                                                        config.init_checkpoint)
        modes.check_some_requested(config, ("train", "eval", "predict"))
        self._check_choices()
        self.tokenizer = self.load_tokenizer()
        wanted = requested(config, self.modes)
        for mode in wanted:
            self.read_documents(mode.name)
        self.label_list = self._choose_label_list()
        # Features now: a tag outside the label list is found before any
        # file is written (the message names file and line).
        for mode in wanted:
            self._make_features(mode.name)
        if config.do_train:
            checks.check_train_steps(self.num_train_steps(),
                                     len(self.features["train"]),
                                     config.train_file, config)

    # -- data -------------------------------------------------------------------

    def _windows(self, split, batch_size):
        """The split's windows, padded with empty ones to full batches on
        TPU; returns (windows, number of real windows)."""
        from modeling.training import runtime

        windows = list(self.features[split])
        num_actual = len(windows)
        if runtime.is_tpu_strategy(self.strategy):
            while len(windows) % batch_size:
                windows.append(_padding_window(self.config.max_seq_length))
        return windows, num_actual

    def _record_dataset(self, windows, folder, split, is_training, batch_size):
        from data.tagging.records import tagging_dataset, write_tagging_records

        path = os.path.join(folder, f"{split}.tf_record")
        write_tagging_records(windows, path)
        return tagging_dataset(path, self.config.max_seq_length, is_training,
                               batch_size)

    def _cached_dataset(self, windows, folder, split, is_training,
                        batch_size):
        from tasks.tagging_cache import (FeatureCache, cached_dataset,
                                         window_arrays)

        if self.feature_cache is None:
            self.feature_cache = FeatureCache(
                self.model, max(self.config.eval_batch_size,
                                self.config.predict_batch_size,
                                self.config.train_batch_size))
        arrays = window_arrays(windows)
        path = self.feature_cache.ensure(folder, split, arrays)
        return cached_dataset(path, arrays, self.model.feature_width,
                              is_training, batch_size)

    def _dataset(self, windows, folder, split, is_training, batch_size):
        """(features with label_weights, label_ids) batches of `windows`."""
        if self.feature_based:
            return self._cached_dataset(windows, folder, split, is_training,
                                        batch_size)
        return self._record_dataset(windows, folder, split, is_training,
                                    batch_size)

    def window_logits(self, split, batch_size):
        """Logits of every window of a split, in window order.

        Returns:
            float32 [num_windows, max_seq_length, num_labels].

        Raises:
            RuntimeError: the model returned another number of rows.
        """
        windows, num_actual = self._windows(split, batch_size)
        with self.worker_folder() as folder:
            dataset = self._dataset(windows, folder, split, False, batch_size)
            logging.info("***** Running %s on %d windows (%d padding), batch "
                         "size %d *****", split, len(windows),
                         len(windows) - num_actual, batch_size)
            logits = np.asarray(self.predict_outputs(
                dataset.map(lambda x, y: x)), np.float32)
        if len(logits) != len(windows):
            raise RuntimeError(f"Got {len(logits)} predictions for "
                               f"{len(windows)} windows.")
        return logits[:num_actual]

    def _tags_in_file_scheme(self, split, logits):
        from data.tagging.decoding import predicted_tags
        from data.tagging.schemes import TRAINING_SCHEME, convert_tags

        documents = self.read_documents(split)
        tags = predicted_tags(self.features[split], logits, documents,
                              self.label_list)
        return [[convert_tags(sentence, TRAINING_SCHEME, self.scheme)
                 for sentence in document] for document in tags]

    # -- the three modes --------------------------------------------------------

    def train(self):
        """Writes label_list.txt, featurizes train_file and trains.

        Returns:
            dict with `loss` and `global_step` (Task.train_model).
        """
        from data.tagging.outputs import write_label_list
        from modeling import training

        self.prepare()
        config = self.config
        self.make_output_dir()
        if self.is_chief:
            write_label_list(os.path.join(config.output_dir, LABEL_LIST_FILE),
                             self.label_list)
        num_train_steps = self.num_train_steps()
        num_warmup_steps = int(num_train_steps * config.warmup_proportion)
        if self.feature_based:
            # The frozen encoder's weights (the same in every checkpoint of
            # this run) must be in place before its activations are cached.
            training.restore_for_inference(self.model, self.checkpoint)
        windows = self.features["train"]
        with self.worker_folder() as folder:
            logging.info("***** Running training *****")
            logging.info("  Num windows = %d", len(windows))
            logging.info("  Batch size = %d", config.train_batch_size)
            logging.info("  Num steps = %d", num_train_steps)
            dataset = self._dataset(windows, folder, "train", True,
                                    config.train_batch_size)
            return self.train_model(dataset, num_train_steps,
                                    config.train_batch_size,
                                    config.learning_rate, num_warmup_steps)

    def evaluate(self):
        """Entity P/R/F1 (conlleval) of every eval_file word.

        Returns:
            dict: eval_precision, eval_recall, eval_f1, eval_f1_<type> for
            every type in gold or predictions, eval_accuracy (token
            accuracy), eval_loss (mean cross-entropy over scored words),
            global_step; written to eval_results.txt, the tags to
            eval_predictions.txt (in --tag_scheme).
        """
        from data.io.results import write_key_value_file
        from data.tagging.metric import conll_scores, conlleval_report
        from data.tagging.outputs import write_predictions
        from tasks.tagging_cache import window_arrays

        self.prepare()
        self.restore_weights()
        config = self.config
        logits = self.window_logits("eval", config.eval_batch_size)
        arrays = window_arrays(self.features["eval"])
        tags = self._tags_in_file_scheme("eval", logits)
        documents = self.read_documents("eval")
        scores = conll_scores(
            [s.tags for d in documents for s in d.sentences],
            [s for d in tags for s in d])
        result = {"eval_precision": scores.overall.precision,
                  "eval_recall": scores.overall.recall,
                  "eval_f1": scores.overall.f1,
                  "eval_accuracy": scores.accuracy,
                  "eval_loss": _mean_scored_loss(logits, arrays),
                  "global_step": self.global_step}
        for name, counts in scores.per_type.items():
            result[f"eval_f1_{name}"] = counts.f1
        logging.info("***** Eval results *****\n%s", conlleval_report(scores))
        if self.is_chief:
            write_predictions(os.path.join(config.output_dir,
                                           "eval_predictions.txt"),
                              documents, tags)
            write_key_value_file(
                os.path.join(config.output_dir, "eval_results.txt"), result)
        return result

    def predict(self):
        """One tag per predict_file token, written to predictions.txt.

        Returns:
            nested list [document][sentence][word] of tags (--tag_scheme).
        """
        from data.tagging.outputs import write_predictions

        self.prepare()
        self.restore_weights()
        config = self.config
        logits = self.window_logits("predict", config.predict_batch_size)
        tags = self._tags_in_file_scheme("predict", logits)
        if self.is_chief:
            path = os.path.join(config.output_dir, "predictions.txt")
            write_predictions(path, self.read_documents("predict"), tags)
            logging.info("Wrote %d tags to %s", sum(
                len(s) for d in tags for s in d), path)
        return tags


def _mean_scored_loss(logits, arrays):
    """Mean cross-entropy over the scored positions (label_weights 1)."""
    from keras import ops

    from modeling.models import losses

    log_probs = ops.log_softmax(ops.convert_to_tensor(logits), axis=-1)
    per_position = np.asarray(losses.per_example_log_prob_loss(
        log_probs, arrays["label_ids"]))
    weights = arrays["label_weights"]
    return float((per_position * weights).sum() / max(weights.sum(), 1.0))
