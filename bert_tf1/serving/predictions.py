"""Raw text in, results out: ONE rule per task, whatever runs the model (an
in-memory Keras model, the raw-text SavedModel, or the numeric, OpenVINO,
LiteRT or ONNX export of export_saved_model.py).

    from bert_tf1.serving.predictions import open_export
    predictor = open_export("export/mrpc")   # any format of an export
    for result in predictor.predict([("text a", "text b"), ("text",)]):
        print(result)   # {"label": "1", "probabilities": {"0": .., "1": ..}}

The text is tokenized here, by the scripts' own code (`FullTokenizer`, the
vocab and casing the model was exported with); the model only maps ids to
numbers (`bert_tf1.serving.runners`). Each model type takes one tuple of
strings per example and gives:
  * classifier: (text,) or (text_a, text_b) -> `label`, `probabilities`
    ({label: p}, or a list without label names) or, regression, `score`;
  * squad: (question, context) -> `answer` (the context's own text, as in
    run_squad.py's predictions.json: every `doc_stride` window, the n-best
    and final-text rules of the original's `write_predictions`), `score`
    (the best span's start + end logit; None without one);
  * tagger: (text,) -> `words` (BasicTokenizer's split), `tags` (one per
    word, run_ner.py's first-piece, max-context rule), `entities` (`type`,
    `text`, `word_start`, `word_end`: word indexes, `char_start`,
    `char_end`: code point offsets into the text; ends exclusive);
  * multiple_choice: (context, ending_1, ..., ending_n) -> `choice`,
    `probabilities`;
  * encoder: (text,) or (text_a, text_b) -> `embedding` (the pooling and L2
    normalization the model was exported with).

`answer`, `tag` and `embed` are the same rules from Python, on an
in-memory model.
"""
import math

import numpy as np
from absl import logging

from bert_tf1.data.multiple_choice.examples import MultipleChoiceExample
from bert_tf1.data.multiple_choice.features import convert_example_to_features
from bert_tf1.data.squad.examples import SquadExample, split_context
from bert_tf1.data.squad.features import convert_examples_to_features
from bert_tf1.data.squad.postprocess import RawResult, compute_predictions
from bert_tf1.data.tagging.decoding import predicted_label_ids
from bert_tf1.data.tagging.documents import Document, Sentence, Word
from bert_tf1.data.tagging.features import convert_documents_to_features
from bert_tf1.data.tagging.schemes import (IOB2, entity_spans,
                                           normalize_scheme, render_tags,
                                           split_tag)
from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer
from bert_tf1.data.tokenization.packing import pack_tokens
from bert_tf1.serving import runners
from bert_tf1.serving.formats.info import ServedSettings, open_export_folder

__all__ = ["Predictor", "open_export", "answer", "tag", "embed"]

FEATURES = ("input_ids", "input_mask", "segment_ids")


def _float(value):
    value = float(value)
    return value if math.isfinite(value) else None


def _quiet(function, *args, **kwargs):
    """Calls the scripts' feature code, which logs its first examples at
    INFO, with absl's verbosity at WARNING."""
    verbosity = logging.get_verbosity()
    logging.set_verbosity(logging.WARNING)
    try:
        return function(*args, **kwargs)
    finally:
        logging.set_verbosity(verbosity)


class Predictor:
    """One model type's rules (module docstring) over a runner.

    Args:
        settings: a `bert_tf1.serving.formats.info.ServedSettings` (model
            type, lengths, casing, labels, the SQuAD/tagger/encoder rules).
        vocab_file: the vocab the model was trained with.
        run: called with int32 numpy `input_ids`, `input_mask`,
            `segment_ids` by name ([batch, max_seq_length]; multiple
            choice [batch, num_choices, max_seq_length]), gives numpy
            outputs by the numeric signature's names
            (`bert_tf1.serving.numeric.OUTPUTS`).
    """

    def __init__(self, settings, vocab_file, run):
        self.settings = settings
        self.model_type = settings.model_type
        self.label_names = settings.labels
        self.max_seq_length = settings.max_seq_length
        self.tokenizer = FullTokenizer(vocab_file, settings.do_lower_case)
        self.run = run
        self._words = None

    def predict(self, rows, batch_size=32):
        """One result dict per row of `rows` (tuples of str), in order;
        `batch_size` windows (or choice sets) per model call."""
        rows = [tuple(row) for row in rows]
        if not rows:
            return []
        rule = {"classifier": self._classify, "encoder": self._embed,
                "multiple_choice": self._choose, "squad": self._answer,
                "tagger": self._tag}[self.model_type]
        return rule(rows, batch_size)

    # -- calling the model ------------------------------------------------

    def _outputs(self, features, batch_size):
        """Numpy outputs of feature objects (with `FEATURES` int lists),
        `batch_size` at a time, concatenated."""
        parts = []
        for begin in range(0, len(features), batch_size):
            chunk = features[begin:begin + batch_size]
            parts.append(self.run(**{name: np.array(
                [getattr(f, name) for f in chunk], np.int32)
                for name in FEATURES}))
        return {key: np.concatenate([part[key] for part in parts])
                for key in parts[0]}

    def _pack(self, row):
        tokenize = self.tokenizer.tokenize
        return pack_tokens(tokenize(row[0]),
                           tokenize(row[1]) if len(row) > 1 else None,
                           self.max_seq_length, self.tokenizer)

    # -- the rules ---------------------------------------------------------

    def _classify(self, rows, batch_size):
        return self.results_of_outputs(
            self._outputs([self._pack(row) for row in rows], batch_size))

    def results_of_outputs(self, out):
        """The results of a classifier's or encoder's numpy outputs (of
        `run` on packed rows, one result per row)."""
        if self.model_type == "encoder":
            return [{"embedding": [float(v) for v in vector]}
                    for vector in out["embedding"]]
        if "score" in out:
            return [{"score": float(score)} for score in out["score"]]
        results = []
        for label_id, probabilities in zip(out["label_id"],
                                           out["probabilities"]):
            values = [float(p) for p in probabilities]
            names = self.label_names
            if names and len(names) == len(values):
                results.append({"label": names[label_id],
                                "probabilities": dict(zip(names, values))})
            else:
                results.append({"label": str(label_id),
                                "probabilities": values})
        return results

    def _embed(self, rows, batch_size):
        return self.results_of_outputs(
            self._outputs([self._pack(row) for row in rows], batch_size))

    def _choose(self, rows, batch_size):
        results = [None] * len(rows)
        by_count = {}
        for index, row in enumerate(rows):
            by_count.setdefault(len(row), []).append(index)
        for indices in by_count.values():
            features = [convert_example_to_features(
                MultipleChoiceExample(str(i), rows[i][0], list(rows[i][1:])),
                self.max_seq_length, self.tokenizer) for i in indices]
            out = self._outputs(features, batch_size)
            for i, choice, probabilities in zip(indices, out["choice"],
                                                out["probabilities"]):
                results[i] = {"choice": int(choice), "probabilities":
                              [float(p) for p in probabilities]}
        return results

    def squad_predictions(self, rows, batch_size=32):
        """run_squad.py's (predictions, n-best lists, null odds) of
        (question, context) rows: OrderedDicts by row index (str), as
        `bert_tf1.data.squad.postprocess.compute_predictions` returns."""
        settings = self.settings
        examples = [SquadExample(qas_id=str(index), question_text=question,
                                 doc_tokens=split_context(context)[0])
                    for index, (question, context) in enumerate(rows)]
        windows = []
        _quiet(convert_examples_to_features, examples, self.tokenizer,
               self.max_seq_length, settings.doc_stride,
               settings.max_query_length, False, windows.append)
        out = self._outputs(windows, batch_size) if windows else {}
        results = [RawResult(window.unique_id, out["start_logits"][row],
                             out["end_logits"][row])
                   for row, window in enumerate(windows)]
        return compute_predictions(
            examples, windows, results, settings.n_best_size,
            settings.max_answer_length, self.tokenizer.do_lower_case,
            settings.version_2_with_negative,
            settings.null_score_diff_threshold)

    def _answer(self, rows, batch_size):
        texts, n_best, _ = self.squad_predictions(rows, batch_size)
        results = []
        for key in map(str, range(len(rows))):
            best = next((entry for entry in n_best[key] if entry["text"]),
                        None) if texts[key] else None
            score = (None if best is None else
                     _float(best["start_logit"] + best["end_logit"]))
            results.append({"answer": texts[key], "score": score})
        return results

    def _tag(self, rows, batch_size):
        split = self.split_words([row[0] for row in rows])
        results = []
        tags_of = self.word_tags([words for words, _, _ in split], batch_size)
        for (words, starts, ends), text, tags in zip(
                split, (row[0] for row in rows), tags_of):
            results.append({"words": words, "tags": tags, "entities": [
                {"type": span.type, "text": text[starts[span.start]:
                                                 ends[span.end - 1]],
                 "word_start": span.start, "word_end": span.end,
                 "char_start": starts[span.start],
                 "char_end": ends[span.end - 1]}
                for span in entity_spans(tags)]})
        return results

    def split_words(self, texts):
        """[(words, char starts, char ends)] of each text by BasicTokenizer's
        rules (the raw-text graph's `InGraphWordSplitter`)."""
        import tensorflow as tf

        from bert_tf1.data.tokenization.in_graph_words import (
            InGraphWordSplitter)

        if self._words is None:
            self._words = InGraphWordSplitter(self.settings.do_lower_case)
        split = {key: value.to_list() for key, value in self._words(
            tf.constant(list(texts))).items()}
        return [([word.decode("utf-8") for word in words], starts, ends)
                for words, starts, ends in zip(split["words"], split["start"],
                                               split["end"])]

    def word_tags(self, word_lists, batch_size=32):
        """One tag per word of each list of words: run_ner.py's windows
        (`doc_stride`), first word piece of the max-context window; the
        tags in `settings.tag_scheme` (IOB2 for labels with prefixes)."""
        labels = self.label_names
        documents = [Document((Sentence(tuple(Word(w, None, 0) for w in words)),)
                              if words else (), f"row {index}")
                     for index, words in enumerate(word_lists)]
        features = _quiet(convert_documents_to_features, documents,
                          self.tokenizer, labels, self.max_seq_length,
                          self.settings.doc_stride)
        logits = (self._outputs(features, batch_size)["logits"] if features
                  else np.zeros((0, self.max_seq_length, len(labels))))
        scheme = self.settings.tag_scheme
        if scheme is None and all(split_tag(label)[0] in ("O", "B", "I", "E",
                                                          "S")
                                  for label in labels):
            scheme = IOB2
        tags = []
        for document in predicted_label_ids(features, logits, documents):
            sentence = [labels[i] for i in (document[0] if document else [])]
            tags.append(render_tags(entity_spans(sentence), len(sentence),
                                    normalize_scheme(scheme))
                        if scheme else sentence)
        return tags


def open_export(export_dir, model_type=None):
    """The `Predictor` of an export of export_saved_model.py: its raw-text
    SavedModel (or a TF Serving folder of versions `N/`), or one `--format`
    folder (saved_model, numeric, openvino, litert, onnx). `model_type`, if
    given, must be the type it serves.

    Raises:
        UserError: no export there (names the format folders it holds, if
            any), one of another model type than `model_type`, a runtime of
            the [deploy] extra not installed, a file of the export missing,
            damaged or not fitting its `export_info.json`.
    """
    folder = open_export_folder(export_dir, model_type)
    return Predictor(folder.settings, folder.vocab_file,
                     runners.open_runner(folder))


def predictor_of_model(model, preprocessor=None, model_type=None,
                       label_list=None, **rules):
    """The `Predictor` of an in-memory task model: a `BertClassifier`,
    `BertSquad`, `BertTokenClassifier`, `BertMultipleChoice`, `BertModel`
    or `SentenceEmbedder` (or any Keras model of such a model type's
    contract: give `model_type`), its vocab, casing and length from
    `preprocessor` (default `model.preprocessor`).

    Args:
        label_list: a classifier's or tagger's labels in id order.
        **rules: `ServedSettings` fields (doc_stride, n_best_size,
            pooling, ...); an encoder's `pooling` and `l2_normalize`
            absent or None: a SentenceEmbedder's own, else "mean" and
            False (`bert_tf1.serving.modules.served_encoder`).

    Raises:
        UserError: no BertPreprocessor, a model of no known type, a
            pooling that differs from a SentenceEmbedder's own.
    """
    from bert_tf1.serving.export import model_type_of, preprocessor_of
    from bert_tf1.serving.modules import served_encoder

    preprocessor = preprocessor_of(model, preprocessor)
    model_type = model_type or model_type_of(model)
    if model_type == "encoder":
        model, rules["pooling"], rules["l2_normalize"] = served_encoder(
            model, rules.get("pooling"), rules.get("l2_normalize"))
    settings = ServedSettings(
        model_type=model_type, max_seq_length=preprocessor.sequence_length,
        do_lower_case=preprocessor.do_lower_case,
        labels=list(label_list) if label_list is not None else None, **rules)
    return Predictor(settings, preprocessor.tokenizer.vocab_file,
                     runners.model_runner(model, settings))


def answer(model, pairs, preprocessor=None, doc_stride=128,
           max_query_length=64, n_best_size=20, max_answer_length=30,
           version_2_with_negative=False, null_score_diff_threshold=0.0,
           batch_size=32):
    """run_squad.py's answers to (question, context) pairs.

    Args:
        model: a `BertSquad` (its `preprocessor`, or `preprocessor=`).
        pairs: list of (question, context) strings.
        doc_stride, max_query_length, n_best_size, max_answer_length,
            version_2_with_negative, null_score_diff_threshold: as
            run_squad.py's flags.
        batch_size: windows per model call.

    Returns:
        list of dicts, one per pair: "answer" (str, predictions.json's: ""
        for a null answer in v2, "empty" when no span fits), "n_best"
        (nbest_predictions.json's list of text, probability, start_logit,
        end_logit) and, for v2, "null_odds" (null_odds.json's score).

    Raises:
        UserError: no BertPreprocessor, or max_seq_length leaves no room
            for the context.
    """
    predictor = predictor_of_model(
        model, preprocessor, "squad", doc_stride=doc_stride,
        max_query_length=max_query_length, n_best_size=n_best_size,
        max_answer_length=max_answer_length,
        version_2_with_negative=version_2_with_negative,
        null_score_diff_threshold=null_score_diff_threshold)
    texts, n_best, null_odds = predictor.squad_predictions(pairs, batch_size)
    return [dict({"answer": texts[key], "n_best": n_best[key]},
                 **({"null_odds": null_odds[key]} if key in null_odds
                    else {}))
            for key in map(str, range(len(pairs)))]


def tag(model, sentences, label_list, preprocessor=None, doc_stride=64,
        tag_scheme="iob2", batch_size=32):
    """run_ner.py's tags of sentences, one per word, and their entities.

    Each sentence is a document of its own (as a run_ner.py file without
    document markers); a long one is read in windows of `doc_stride`.

    Args:
        model: a `BertTokenClassifier` (its `preprocessor`, or
            `preprocessor=`).
        sentences: list of str (split into words by BasicTokenizer's rules,
            as the raw-text export splits them) or of lists of words (used
            as they are).
        label_list: the tags in id order (run_ner.py's label_list.txt).
        doc_stride: as run_ner.py's flag, in word pieces.
        tag_scheme: the scheme of the tags returned (`--tag_scheme`).

    Returns:
        list of dicts, one per sentence: "words" (list of str), "tags"
        (one per word, predictions.txt's), "entities" (dicts "type",
        "text", "word_start", "word_end" (word indexes, end exclusive) and,
        for a str sentence, "char_start", "char_end" (code point offsets,
        end exclusive); for a list of words "text" is the words joined by
        spaces), by conlleval's chunk rules.

    Raises:
        UserError: no BertPreprocessor, or a bad doc_stride.
        ValueError: label_list does not fit the model's outputs.
    """
    if len(label_list) != model.num_labels:
        raise ValueError(f"{len(label_list)} labels for a model with "
                         f"{model.num_labels} outputs")
    predictor = predictor_of_model(model, preprocessor, "tagger", label_list,
                                   doc_stride=doc_stride,
                                   tag_scheme=tag_scheme)
    texts = [s for s in sentences if isinstance(s, str)]
    split = iter(predictor.split_words(texts) if texts else [])
    word_lists = [next(split) if isinstance(s, str) else (list(s), None, None)
                  for s in sentences]
    tags = predictor.word_tags([words for words, _, _ in word_lists],
                               batch_size)
    results = []
    for (words, starts, ends), sentence, tags_of in zip(word_lists, sentences,
                                                        tags):
        entities = []
        for span in entity_spans(tags_of):
            entity = {"type": span.type, "word_start": span.start,
                      "word_end": span.end}
            if starts is None:
                entity["text"] = " ".join(words[span.start:span.end])
            else:
                entity.update(char_start=starts[span.start],
                              char_end=ends[span.end - 1],
                              text=sentence[starts[span.start]:
                                            ends[span.end - 1]])
            entities.append(entity)
        results.append({"words": words, "tags": tags_of,
                        "entities": entities})
    return results


def embed(model, texts, preprocessor=None, pooling=None, l2_normalize=None,
          batch_size=32):
    """Sentence embeddings of texts (str, or (text_a, text_b) tuples) by an
    encoder (`BertModel`, or a `SentenceEmbedder`): float32 numpy
    [len(texts), hidden_size], pooled as the encoder export's `embedding`
    (`bert_tf1.modeling.pooling`; `pooling` and `l2_normalize` None: a
    SentenceEmbedder's own, else "mean" and False).

    Raises:
        UserError: no BertPreprocessor, or a pooling that differs from a
            SentenceEmbedder's own."""
    predictor = predictor_of_model(model, preprocessor, "encoder",
                                   pooling=pooling, l2_normalize=l2_normalize)
    rows = [(text,) if isinstance(text, str) else tuple(text)
            for text in texts]
    return np.array([result["embedding"] for result in
                     predictor.predict(rows, batch_size)], np.float32)
