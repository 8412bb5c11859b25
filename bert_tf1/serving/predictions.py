"""Calling a served model (an export, or the module built in memory) on rows
of raw text: JSON-ready dicts out, batched.

    from bert_tf1.serving.predictions import open_export
    predictor = open_export("export/mrpc")   # any format of the export
    for result in predictor.predict([("text a", "text b"), ("text",)]):
        print(result)   # {"label": "1", "probabilities": {"0": .., "1": ..}}

Each model type takes one tuple of strings per example and gives:
  * classifier: (text,) or (text_a, text_b) -> `label`, `probabilities`
    ({label: p}, or a list without label names) or, regression, `score`;
  * squad: (question, context) -> `answer`, `score` (None: no valid span);
  * tagger: (text,) -> `words`, `tags`, `entities` (`start`, `end` code
    point offsets, `type`, `text`);
  * multiple_choice: (context, ending_1, ..., ending_n) -> `choice`,
    `probabilities`.

`open_export` reads the raw-text SavedModel (`load_export`, `Predictor`) or
a numeric format (`FormatPredictor`: tokenized and decoded in Python,
docs/deploying.md, "Raw text on each runtime").
"""
import contextlib
import math
import os

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.text_files import read_json
from bert_tf1.data.multiple_choice.examples import MultipleChoiceExample
from bert_tf1.data.multiple_choice.features import convert_example_to_features
from bert_tf1.data.squad.examples import SquadExample, split_context
from bert_tf1.data.squad.features import convert_examples_to_features
from bert_tf1.data.tagging.decoding import predicted_label_ids
from bert_tf1.data.tagging.documents import Document, Sentence, Word
from bert_tf1.data.tagging.features import convert_documents_to_features
from bert_tf1.data.tagging.schemes import IOB2, entity_spans, render_tags
from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer
from bert_tf1.data.tokenization.in_graph_words import InGraphWordSplitter
from bert_tf1.data.tokenization.lower_case_record import read_lower_case
from bert_tf1.data.tokenization.packing import pack_tokens
from bert_tf1.serving import formats, numeric
from bert_tf1.serving.entity_spans import iob2_tables, label_tables
from bert_tf1.serving.formats import FORMATS, INFO_FILE
from bert_tf1.serving.squad import best_answers

__all__ = ["MODEL_TYPE_OF_SIGNATURE", "load_export", "model_type_of",
           "Predictor", "open_export", "FormatPredictor"]

# The signature that identifies each model type's export.
MODEL_TYPE_OF_SIGNATURE = {"classify_text": "classifier",
                           "squad_answer": "squad", "tag_text": "tagger",
                           "multiple_choice": "multiple_choice",
                           "encode_text": "encoder"}


def load_export(export_dir):
    """The SavedModel at `export_dir`, with the TF Text ops registered.

    Raises:
        UserError: nothing loadable there (names the directory).
    """
    import tensorflow_text  # noqa: F401  registers the tokenizer's ops

    if not tf.io.gfile.exists(f"{export_dir}/saved_model.pb"):
        raise UserError(f"No SavedModel in {export_dir} (expected the "
                        "--export_dir of export_saved_model.py).")
    try:
        return tf.saved_model.load(str(export_dir))
    except (tf.errors.OpError, ValueError, OSError) as error:
        raise UserError(f"Cannot load the SavedModel in {export_dir}: "
                        f"{str(error).splitlines()[0]}") from None


def model_type_of(signature_names, where):
    """The model type an export serves, from its signature names.

    Raises:
        UserError: none of the known signatures (names `where`).
    """
    for name, model_type in MODEL_TYPE_OF_SIGNATURE.items():
        if name in signature_names:
            return model_type
    raise UserError(f"{where} has none of the signatures of "
                    f"export_saved_model.py ({', '.join(MODEL_TYPE_OF_SIGNATURE)}"
                    f"); found {', '.join(sorted(signature_names)) or 'none'}.")


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _float(value):
    value = float(value)
    return value if math.isfinite(value) else None


class Predictor:
    """Runs one model type's `signatures` (name -> callable taking tensors
    by keyword) on rows of strings, in batches; `label_names`: the
    classifier's labels, or None.

    Raises:
        UserError: an encoder (nothing to predict) or an unknown type.
    """

    def __init__(self, model_type, signatures, label_names=None):
        if model_type == "encoder":
            raise UserError("An encoder export gives vectors, not "
                            "predictions; use extract_features.py for them.")
        if model_type not in ("classifier", "squad", "tagger",
                              "multiple_choice"):
            raise UserError(f"Unknown model type {model_type!r}.")
        self.model_type = model_type
        self.signatures = signatures
        self.label_names = list(label_names) if label_names else None

    @classmethod
    def for_served(cls, served, where="the export", model_type=None):
        """A Predictor for `served`, a `load_export` object or a serving
        module (`bert_tf1.serving.build_serving_module`), named `where` in errors.

        Raises:
            UserError: it serves another model type than `model_type`.
        """
        signatures = (served.signatures() if callable(served.signatures)
                      else served.signatures)
        found = model_type_of(set(signatures), where)
        if model_type and model_type != found:
            raise UserError(f"{where} serves a {found} model, not "
                            f"--model_type={model_type}.")
        names = getattr(served, "label_names", None)
        names = [_text(v) for v in names.numpy()] if names is not None else None
        return cls(found, signatures, names)

    def predict(self, rows, batch_size=32):
        """One dict per row of `rows` (tuples of str), in order (module
        docstring), `batch_size` rows per signature call."""
        groups = {}
        for index, row in enumerate(rows):
            groups.setdefault(self._group(row), []).append(index)
        results = [None] * len(rows)
        for group, indices in groups.items():
            for begin in range(0, len(indices), batch_size):
                chunk = indices[begin:begin + batch_size]
                outputs = self._run(group, [rows[i] for i in chunk])
                for index, result in zip(chunk, outputs):
                    results[index] = result
        return results

    def _group(self, row):
        """Rows of one group go through one signature together."""
        if self.model_type == "classifier":
            return len(row)          # classify_text or classify_pair
        if self.model_type == "multiple_choice":
            return len(row) - 1      # the number of endings
        return 0

    def _run(self, group, rows):
        columns = [tf.constant(list(column)) for column in zip(*rows)]
        if self.model_type == "classifier" and group == 1:
            out = self.signatures["classify_text"](text=columns[0])
        elif self.model_type == "classifier":
            out = self.signatures["classify_pair"](text_a=columns[0],
                                                   text_b=columns[1])
        elif self.model_type == "squad":
            out = self.signatures["squad_answer"](question=columns[0],
                                                  context=columns[1])
        elif self.model_type == "tagger":
            out = self.signatures["tag_text"](text=columns[0])
        else:
            out = self.signatures["multiple_choice"](
                context=columns[0], endings=tf.stack(columns[1:], axis=1))
        out = {key: value.numpy() for key, value in out.items()}
        return {"classifier": self._classifications, "squad": self._answers,
                "tagger": self._tags,
                "multiple_choice": self._choices}[self.model_type](out)

    @staticmethod
    def _answers(out):
        """Results of numpy `answer_text` (bytes), `score` [batch]."""
        return [{"answer": _text(text), "score": _float(score)}
                for text, score in zip(out["answer_text"], out["score"])]

    @staticmethod
    def _choices(out):
        """Results of numpy `choice` [batch], `probabilities` [batch, n]."""
        return [{"choice": int(choice),
                 "probabilities": [float(p) for p in probabilities]}
                for choice, probabilities in zip(out["choice"],
                                                 out["probabilities"])]

    def _classifications(self, out):
        """Results of numpy `score` [batch], or `label` [batch] (bytes or
        str) and `probabilities` [batch, num_labels]."""
        if "score" in out:
            return [{"score": float(s)} for s in out["score"]]
        results = []
        for label, probabilities in zip(out["label"], out["probabilities"]):
            values = [float(p) for p in probabilities]
            if self.label_names and len(self.label_names) == len(values):
                values = dict(zip(self.label_names, values))
            results.append({"label": _text(label), "probabilities": values})
        return results

    @staticmethod
    def _tags(values):
        """Results of tag_text's numpy outputs."""
        results = []
        for row, num_words in enumerate(values["num_words"]):
            entities = [{"start": int(values["entity_start"][row, k]),
                         "end": int(values["entity_end"][row, k]),
                         "type": _text(values["entity_type"][row, k]),
                         "text": _text(values["entity_text"][row, k])}
                        for k in range(values["num_entities"][row])]
            results.append({
                "words": [_text(w) for w in values["words"][row, :num_words]],
                "tags": [_text(t) for t in values["tag"][row, :num_words]],
                "entities": entities})
        return results


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
    """A `Predictor` (`.predict(rows)`: one dict per row, module docstring)
    of the export of export_saved_model.py in `export_dir`: a raw-text
    SavedModel (or a TF Serving folder of versions `N/`), or one
    `--format` folder (openvino, litert, onnx, numeric). `model_type`, if
    given, must be the type it serves.

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
        if self.model_type == "squad":  # Each id's token, for answer text.
            inverse = self.tokenizer.inv_vocab
            self.vocab_tokens = tf.constant(
                [inverse.get(i, "") for i in range(max(inverse) + 1)])

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
            out = best_answers(
                self._call(windows), packed, self.vocab_tokens,
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
