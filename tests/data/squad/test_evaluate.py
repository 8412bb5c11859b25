"""Tests for bert_tf1/data/squad/evaluate.py (official SQuAD v1.1/v2.0 metrics)."""
import collections
import json
import re
import string
import zipfile

import pytest

from bert_tf1.data.squad import evaluate as squad_evaluate
from bert_tf1.data.squad.evaluate import (
             compute_exact, compute_f1, evaluate, evaluate_files, normalize_answer)

# What the official evaluate-v2.0.py prints for dev-v2.0.json with
# shared/data/squad/example_outputs (v2.0_bert_predictions.json,
# --na-prob-file v2.0_bert_null_odds.json, default --na-prob-thresh 1.0).
# Produced by running the official script's logic on these files.
OFFICIAL_V2 = collections.OrderedDict([
    ("exact", 71.9952834161543),
    ("f1", 75.63946351369648),
    ("total", 11873),
    ("HasAns_exact", 71.49122807017544),
    ("HasAns_f1", 78.79003884921005),
    ("HasAns_total", 5928),
    ("NoAns_exact", 72.49789739276703),
    ("NoAns_f1", 72.49789739276703),
    ("NoAns_total", 5945),
    ("best_exact", 72.83753053145793),
    ("best_exact_thresh", -5.559882640838623),
    ("best_f1", 76.10335982008996),
    ("best_f1_thresh", -4.95320200920105),
])


def _unzipped(data_dir, tmp_path_factory, name):
    """shared/data/squad/<name>.zip extracted to a fresh folder."""
    folder = tmp_path_factory.mktemp("squad")
    with zipfile.ZipFile(data_dir / "squad" / (name + ".zip")) as archive:
        archive.extract(name, folder)
    return folder / name


@pytest.fixture(scope="module")
def dev_v2(data_dir, tmp_path_factory):
    return _unzipped(data_dir, tmp_path_factory, "dev-v2.0.json")


@pytest.fixture(scope="module")
def dev_v1(data_dir, tmp_path_factory):
    return _unzipped(data_dir, tmp_path_factory, "dev-v1.1.json")


def _example_outputs(data_dir):
    folder = data_dir / "squad/example_outputs"
    return (folder / "v2.0_bert_predictions.json",
            folder / "v2.0_bert_null_odds.json")


def test_normalize_answer_rules():
    assert normalize_answer("The  Cat's, hat!") == "cats hat"
    assert normalize_answer("an apple a day") == "apple day"
    # Articles only as whole words; non-ASCII punctuation stays.
    assert normalize_answer("Theatre\u2013ANother") == "theatre\u2013another"
    assert normalize_answer(" . ") == ""


def test_exact_and_f1_per_question():
    assert compute_exact("The Eiffel Tower", "eiffel tower.") == 1
    assert compute_exact("Eiffel Tower", "Tower") == 0
    # pred "tower paris" vs gold "eiffel tower": 1 common token,
    # precision 1/2, recall 1/2.
    assert compute_f1("Eiffel Tower", "tower paris") == pytest.approx(0.5)
    assert compute_f1("", "") == 1
    assert compute_f1("", "something") == 0
    assert compute_f1("a b", "c") == 0


def _simple_scores(dataset, preds):
    """A second, straightforward computation of exact/F1 per question."""
    def norm(text):
        text = "".join(c for c in text.lower()
                       if c not in string.punctuation)
        text = re.sub(r"\b(a|an|the)\b", " ", text)
        return text.split()

    rows = []
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                golds = [norm(a["text"]) for a in qa["answers"]]
                golds = [g for g in golds if g] or [[]]
                pred = norm(preds.get(qa["id"], ""))
                exact = max(float(g == pred) for g in golds)
                best_f1 = 0.0
                for gold in golds:
                    if not gold or not pred:
                        f1 = float(gold == pred)
                    else:
                        same = sum((collections.Counter(gold)
                                    & collections.Counter(pred)).values())
                        f1 = (0.0 if same == 0 else
                              2.0 * same / (len(gold) + len(pred)))
                    best_f1 = max(best_f1, f1)
                rows.append((bool(qa["answers"]), exact, best_f1))
    return rows


def test_dev_v2_matches_official_numbers(dev_v2, data_dir):
    pred_file, null_file = _example_outputs(data_dir)
    result, missing = evaluate_files(str(dev_v2), str(pred_file),
                                     str(null_file))
    assert missing == []
    assert list(result) == list(OFFICIAL_V2)
    for key, value in OFFICIAL_V2.items():
        assert result[key] == pytest.approx(value, abs=1e-9), key
    assert isinstance(result["total"], int)

    # Cross-check exact/F1 and the breakdown with a second computation,
    # applying the default threshold (null odds > 1.0 -> "") by hand.
    dataset = json.loads(dev_v2.read_text(encoding="utf-8"))["data"]
    preds = json.loads(pred_file.read_text(encoding="utf-8"))
    null_odds = json.loads(null_file.read_text(encoding="utf-8"))
    qids = [qa["id"] for a in dataset for p in a["paragraphs"]
            for qa in p["qas"]]
    thresholded = {q: ("" if null_odds[q] > 1.0 else preds[q]) for q in qids}
    rows = _simple_scores(dataset, thresholded)
    assert len(rows) == result["total"]
    has = [r for r in rows if r[0]]
    assert len(has) == result["HasAns_total"]
    assert result["exact"] == pytest.approx(
        100.0 * sum(r[1] for r in rows) / len(rows), abs=1e-9)
    assert result["f1"] == pytest.approx(
        100.0 * sum(r[2] for r in rows) / len(rows), abs=1e-9)
    assert result["HasAns_f1"] == pytest.approx(
        100.0 * sum(r[2] for r in has) / len(has), abs=1e-9)


def test_best_threshold_is_consistent(dev_v2, data_dir):
    pred_file, null_file = _example_outputs(data_dir)
    dataset = json.loads(dev_v2.read_text(encoding="utf-8"))["data"]
    preds = json.loads(pred_file.read_text(encoding="utf-8"))
    null_odds = json.loads(null_file.read_text(encoding="utf-8"))
    best = evaluate(dataset, preds, null_odds)
    # Applying the best threshold gives the best score...
    at_best = evaluate(dataset, preds, null_odds,
                       na_prob_thresh=best["best_f1_thresh"])
    assert at_best["f1"] == pytest.approx(best["best_f1"], abs=1e-9)
    # ...and the neighbouring thresholds do no better.
    values = sorted(set(null_odds.values()))
    index = values.index(best["best_f1_thresh"])
    for thresh in (values[index - 1], values[index + 1]):
        other = evaluate(dataset, preds, null_odds, na_prob_thresh=thresh)
        assert other["f1"] <= best["best_f1"] + 1e-9


def test_v1_data_exact_equals_v11_exact_match(dev_v1):
    dataset = json.loads(dev_v1.read_text(encoding="utf-8"))["data"]
    # Mixed predictions: a gold answer, a gold answer with extra words, a
    # wrong word, and a few missing ids.
    preds = {}
    index = 0
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                # Golds such as "." normalize to "": see the next test.
                golds = [a["text"] for a in qa["answers"]
                         if normalize_answer(a["text"])]
                gold = golds[index % len(golds)]
                choice = index % 4
                if choice == 0:
                    preds[qa["id"]] = gold
                elif choice == 1:
                    preds[qa["id"]] = "the " + gold + " and more"
                elif choice == 2:
                    preds[qa["id"]] = "zzz"
                elif index % 400 != 3:
                    preds[qa["id"]] = gold.upper() + "."
                index += 1
    result, missing = squad_evaluate.evaluate_with_missing(dataset, preds)
    assert len(missing) == sum(1 for i in range(index) if i % 400 == 3)

    # evaluate-v1.1.py rules: max over all gold answers; F1 without the
    # "no answer" rule; a missing prediction scores 0.
    def tokens(text):
        return normalize_answer(text).split()

    exact_sum = f1_sum = 0.0
    for article in dataset:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                if qa["id"] not in preds:
                    continue
                pred = preds[qa["id"]]
                golds = [a["text"] for a in qa["answers"]]
                exact_sum += max(float(tokens(g) == tokens(pred))
                                 for g in golds)
                best = 0.0
                for gold in golds:
                    same = sum((collections.Counter(tokens(gold))
                                & collections.Counter(tokens(pred))).values())
                    if same:
                        p = same / len(tokens(pred))
                        r = same / len(tokens(gold))
                        best = max(best, 2 * p * r / (p + r))
                f1_sum += best
    assert result["total"] == index == 10570
    assert result["exact"] == pytest.approx(100.0 * exact_sum / index,
                                            abs=1e-9)
    assert result["f1"] == pytest.approx(100.0 * f1_sum / index, abs=1e-9)
    assert "NoAns_total" not in result
    assert result["HasAns_total"] == 10570


def test_v1_corner_empty_normalized_gold():
    # Three dev-v1.1 questions list "." among their golds. The v2.0 rules
    # (used here) drop such golds, so a prediction that normalizes to ""
    # scores 0, where evaluate-v1.1.py would count it as an exact match.
    dataset = [{"paragraphs": [{"context": "c", "qas": [
        {"id": "q", "question": "?", "answers": [
            {"text": "interventionism", "answer_start": 0},
            {"text": ".", "answer_start": 0}]}]}]}]
    assert evaluate(dataset, {"q": "."})["exact"] == 0.0
    assert evaluate(dataset, {"q": "Interventionism"})["exact"] == 100.0


def _tiny_dataset():
    return [{"paragraphs": [{"context": "c", "qas": [
        {"id": "a", "question": "?", "answers": [{"text": "Paris",
                                                  "answer_start": 0}]},
        {"id": "b", "question": "?", "answers": []},
        {"id": "c", "question": "?", "answers": [{"text": "blue sky",
                                                  "answer_start": 0}]},
    ]}]}]


def test_threshold_search_by_hand():
    preds = {"a": "Paris", "b": "Rome", "c": "sky"}
    null_odds = {"a": -2.0, "b": 3.0, "c": 1.0}
    result = evaluate(_tiny_dataset(), preds, null_odds, na_prob_thresh=2.0)
    # Null odds above 2.0 -> "b" answered "" (correct); a = 1, c: exact 0,
    # F1 2/3.
    assert result["exact"] == pytest.approx(200.0 / 3)
    assert result["f1"] == pytest.approx(100.0 * (1 + 1 + 2.0 / 3) / 3)
    assert result["NoAns_exact"] == 100.0
    # Walking a(-2) c(1) b(3): start 1 (b right), +1 -> 2 at -2.0, +0 / +2/3
    # at 1.0, -1 at 3.0.
    assert result["best_exact"] == pytest.approx(200.0 / 3)
    assert result["best_exact_thresh"] == -2.0
    assert result["best_f1"] == pytest.approx(100.0 * (2 + 2.0 / 3) / 3)
    assert result["best_f1_thresh"] == 1.0


def test_missing_predictions_and_bad_null_odds():
    result, missing = squad_evaluate.evaluate_with_missing(
        _tiny_dataset(), {"a": "Paris"})
    assert missing == ["b", "c"]
    assert result["total"] == 3
    assert result["exact"] == pytest.approx(100.0 / 3)
    with pytest.raises(ValueError, match="'c'"):
        evaluate(_tiny_dataset(), {"a": "x"}, {"a": 0.0, "b": 0.0})
    with pytest.raises(ValueError, match="'b'.*number"):
        evaluate(_tiny_dataset(), {}, {"a": 0.0, "b": None, "c": 0.0})


def _write(path, obj):
    path.write_text(json.dumps(obj), encoding="utf-8")
    return str(path)


def test_command_line(tmp_path, capsys):
    data = _write(tmp_path / "data.json", {"version": "v2.0",
                                           "data": _tiny_dataset()})
    preds = _write(tmp_path / "preds.json",
                   {"a": "Paris", "b": "Rome", "c": "sky"})
    odds = _write(tmp_path / "odds.json", {"a": -2.0, "b": 3.0, "c": 1.0})
    for flag, thresh_flag in (("--na_prob_file", "--na_prob_thresh"),
                              ("--na-prob-file", "--na-prob-thresh")):
        assert squad_evaluate.main([data, preds, flag, odds, thresh_flag,
                                    "2.0"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed == evaluate(_tiny_dataset(),
                                   json.loads(open(preds).read()),
                                   json.loads(open(odds).read()), 2.0)
    out_file = tmp_path / "eval.json"
    assert squad_evaluate.main([data, preds, "-o", str(out_file)]) == 0
    assert capsys.readouterr().out == ""
    written = json.loads(out_file.read_text())
    assert list(written) == ["exact", "f1", "total", "HasAns_exact",
                             "HasAns_f1", "HasAns_total", "NoAns_exact",
                             "NoAns_f1", "NoAns_total"]
    # Errors name the file and exit non-zero.
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    assert squad_evaluate.main([data, str(tmp_path / "bad.json")]) == 1
    assert "bad.json" in capsys.readouterr().err
