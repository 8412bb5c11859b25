"""SQuAD post-processing: logits -> n-best answers, predictions, null odds.

Source: run_squad.py `RawResult`, `write_predictions`, `get_final_text`,
`_get_best_indexes`, `_compute_softmax` (own code: the n-best rules, tie
order and text projection exist in no library). Where the original crashes
(a v2 question with no non-null candidate, or without any feature) the
prediction is "" with null odds `NO_ANSWER_NULL_ODDS` (v1: "empty").
"""
import collections
import json
import math

from absl import logging
import numpy as np

from bert_tf1.data.tokenization import full_tokenizer as tokenization
from bert_tf1.data.io.results import check_finite_rows, write_text_atomically

# Null odds of a question without a non-null candidate: above any practical
# threshold, and finite (standard JSON).
NO_ANSWER_NULL_ODDS = 1e9

RawResult = collections.namedtuple(
    "RawResult", ["unique_id", "start_logits", "end_logits"])

_PrelimPrediction = collections.namedtuple(
    "PrelimPrediction",
    ["feature_index", "start_index", "end_index", "start_logit", "end_logit"])

_NbestPrediction = collections.namedtuple(
    "NbestPrediction", ["text", "start_logit", "end_logit"])


def get_best_indexes(logits, n_best_size):
    """Indexes of the `n_best_size` largest logits, best first (ties in
    index order).

    Source: run_squad.py `_get_best_indexes`.
    """
    order = sorted(range(len(logits)), key=lambda i: logits[i], reverse=True)
    return order[:n_best_size]


def compute_softmax(scores):
    """Softmax of a list of floats in float64 (list of floats; [] for []).

    Source: run_squad.py `_compute_softmax`.
    """
    if not scores:
        return []
    max_score = max(scores)
    exp_scores = [math.exp(score - max_score) for score in scores]
    total_sum = 0.0
    for value in exp_scores:
        total_sum += value
    return [value / total_sum for value in exp_scores]


def _no_space_index(text, index):
    """Index of text[index] in text without " " (None for a space): the
    original's `_strip_spaces` map, by counting."""
    if index < 0 or index >= len(text) or text[index] == " ":
        return None
    return index - text.count(" ", 0, index)


def get_final_text(pred_text, orig_text, do_lower_case,
                   verbose_logging=False):
    """Projects a normalized predicted text back onto the original words.

    ("steve smith" in "Steve Smith's" gives "Steve Smith"; on failure the
    whole `orig_text`, the space-joined context words).

    Source: run_squad.py `get_final_text`.
    """
    tokenizer = tokenization.BasicTokenizer(do_lower_case=do_lower_case)
    tok_text = " ".join(tokenizer.tokenize(orig_text))
    return _project_text(pred_text, orig_text, tok_text, verbose_logging)


def _project_text(pred_text, orig_text, tok_text, verbose_logging):
    """get_final_text given tok_text, the basic tokens of orig_text."""
    start_position = tok_text.find(pred_text)
    if start_position == -1:
        if verbose_logging:
            logging.info("Unable to find text: '%s' in '%s'",
                         pred_text, orig_text)
        return orig_text
    end_position = start_position + len(pred_text) - 1

    orig_positions = [i for i, char in enumerate(orig_text) if char != " "]
    if len(orig_positions) != len(tok_text) - tok_text.count(" "):
        if verbose_logging:
            logging.info("Length not equal after stripping spaces: "
                         "'%s' vs '%s'", orig_text.replace(" ", ""),
                         tok_text.replace(" ", ""))
        return orig_text

    ns_start = _no_space_index(tok_text, start_position)
    ns_end = _no_space_index(tok_text, end_position)
    if ns_start is None or ns_end is None:
        if verbose_logging:
            logging.info("Couldn't map %s position",
                         "start" if ns_start is None else "end")
        return orig_text
    return orig_text[orig_positions[ns_start]:(orig_positions[ns_end] + 1)]


class _BasicTokenCache(object):
    """Basic tokens of each context word, computed once per paragraph
    (BasicTokenizer works word by word, so a span's tokens are its words')."""

    def __init__(self, do_lower_case):
        self._tokenizer = tokenization.BasicTokenizer(
            do_lower_case=do_lower_case)
        self._doc_tokens = None
        self._word_tokens = {}

    def tok_text(self, doc_tokens, start, end):
        if doc_tokens is not self._doc_tokens:
            self._doc_tokens = doc_tokens
            self._word_tokens = {}
        pieces = []
        for index in range(start, end + 1):
            tokens = self._word_tokens.get(index)
            if tokens is None:
                tokens = self._tokenizer.tokenize(doc_tokens[index])
                self._word_tokens[index] = tokens
            pieces.extend(tokens)
        return " ".join(pieces)


def _as_floats(logits):
    """Logits as Python floats (widened as the original's `float(x)`)."""
    return np.asarray(logits).reshape(-1).tolist()


def _prediction_text(feature, example, pred, token_cache, verbose_logging):
    """The answer text of a non-null candidate (original's n-best loop)."""
    tok_tokens = feature.tokens[pred.start_index:(pred.end_index + 1)]
    orig_doc_start = feature.token_to_orig_map[pred.start_index]
    orig_doc_end = feature.token_to_orig_map[pred.end_index]
    orig_tokens = example.doc_tokens[orig_doc_start:(orig_doc_end + 1)]
    # Undo the WordPiece split, then normalize whitespace.
    tok_text = " ".join(tok_tokens)
    tok_text = tok_text.replace(" ##", "")
    tok_text = tok_text.replace("##", "")
    tok_text = " ".join(tok_text.strip().split())
    orig_text = " ".join(orig_tokens)
    return _project_text(
        tok_text, orig_text,
        token_cache.tok_text(example.doc_tokens, orig_doc_start,
                             orig_doc_end),
        verbose_logging)


def _example_predictions(example, features, unique_id_to_result, n_best_size,
                         max_answer_length, token_cache,
                         version_2_with_negative, verbose_logging):
    """Returns (nbest list of OrderedDict, score_null, best_non_null entry)."""
    prelim_predictions = []
    # Lowest null score (start + end logit at [CLS]) over the windows.
    score_null = 1000000
    min_null_feature_index = 0
    null_start_logit = 0
    null_end_logit = 0
    for feature_index, feature in enumerate(features):
        result = unique_id_to_result[feature.unique_id]
        start_logits = result.start_logits
        end_logits = result.end_logits
        start_indexes = get_best_indexes(start_logits, n_best_size)
        end_indexes = get_best_indexes(end_logits, n_best_size)
        if version_2_with_negative:
            feature_null_score = start_logits[0] + end_logits[0]
            if feature_null_score < score_null:
                score_null = feature_null_score
                min_null_feature_index = feature_index
                null_start_logit = start_logits[0]
                null_end_logit = end_logits[0]
        num_tokens = len(feature.tokens)
        for start_index in start_indexes:
            for end_index in end_indexes:
                # Drop spans in the query, padding or outside max context.
                if (start_index >= num_tokens or end_index >= num_tokens
                        or start_index not in feature.token_to_orig_map
                        or end_index not in feature.token_to_orig_map
                        or not feature.token_is_max_context.get(start_index,
                                                                 False)
                        or end_index < start_index
                        or end_index - start_index + 1 > max_answer_length):
                    continue
                prelim_predictions.append(_PrelimPrediction(
                    feature_index=feature_index,
                    start_index=start_index,
                    end_index=end_index,
                    start_logit=start_logits[start_index],
                    end_logit=end_logits[end_index]))

    if version_2_with_negative:
        prelim_predictions.append(_PrelimPrediction(
            feature_index=min_null_feature_index,
            start_index=0,
            end_index=0,
            start_logit=null_start_logit,
            end_logit=null_end_logit))
    prelim_predictions = sorted(
        prelim_predictions, key=lambda x: x.start_logit + x.end_logit,
        reverse=True)

    seen_predictions = set()
    nbest = []
    for pred in prelim_predictions:
        if len(nbest) >= n_best_size:
            break
        if pred.start_index > 0:
            final_text = _prediction_text(
                features[pred.feature_index], example, pred, token_cache,
                verbose_logging)
            if final_text in seen_predictions:
                continue
        else:
            final_text = ""
        seen_predictions.add(final_text)
        nbest.append(_NbestPrediction(
            text=final_text, start_logit=pred.start_logit,
            end_logit=pred.end_logit))

    if version_2_with_negative and "" not in seen_predictions:
        nbest.append(_NbestPrediction(
            text="", start_logit=null_start_logit, end_logit=null_end_logit))
    # No valid span at all: the original's placeholder answer.
    if not nbest:
        nbest.append(_NbestPrediction(
            text="empty", start_logit=0.0, end_logit=0.0))

    best_non_null_entry = next((entry for entry in nbest if entry.text), None)
    probs = compute_softmax([entry.start_logit + entry.end_logit
                             for entry in nbest])
    nbest_json = [collections.OrderedDict([
        ("text", entry.text), ("probability", prob),
        ("start_logit", entry.start_logit), ("end_logit", entry.end_logit)])
        for entry, prob in zip(nbest, probs)]
    return nbest_json, score_null, best_non_null_entry


def compute_predictions(all_examples, all_features, all_results, n_best_size,
                        max_answer_length, do_lower_case,
                        version_2_with_negative=False,
                        null_score_diff_threshold=0.0,
                        verbose_logging=False):
    """Computes predictions, n-best lists and null odds without writing.

    Args:
      all_examples: list of SquadExample (prediction mode).
      all_features: list of InputFeatures from convert_examples_to_features.
      all_results: iterable of objects with unique_id, start_logits,
        end_logits (length max_seq_length).
      n_best_size, max_answer_length: ints.
      do_lower_case: bool, as used for tokenization.
      version_2_with_negative: bool.
      null_score_diff_threshold: float.
      verbose_logging: bool, log failed text projections.

    Returns:
      (all_predictions, all_nbest_json, scores_diff_json): OrderedDicts by
      qas_id: answer text; n-best OrderedDict(text, probability,
      start_logit, end_logit) lists; (v2 only) null minus best non-null score.

    Raises:
      ValueError: a feature has no result (every feature must be predicted).

    Source: run_squad.py `write_predictions`, without the writing.
    """
    example_index_to_features = collections.defaultdict(list)
    for feature in all_features:
        example_index_to_features[feature.example_index].append(feature)

    unique_id_to_result = {}
    for result in all_results:
        unique_id_to_result[int(result.unique_id)] = RawResult(
            unique_id=int(result.unique_id),
            start_logits=_as_floats(result.start_logits),
            end_logits=_as_floats(result.end_logits))
    for feature in all_features:
        if feature.unique_id not in unique_id_to_result:
            raise ValueError(
                "No model output for unique_id %d (question %r); every "
                "feature must be predicted." % (
                    feature.unique_id,
                    all_examples[feature.example_index].qas_id))

    all_predictions = collections.OrderedDict()
    all_nbest_json = collections.OrderedDict()
    scores_diff_json = collections.OrderedDict()
    token_cache = _BasicTokenCache(do_lower_case)
    for example_index, example in enumerate(all_examples):
        features = example_index_to_features[example_index]
        nbest_json, score_null, best_non_null_entry = _example_predictions(
            example, features, unique_id_to_result, n_best_size,
            max_answer_length, token_cache, version_2_with_negative,
            verbose_logging)
        if not version_2_with_negative:
            all_predictions[example.qas_id] = nbest_json[0]["text"]
        elif best_non_null_entry is None:
            # The original crashes here; no candidate answer means no answer.
            scores_diff_json[example.qas_id] = NO_ANSWER_NULL_ODDS
            all_predictions[example.qas_id] = ""
        else:
            score_diff = (score_null - best_non_null_entry.start_logit
                          - best_non_null_entry.end_logit)
            scores_diff_json[example.qas_id] = score_diff
            if score_diff > null_score_diff_threshold:
                all_predictions[example.qas_id] = ""
            else:
                all_predictions[example.qas_id] = best_non_null_entry.text
        all_nbest_json[example.qas_id] = nbest_json
    return all_predictions, all_nbest_json, scores_diff_json


def raw_results(features, outputs, path):
    """The RawResult of each window of `features` (in order) from the
    model's `outputs` (start_logits, end_logits [num_windows, seq]; None:
    no window), for `compute_predictions`.

    Raises:
        NonFiniteResultError: a NaN/Inf logit (naming `path`, not written).
    """
    if outputs is None:
        return []
    start = np.asarray(outputs["start_logits"], np.float32)
    end = np.asarray(outputs["end_logits"], np.float32)
    check_finite_rows(path, np.concatenate([start, end], axis=-1),
                      what="SQuAD window")
    return [RawResult(unique_id=f.unique_id, start_logits=s, end_logits=e)
            for f, s, e in zip(features, start, end)]


def write_json_atomic(obj, path):
    """Writes `json.dumps(obj, indent=4) + "\\n"` (the original's) atomically."""
    write_text_atomically(path, json.dumps(obj, indent=4) + "\n")


def write_predictions(all_examples, all_features, all_results, n_best_size,
                      max_answer_length, do_lower_case,
                      output_prediction_file, output_nbest_file,
                      output_null_log_odds_file,
                      version_2_with_negative=False,
                      null_score_diff_threshold=0.0, verbose_logging=False):
    """`compute_predictions`, written atomically as predictions.json,
    nbest_predictions.json and (v2 only) null_odds.json at the paths given;
    returns its result.

    Source: run_squad.py `write_predictions` (its FLAGS became arguments).
    """
    results = compute_predictions(
        all_examples, all_features, all_results, n_best_size,
        max_answer_length, do_lower_case, version_2_with_negative,
        null_score_diff_threshold, verbose_logging)
    for result, path in zip(results, (
            output_prediction_file, output_nbest_file,
            output_null_log_odds_file if version_2_with_negative else None)):
        if path is not None:
            write_json_atomic(result, path)
    return results
