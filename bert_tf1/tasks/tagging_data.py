"""run_ner.py's data (`TaggingData`): its flags checked, the documents of
each mode's file read once, their windows, the tag scheme, the label list,
and the tags and scores of the model's outputs.
"""
import numpy as np
from absl import logging
from keras import ops

from bert_tf1.data.tagging.decoding import predicted_tags
from bert_tf1.data.tagging.documents import all_tags, convert_documents
from bert_tf1.data.tagging.features import (check_window_flags,
                                            convert_documents_to_features)
from bert_tf1.data.tagging.metric import conll_scores
from bert_tf1.data.tagging.outputs import choose_label_list
from bert_tf1.data.tagging.readers import DATA_FORMATS, read_tagged_file
from bert_tf1.data.tagging.schemes import (TRAINING_SCHEME, entity_types,
                                           normalize_scheme, scheme_labels)
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.feature_tagger import check_feature_layers
from bert_tf1.tasks import checks
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.tagging_cache import window_arrays


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
