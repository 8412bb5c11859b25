"""The official SQuAD v1.1 / v2.0 metrics, as functions and a command.

Source: the official `evaluate-v2.0.py` (own code: no dependency has it);
`python -m bert_tf1.data.squad.evaluate DATA_JSON PREDICTIONS_JSON [-n null_odds.json]
[-t 1.0] [-o eval.json]` (docs/squad.md). Where the official script crashes,
a question without a prediction scores 0 and is reported on stderr, and bad
files or null odds raise a UserError naming the file or question.
"""
import argparse
import collections
import json
import re
import string
import sys

from absl import logging

from bert_tf1.data.io.errors import UserError, cut_list
from bert_tf1.data.io.results import write_text_atomically
from bert_tf1.data.io.text_files import read_json
from bert_tf1.data.squad.examples import load_squad_json

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def split_by_gold_answers(dataset):
    """(the dataset cut to the questions with an `answers` list, the ids of
    those without one)."""
    graded, ungraded = [], []
    for article in dataset:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            qas = [qa for qa in paragraph["qas"]
                   if isinstance(qa.get("answers"), list)]
            ungraded += [qa.get("id") for qa in paragraph["qas"]
                         if not isinstance(qa.get("answers"), list)]
            if qas:
                paragraphs.append(dict(paragraph, qas=qas))
        if paragraphs:
            graded.append(dict(article, paragraphs=paragraphs))
    return graded, ungraded


def evaluate_graded(dataset, predictions, null_odds=None, source="the data"):
    """The official metrics over the questions that have gold answers.

    Args:
        dataset: the SQuAD `data` list (articles).
        predictions: {qas_id: answer text}.
        null_odds: {qas_id: odds} (SQuAD 2.0), or None.
        source: the file named in the log lines.

    Returns:
        dict of `evaluate`, or None when no question has an `answers` list
        (a test file). Questions without one are left out, with a warning.
    """
    graded, ungraded = split_by_gold_answers(dataset)
    if not graded:
        logging.info("%s has no gold answers: no eval_results.json.", source)
        return None
    if ungraded:
        logging.warning(
            "%s: %d question(s) have no \"answers\" list and are left out "
            "of eval_results.json (%s); the other questions are scored.",
            source, len(ungraded), cut_list(ungraded))
    return evaluate(graded, predictions, na_probs=null_odds)

def normalize_answer(text):
    """Lower-cases, drops ASCII punctuation, the articles a/an/the and extra
    whitespace (official normalize_answer, same order of steps)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def get_tokens(text):
    """Normalized answer tokens (list of str; [] for an empty text)."""
    if not text:
        return []
    return normalize_answer(text).split()


def compute_exact(a_gold, a_pred):
    """1 if the normalized texts are equal, else 0."""
    return int(normalize_answer(a_gold) == normalize_answer(a_pred))


def compute_f1(a_gold, a_pred):
    """Token-overlap F1 of normalized answers (evaluate-v2.0.py compute_f1)."""
    return _f1_of_tokens(get_tokens(a_gold), get_tokens(a_pred))


def _f1_of_tokens(gold_toks, pred_toks):
    if not gold_toks or not pred_toks:
        return int(gold_toks == pred_toks)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


def _questions(dataset):
    """Yields every qa dict of a SQuAD "data" list, in file order.

    Raises:
      ValueError: an article, paragraph or question lacks a needed field.
    """
    for article_index, article in enumerate(dataset):
        if not isinstance(article, dict) or "paragraphs" not in article:
            raise UserError("data[%d] has no \"paragraphs\"" % article_index)
        for paragraph_index, paragraph in enumerate(article["paragraphs"]):
            if not isinstance(paragraph, dict) or "qas" not in paragraph:
                raise UserError("data[%d].paragraphs[%d] has no \"qas\"" % (
                    article_index, paragraph_index))
            for qa in paragraph["qas"]:
                if not isinstance(qa, dict) or "id" not in qa:
                    raise UserError(
                        "data[%d].paragraphs[%d]: a question has no \"id\""
                        % (article_index, paragraph_index))
                if not isinstance(qa.get("answers"), list):
                    raise UserError(
                        "question %r has no \"answers\" list (evaluation "
                        "needs the gold answers)" % qa["id"])
                yield qa


def make_qid_to_has_ans(dataset):
    """OrderedDict qid -> bool (the question has at least one answer)."""
    return collections.OrderedDict(
        (qa["id"], bool(qa["answers"])) for qa in _questions(dataset))


def get_raw_scores(dataset, preds, missing=None):
    """(exact_scores, f1_scores), OrderedDicts qid -> best over the gold
    answers (evaluate-v2.0.py get_raw_scores); a question missing from
    `preds` scores 0 and is appended to `missing`."""
    exact_scores = collections.OrderedDict()
    f1_scores = collections.OrderedDict()
    for qa in _questions(dataset):
        qid = qa["id"]
        # Normalized once: equal normalized strings <=> equal token lists.
        gold_tokens = [get_tokens(a["text"]) for a in qa["answers"]]
        gold_tokens = [toks for toks in gold_tokens if toks] or [[]]
        if qid not in preds:
            if missing is not None:
                missing.append(qid)
            exact_scores[qid] = 0
            f1_scores[qid] = 0
            continue
        pred_tokens = get_tokens(preds[qid])
        exact_scores[qid] = max(int(toks == pred_tokens)
                                for toks in gold_tokens)
        f1_scores[qid] = max(_f1_of_tokens(toks, pred_tokens)
                             for toks in gold_tokens)
    return exact_scores, f1_scores


def apply_no_ans_threshold(scores, na_probs, qid_to_has_ans, na_prob_thresh):
    """Scores after predicting "no answer" where na_prob > na_prob_thresh."""
    return collections.OrderedDict(
        (qid, float(not qid_to_has_ans[qid])
         if na_probs[qid] > na_prob_thresh else score)
        for qid, score in scores.items())


def make_eval_dict(exact_scores, f1_scores, qid_list=None):
    """OrderedDict(exact, f1 in percent, total) over qid_list (or all)."""
    if qid_list is None:
        qid_list = list(exact_scores)
    total = len(qid_list)
    return collections.OrderedDict([
        ("exact", 100.0 * sum(exact_scores[k] for k in qid_list) / total),
        ("f1", 100.0 * sum(f1_scores[k] for k in qid_list) / total),
        ("total", total),
    ])


def find_best_thresh(preds, scores, na_probs, qid_to_has_ans):
    """(best score in percent, its null-odds threshold): evaluate-v2.0.py
    find_best_thresh."""
    # Answering "" everywhere: every unanswerable question is right.
    cur_score = best_score = sum(1 for k in qid_to_has_ans
                                 if not qid_to_has_ans[k])
    best_thresh = 0.0
    qid_list = sorted(na_probs, key=lambda k: na_probs[k])
    for qid in qid_list:
        if qid not in scores:
            continue
        if qid_to_has_ans[qid]:
            diff = scores[qid]
        elif qid not in preds or preds[qid]:
            # An answer (or none at all) to an unanswerable question.
            diff = -1
        else:
            diff = 0
        cur_score += diff
        if cur_score > best_score:
            best_score = cur_score
            best_thresh = na_probs[qid]
    return 100.0 * best_score / len(scores), best_thresh


def _check_na_probs(na_probs, qid_to_has_ans, source):
    """Raises ValueError unless every question has a numeric null odds."""
    for qid in qid_to_has_ans:
        if qid not in na_probs:
            raise UserError("%s: no null odds for question %r" % (
                source, qid))
        value = na_probs[qid]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UserError(
                "%s: null odds for question %r should be a number, got %r"
                % (source, qid, value))


def evaluate(dataset, preds, na_probs=None, na_prob_thresh=1.0,
             na_probs_source="na_probs"):
    """Computes the official SQuAD metrics.

    Args:
      dataset: the "data" list of a SQuAD JSON file (v1.1 or v2.0).
      preds: dict qid -> predicted answer text ("" = no answer).
      na_probs: optional dict qid -> null odds; enables the best_* keys.
      na_prob_thresh: float; null odds above it count as answered "".
      na_probs_source: str naming na_probs in error messages.

    Returns:
      OrderedDict: exact, f1 (percent), total, HasAns_*, NoAns_* (with
      unanswerable questions), best_exact(_thresh), best_f1(_thresh) (with
      na_probs).

    Raises:
      UserError: na_probs misses a question or holds a non-number; no
        questions, or a question lacks "id" or "answers".

    Source: evaluate-v2.0.py main (official SQuAD 2.0 evaluation script).
    """
    return evaluate_with_missing(dataset, preds, na_probs, na_prob_thresh,
                                 na_probs_source)[0]


def evaluate_with_missing(dataset, preds, na_probs=None, na_prob_thresh=1.0,
                          na_probs_source="na_probs"):
    """As `evaluate`, and also returns the list of qids without prediction."""
    qid_to_has_ans = make_qid_to_has_ans(dataset)
    if not qid_to_has_ans:
        raise UserError("The SQuAD data holds no questions.")
    if na_probs is not None:
        _check_na_probs(na_probs, qid_to_has_ans, na_probs_source)
        thresh_probs = na_probs
    else:
        thresh_probs = {k: 0.0 for k in qid_to_has_ans}
    has_ans_qids = [k for k, v in qid_to_has_ans.items() if v]
    no_ans_qids = [k for k, v in qid_to_has_ans.items() if not v]
    missing = []
    exact_raw, f1_raw = get_raw_scores(dataset, preds, missing)
    exact_thresh = apply_no_ans_threshold(exact_raw, thresh_probs,
                                          qid_to_has_ans, na_prob_thresh)
    f1_thresh = apply_no_ans_threshold(f1_raw, thresh_probs, qid_to_has_ans,
                                       na_prob_thresh)
    out_eval = make_eval_dict(exact_thresh, f1_thresh)
    for prefix, qids in (("HasAns_", has_ans_qids), ("NoAns_", no_ans_qids)):
        if qids:
            for key, value in make_eval_dict(exact_thresh, f1_thresh,
                                             qids).items():
                out_eval[prefix + key] = value
    if na_probs is not None:
        for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
            best, thresh = find_best_thresh(preds, raw, na_probs,
                                            qid_to_has_ans)
            out_eval["best_" + name] = best
            out_eval["best_%s_thresh" % name] = thresh
    return out_eval, missing


def _load_json_object(path, what):
    """Loads a JSON object {qid: value}; ValueError naming the file."""
    obj = read_json(path)
    if not isinstance(obj, dict):
        raise UserError("%s: expected a JSON object {question id: %s}" % (
            path, what))
    return obj


def load_predictions(path):
    """Loads predictions.json; ValueError unless it maps ids to strings."""
    preds = _load_json_object(path, "answer text")
    for qid, text in preds.items():
        if not isinstance(text, str):
            raise UserError("%s: prediction for question %r should be a "
                            "string, got %r" % (path, qid, text))
    return preds


def evaluate_files(data_file, pred_file, na_prob_file=None,
                   na_prob_thresh=1.0):
    """Evaluates files as the official command does.

    Returns:
      (OrderedDict of metrics as `evaluate`, list of qids without prediction).

    Raises:
      UserError: unreadable JSON (file, line, column), wrong structure, or
        null odds missing a question.
    """
    dataset = load_squad_json(data_file)
    try:
        make_qid_to_has_ans(dataset)
    except ValueError as err:
        raise UserError("%s: %s" % (data_file, err)) from None
    preds = load_predictions(pred_file)
    na_probs = None
    if na_prob_file:
        na_probs = _load_json_object(na_prob_file, "null odds")
    return evaluate_with_missing(dataset, preds, na_probs, na_prob_thresh,
                                 na_probs_source=na_prob_file)


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m bert_tf1.data.squad.evaluate",
        description="Official SQuAD 1.1/2.0 evaluation (exact match, F1, "
                    "best null threshold).")
    parser.add_argument("data_file", metavar="DATA_JSON",
                        help="SQuAD data, e.g. dev-v2.0.json.")
    parser.add_argument("pred_file", metavar="PREDICTIONS_JSON",
                        help="predictions.json written by run_squad.py.")
    parser.add_argument("--out-file", "--out_file", "-o", dest="out_file",
                        metavar="eval.json",
                        help="Write the metrics to this file instead of "
                             "printing them.")
    parser.add_argument("--na-prob-file", "--na_prob_file", "-n",
                        dest="na_prob_file", metavar="null_odds.json",
                        help="Null odds per question (null_odds.json).")
    parser.add_argument("--na-prob-thresh", "--na_prob_thresh", "-t",
                        dest="na_prob_thresh", type=float, default=1.0,
                        help="Predict \"\" if the null odds exceed this "
                             "(default 1.0).")
    return parser.parse_args(argv)


def main(argv=None):
    """Command-line entry point; returns the process exit status."""
    opts = _parse_args(sys.argv[1:] if argv is None else argv)
    try:
        out_eval, missing = evaluate_files(
            opts.data_file, opts.pred_file, opts.na_prob_file,
            opts.na_prob_thresh)
    except (OSError, ValueError) as err:
        print("error: %s" % err, file=sys.stderr)
        return 1
    for qid in missing:
        print("Missing prediction for %s" % qid, file=sys.stderr)
    if opts.out_file:
        # The official script writes json.dump(out_eval, f) (no indent).
        write_text_atomically(opts.out_file, json.dumps(out_eval))
    else:
        print(json.dumps(out_eval, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
