"""Tests for bert_tf1/data/squad/postprocess.py against the original's outputs."""
import json
import math
import os

import numpy as np
import pytest

from bert_tf1.data.tokenization import full_tokenizer as tokenization
from bert_tf1.data.squad.examples import SquadExample, read_squad_examples
from bert_tf1.data.squad.features import InputFeatures, convert_examples_to_features
from bert_tf1.data.squad.postprocess import (
             NO_ANSWER_NULL_ODDS, RawResult, compute_predictions, compute_softmax,
             get_best_indexes, get_final_text, write_predictions)

# (fixture folder, max_seq_length, doc_stride, version_2_with_negative):
# the settings of shared/fixtures/README.md.
FIXTURES = [
    ("squad_v1_sample", 384, 128, False),
    ("squad_v1_windows", 128, 48, False),
    ("squad_v2_sample", 384, 128, True),
]


@pytest.fixture(scope="module")
def tokenizer(fixtures_dir):
    return tokenization.FullTokenizer(
        str(fixtures_dir / "tf1_vocab_squad/vocab.txt"), do_lower_case=True)


@pytest.mark.parametrize("name,max_seq_length,doc_stride,v2", FIXTURES)
def test_fixture_predictions_match_the_original(tmp_path, fixtures_dir,
                                                tokenizer, name,
                                                max_seq_length, doc_stride,
                                                v2):
    folder = fixtures_dir / "tf1_vocab_squad" / name
    examples = read_squad_examples(str(folder / "input.json"), False, v2)
    features = []
    convert_examples_to_features(examples, tokenizer, max_seq_length,
                                 doc_stride, 64, False, features.append)
    raw = np.load(folder / "raw_logits.npz")
    results = [RawResult(int(u), s, e) for u, s, e in zip(
        raw["unique_ids"], raw["start_logits"], raw["end_logits"])]
    out = {k: tmp_path / ("%s.json" % k) for k in ("pred", "nbest", "null")}
    write_predictions(examples, features, results, n_best_size=20,
                      max_answer_length=30, do_lower_case=True,
                      output_prediction_file=out["pred"],
                      output_nbest_file=out["nbest"],
                      output_null_log_odds_file=out["null"],
                      version_2_with_negative=v2,
                      null_score_diff_threshold=0.0)
    # predictions.json: the very same text.
    assert (out["pred"].read_text(encoding="utf-8")
            == (folder / "predictions.json").read_text(encoding="utf-8"))
    # n-best: identical texts and order, numbers within 1e-5.
    ours = json.loads(out["nbest"].read_text())
    expected = json.loads((folder / "nbest_predictions.json").read_text())
    assert list(ours) == list(expected)
    for qid, entries in expected.items():
        assert [e["text"] for e in ours[qid]] == [e["text"] for e in entries]
        for mine, ref in zip(ours[qid], entries):
            assert list(mine) == ["text", "probability", "start_logit",
                                  "end_logit"]
            for key in ("probability", "start_logit", "end_logit"):
                assert abs(mine[key] - ref[key]) <= 1e-5, (qid, key)
    if v2:
        ours = json.loads(out["null"].read_text())
        expected = json.loads((folder / "null_odds.json").read_text())
        assert list(ours) == list(expected)
        for qid, value in expected.items():
            if value is None:  # the original crashed here
                assert ours[qid] == NO_ANSWER_NULL_ODDS
            else:
                assert abs(ours[qid] - value) <= 1e-5, qid
    else:
        assert not out["null"].exists()
    assert sorted(os.listdir(tmp_path)) == sorted(
        p.name for p in out.values() if p.exists())


def test_get_best_indexes_ties_keep_index_order():
    assert get_best_indexes([1.0, 3.0, 3.0, 2.0], 3) == [1, 2, 3]
    assert get_best_indexes([0.5, 0.5, 0.5], 20) == [0, 1, 2]


def test_compute_softmax():
    scores = [1.0, 2.0, 0.5]
    total = sum(math.exp(s) for s in scores)
    assert compute_softmax(scores) == pytest.approx(
        [math.exp(s) / total for s in scores], abs=1e-15)
    assert compute_softmax([]) == []
    # Large scores do not overflow (max is subtracted first).
    assert compute_softmax([1000.0, 1000.0]) == [0.5, 0.5]


def test_get_final_text_projection():
    # The original's own example.
    assert get_final_text("steve smith", "Steve Smith's", True) == (
        "Steve Smith")
    # Accents stripped by the uncased tokenizer map back to the original.
    assert get_final_text("jose", "(José)", True) == "José"
    # Cased: no match when case differs -> the whole original text.
    assert get_final_text("steve", "Steve Smith's", False) == (
        "Steve Smith's")
    assert get_final_text("xyz", "Steve", True) == "Steve"


def test_cached_word_tokens_equal_span_tokenization():
    # The n-best loop rebuilds get_final_text's tokenization of a span from
    # per-word tokens; BasicTokenizer must give the same on the joined span.
    from bert_tf1.data.squad.postprocess import _BasicTokenCache
    words = ["Caf\u00e9\u00a0au-lait", "\u5317\u4eac\u5e02", "x\u200by",
             "\u0e38", "(1895-1943).", "\x00\ufffd", "\u00bfQu\u00e9?",
             "A\u0301b", "", "\u3000end"]
    for do_lower_case in (True, False):
        tokenizer = tokenization.BasicTokenizer(do_lower_case=do_lower_case)
        cache = _BasicTokenCache(do_lower_case)
        for start in range(len(words)):
            for end in range(start, len(words)):
                expected = " ".join(tokenizer.tokenize(
                    " ".join(words[start:end + 1])))
                assert cache.tok_text(words, start, end) == expected


def _feature(unique_id, example_index, num_query, doc_words):
    """A hand-made one-window feature: [CLS] q* [SEP] words [SEP]."""
    tokens = ["[CLS]"] + ["q"] * num_query + ["[SEP]"] + list(doc_words) + [
        "[SEP]"]
    offset = num_query + 2
    token_to_orig_map = {offset + i: i for i in range(len(doc_words))}
    token_is_max_context = {p: True for p in token_to_orig_map}
    return InputFeatures(unique_id, example_index, 0, tokens,
                         token_to_orig_map, token_is_max_context,
                         [0] * 16, [0] * 16, [0] * 16)


def _logits(length, peaks):
    values = np.full([length], -10.0, dtype=np.float32)
    for position, value in peaks.items():
        values[position] = value
    return values


def test_v2_without_non_null_candidate_predicts_no_answer():
    # n_best_size=1 and the null span scores best: the original crashes
    # ('NoneType' object has no attribute 'start_logit').
    example = SquadExample("q1", "q?", ["alpha", "beta"])
    feature = _feature(1000000000, 0, 1, ["alpha", "beta"])
    result = RawResult(1000000000, _logits(16, {0: 5.0, 3: 1.0}),
                       _logits(16, {0: 5.0, 4: 1.0}))
    predictions, nbest, null_odds = compute_predictions(
        [example], [feature], [result], n_best_size=1, max_answer_length=30,
        do_lower_case=True, version_2_with_negative=True)
    assert predictions == {"q1": ""}
    assert null_odds == {"q1": NO_ANSWER_NULL_ODDS}
    assert [e["text"] for e in nbest["q1"]] == [""]
    # With room in the n-best, the same logits give a real difference:
    # null (5 + 5) minus best span (1 + 1).
    predictions, nbest, null_odds = compute_predictions(
        [example], [feature], [result], n_best_size=20, max_answer_length=30,
        do_lower_case=True, version_2_with_negative=True)
    assert null_odds["q1"] == pytest.approx(8.0)
    assert predictions == {"q1": ""}
    assert nbest["q1"][0]["text"] == ""
    assert nbest["q1"][1]["text"] == "alpha beta"


def test_empty_contexts_still_get_predictions(tmp_path, tokenizer):
    context = "alpha beta gamma"
    data = {"version": "v2.0", "data": [{"title": "t", "paragraphs": [
        {"context": "", "qas": [{"id": "empty", "question": "q?",
                                 "answers": []}]},
        {"context": " \t\n", "qas": [{"id": "blank", "question": "q?",
                                      "answers": []}]},
        {"context": "\u200b", "qas": [{"id": "zero-width", "question": "q?",
                                       "answers": []}]},
        {"context": context, "qas": [{"id": "normal", "question": "q?",
                                      "answers": []}]},
    ]}]}
    input_file = tmp_path / "input.json"
    input_file.write_text(json.dumps(data), encoding="utf-8")
    ids = ["empty", "blank", "zero-width", "normal"]
    for v2 in (False, True):
        examples = read_squad_examples(str(input_file), False, v2)
        features = []
        convert_examples_to_features(examples, tokenizer, 16, 8, 4, False,
                                     features.append)
        assert [f.example_index for f in features] == [3]
        # "beta" is feature position 5: [CLS] q ? [SEP] alpha beta ...
        assert features[0].tokens[5] == "beta"
        results = [RawResult(features[0].unique_id,
                             _logits(16, {0: -5.0, 5: 3.0}),
                             _logits(16, {0: -5.0, 5: 3.0}))]
        out = tmp_path / ("v2" if v2 else "v1")
        out.mkdir()
        predictions, nbest, null_odds = write_predictions(
            examples, features, results, 20, 30, True,
            out / "predictions.json", out / "nbest_predictions.json",
            out / "null_odds.json", version_2_with_negative=v2)
        written = json.loads((out / "predictions.json").read_text())
        assert list(written) == ids
        assert written["normal"] == "beta"
        if v2:
            assert [written[k] for k in ids[:3]] == ["", "", ""]
            null_written = json.loads((out / "null_odds.json").read_text())
            assert list(null_written) == ids
            assert all(null_written[k] == NO_ANSWER_NULL_ODDS
                       for k in ids[:3])
            assert null_written["normal"] == pytest.approx(-16.0)
        else:
            # The original's placeholder for "no valid span".
            assert [written[k] for k in ids[:3]] == ["empty"] * 3
            assert nbest["empty"] == [{"text": "empty", "probability": 1.0,
                                       "start_logit": 0.0,
                                       "end_logit": 0.0}]


def test_filters_and_dedupe():
    # Spans in the query, reversed, too long or outside max context are
    # dropped; equal final texts are kept once.
    example = SquadExample("q1", "q?", ["a", "b", "c", "d"])
    feature = _feature(1000000000, 0, 1, ["a", "b", "c", "d"])
    feature.token_is_max_context[6] = False  # "d" belongs to another window
    start = _logits(16, {1: 9.0, 3: 4.0, 6: 8.0, 5: 2.0})
    end = _logits(16, {1: 9.0, 3: 1.0, 4: 3.0, 6: 0.5})
    predictions, nbest, _ = compute_predictions(
        [example], [feature], [RawResult(1000000000, start, end)],
        n_best_size=4, max_answer_length=2, do_lower_case=True)
    texts = [e["text"] for e in nbest["q1"]]
    # Only the 4 best indexes count: starts 1, 6, 3, 5 and ends 1, 4, 3, 6.
    # Position 1 is in the query, start 6 is not max context, end < start
    # is dropped and (3, 6) is longer than 2, leaving (3, 4) "a b" = 4 + 3,
    # (3, 3) "a" = 4 + 1 and (5, 6) "c d" = 2 + 0.5.
    assert texts == ["a b", "a", "c d"]
    assert [e["start_logit"] + e["end_logit"] for e in nbest["q1"]] == [
        7.0, 5.0, 2.5]
    assert predictions["q1"] == "a b"
    assert sum(e["probability"] for e in nbest["q1"]) == pytest.approx(1.0)
    # The same text from two positions is listed once (the better one).
    example = SquadExample("q2", "q?", ["x", "x"])
    feature = _feature(1000000001, 0, 1, ["x", "x"])
    start = _logits(16, {3: 2.0, 4: 3.0})
    end = _logits(16, {3: 1.0, 4: 2.0})
    _, nbest, _ = compute_predictions(
        [example], [feature], [RawResult(1000000001, start, end)],
        n_best_size=20, max_answer_length=30, do_lower_case=True)
    entries = [(e["text"], e["start_logit"], e["end_logit"])
               for e in nbest["q2"]]
    assert entries[:2] == [("x", 3.0, 2.0), ("x x", 2.0, 2.0)]
    assert [e[0] for e in entries].count("x") == 1


def test_missing_result_is_a_clear_error():
    example = SquadExample("q1", "q?", ["a"])
    feature = _feature(1000000000, 0, 1, ["a"])
    with pytest.raises(ValueError, match="1000000000.*'q1'"):
        compute_predictions([example], [feature], [], 20, 30, True)
