"""Raw text through any export of `export_saved_model.py`: results as
`bert_tf1.serving.predictions.Predictor` gives them (`open_export(folder).predict`).

A folder without `export_info.json`, or of format `saved_model`, is the
raw-text SavedModel; the numeric formats run through `FormatPredictor`,
tokenized and decoded in Python as docs/deploying.md ("Raw text on each
runtime") says.
"""
import contextlib
import os

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.text_files import read_json
from bert_tf1.data.squad.examples import SquadExample, split_context
from bert_tf1.data.squad.features import convert_examples_to_features
from bert_tf1.data.tagging.decoding import predicted_label_ids
from bert_tf1.data.tagging.documents import Document, Sentence, Word
from bert_tf1.data.tagging.features import convert_documents_to_features
from bert_tf1.data.tagging.schemes import IOB2, entity_spans, render_tags
from bert_tf1.data.multiple_choice.examples import MultipleChoiceExample
from bert_tf1.data.multiple_choice.features import convert_example_to_features
from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer
from bert_tf1.data.tokenization.in_graph_words import InGraphWordSplitter
from bert_tf1.data.tokenization.lower_case_record import read_lower_case
from bert_tf1.data.tokenization.packing import pack_tokens
from bert_tf1.serving import formats, numeric
from bert_tf1.serving.formats import FORMATS, INFO_FILE
from bert_tf1.serving.entity_spans import iob2_tables, label_tables
from bert_tf1.serving.predictions import Predictor, load_export
from bert_tf1.serving.squad_span import best_answers

FEATURES = ("input_ids", "input_mask", "segment_ids")


def _read_info(folder):
    """The folder's export_info.json (dict), or None without one.

    Raises:
        UserError: not a JSON object with a known `format`.
    """
    path = os.path.join(folder, INFO_FILE)
    if not os.path.isfile(path):
        return None
    info = read_json(path, expected=f"the {INFO_FILE} of an export")
    if not isinstance(info, dict) or info.get("format") not in FORMATS:
        raise UserError(f"{path}: expected the export_info.json of "
                        f"export_saved_model.py, its format one of "
                        f"{', '.join(FORMATS)}.")
    return info


def _model_dir(folder):
    """`folder`, or its newest TF Serving version folder (`N/`)."""
    versions = [name for name in os.listdir(folder) if name.isdigit()
                and os.path.isfile(os.path.join(folder, name,
                                                "saved_model.pb"))]
    if os.path.isfile(os.path.join(folder, "saved_model.pb")) or not versions:
        return folder
    return os.path.join(folder, max(versions, key=int))


def open_export(export_dir, model_type=None):
    """A Predictor of the export in `export_dir` (any format above).

    Raises:
        UserError: no export there (names the format folders it holds, if
            any), one of another model type than `model_type`, a runtime
            of the [deploy] extra not installed, a model file missing.
    """
    export_dir = os.fspath(export_dir)
    info = _read_info(export_dir) if os.path.isdir(export_dir) else None
    if info is None and not os.path.isfile(
            os.path.join(export_dir, "saved_model.pb")):
        inside = sorted(name for name in FORMATS if os.path.isfile(
            os.path.join(export_dir, name, INFO_FILE)))
        hint = (f"; it holds the format folders {', '.join(inside)}: give "
                "one of them" if inside else "")
        raise UserError(f"{export_dir} is not an export of "
                        "export_saved_model.py (no saved_model.pb or "
                        f"{INFO_FILE} there){hint}.")
    if info is None or info["format"] == "saved_model":
        served = load_export(_model_dir(export_dir))
        predictor = Predictor.for_served(served, export_dir, model_type)
        predictor.served = served   # the signatures hold it weakly
        return predictor
    found = info.get("model_type")
    if model_type and model_type != found:
        raise UserError(f"{export_dir} serves a {found} model, not "
                        f"--model_type={model_type}.")
    name = info["format"]
    if name == "numeric":
        return FormatPredictor(info, export_dir,
                               numeric.Runner(_model_dir(export_dir)))
    formats.require(name, where=f"{export_dir} (format {name})")
    module = formats.converter(name)
    for file in module.FILES:
        if not os.path.isfile(os.path.join(export_dir, file)):
            raise UserError(f"{export_dir}: no {file}; a {name} export "
                            f"holds {', '.join(module.FILES)}.")
    return FormatPredictor(info, export_dir, module.Runner(export_dir))


@contextlib.contextmanager
def _features_unlogged():
    """The scripts' feature code logs its first examples at INFO."""
    verbosity = logging.get_verbosity()
    logging.set_verbosity(logging.WARNING)
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)


class FormatPredictor(Predictor):
    """A Predictor over a numeric runtime (module docstring).

    Args:
        info: the folder's export_info.json; folder: its vocab.txt and
            tokenizer_config.json; run: called with int32 numpy
            `input_ids`, `input_mask`, `segment_ids` by name, gives numpy
            outputs by the numeric signature's names (`bert_tf1.serving.numeric`).
    """

    def __init__(self, info, folder, run):
        super().__init__(info["model_type"], None, info.get("labels"))
        self.info, self.run = info, run
        lower_case = read_lower_case(folder)
        self.lower_case = (info["do_lower_case"] if lower_case is None
                           else lower_case)
        self.tokenizer = FullTokenizer(os.path.join(folder, "vocab.txt"),
                                       self.lower_case)
        self.max_seq_length = int(info["max_seq_length"])
        if self.model_type == "tagger":
            self.words = InGraphWordSplitter(self.lower_case)

    def _call(self, features):
        """The runtime's numpy outputs for a list of feature objects with
        `FEATURES` attributes (int lists)."""
        return self.run(**{name: np.array([getattr(f, name) for f in features],
                                          np.int32) for name in FEATURES})

    def _run(self, group, rows):
        if self.model_type == "squad":
            return self._squad(rows)
        if self.model_type == "tagger":
            return self._tagger(rows)
        tokenize, length = self.tokenizer.tokenize, self.max_seq_length
        if self.model_type == "multiple_choice":
            return self._choices(self._call([convert_example_to_features(
                MultipleChoiceExample(str(index), row[0], list(row[1:])),
                length, self.tokenizer) for index, row in enumerate(rows)]))
        out = self._call([pack_tokens(
            tokenize(row[0]), tokenize(row[1]) if len(row) > 1 else None,
            length, self.tokenizer) for row in rows])
        if "label_id" in out:
            out["label"] = [self.label_names[i] for i in out["label_id"]]
        return self._classifications(out)

    def _squad(self, rows):
        info, features = self.info, []
        examples = [SquadExample(str(index), question, split_context(context)[0])
                    for index, (question, context) in enumerate(rows)]
        with _features_unlogged():
            convert_examples_to_features(
                examples, self.tokenizer, self.max_seq_length,
                # Any stride: the raw-text graph reads the first window only.
                self.max_seq_length, info["max_query_length"], False,
                features.append)
        first = {}   # the first window, as the raw-text graph reads
        for feature in features:
            first.setdefault(feature.example_index, feature)
        results = [{"answer": "", "score": None}] * len(rows)  # no context
        if first:
            windows = [first[index] for index in sorted(first)]
            packed = {name: tf.constant([getattr(f, name) for f in windows])
                      for name in FEATURES}
            inverse = self.tokenizer.inv_vocab
            out = best_answers(
                self._call(windows), packed,
                tf.constant([inverse.get(i, "") for i in range(max(inverse)
                                                               + 1)]),
                info["max_answer_length"], info["n_best_size"])
            for index, result in zip(sorted(first), self._answers(
                    {key: value.numpy() for key, value in out.items()})):
                results[index] = result
        return results

    def _tagger(self, rows):
        texts = [row[0] for row in rows]
        split = {key: value.to_list() for key, value in self.words(
            tf.constant(texts)).items()}
        documents = [Document(tuple(
            [Sentence(tuple(Word(word.decode("utf-8"), None, 0)
                            for word in words))] if words else []), "<text>")
            for words in split["words"]]
        labels = self.label_names
        with _features_unlogged():
            features = convert_documents_to_features(
                documents, self.tokenizer, labels, self.max_seq_length,
                self.info["doc_stride"])
        logits = (self._call(features)["logits"] if features else
                  np.zeros((0, self.max_seq_length, len(labels))))
        word_ids = predicted_label_ids(features, logits, documents)
        iob2 = iob2_tables(labels, label_tables(labels)[2]) is not None
        results = []
        for row, text in enumerate(texts):
            tags = [labels[i] for i in (word_ids[row] or [[]])[0]]
            spans = entity_spans(tags)
            starts, ends = split["start"][row], split["end"][row]
            results.append({
                "words": [word.decode("utf-8") for word in split["words"][row]],
                "tags": render_tags(spans, len(tags), IOB2) if iob2 else tags,
                "entities": [{"start": starts[span.start],
                              "end": ends[span.end - 1], "type": span.type,
                              "text": text[starts[span.start]:
                                           ends[span.end - 1]]}
                             for span in spans]})
        return results
