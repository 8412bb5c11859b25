"""Tests for bert_tf1/data/squad/examples.py (run_squad.py read_squad_examples)."""
import json
import re

from absl import logging
import pytest

from bert_tf1.data.squad.examples import read_squad_examples, split_context


def _write_squad(path, paragraphs, version="1.1"):
    path.write_text(json.dumps({
        "version": version,
        "data": [{"title": "t", "paragraphs": paragraphs}],
    }), encoding="utf-8")
    return str(path)


def _qa(qid, question="q?", answers=(), **extra):
    qa = {"id": qid, "question": question, "answers": list(answers)}
    qa.update(extra)
    return qa


def _answer(context, text, occurrence=0):
    start = -1
    for _ in range(occurrence + 1):
        start = context.index(text, start + 1)
    return {"text": text, "answer_start": start}


def test_split_context_whitespace_set_and_offsets():
    # Only " ", \t, \r, \n and U+202F split; U+00A0 stays inside a word.
    text = " a  bc\u00a0d\u202fe\n"
    doc_tokens, offsets = split_context(text)
    assert doc_tokens == ["a", "bc\u00a0d", "e"]
    # leading space -> -1; whitespace maps to the word before it.
    assert offsets == [-1, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2]
    assert len(offsets) == len(text)


def test_fixture_contexts_split_like_the_original(fixtures_dir):
    input_file = fixtures_dir / "tf1_vocab_squad/squad_v1_sample/input.json"
    examples = read_squad_examples(str(input_file), is_training=False)
    data = json.loads(input_file.read_text(encoding="utf-8"))["data"]
    expected = []
    for article in data:
        for paragraph in article["paragraphs"]:
            words = [w for w in re.split(r"[ \t\r\n\u202f]+",
                                         paragraph["context"]) if w]
            for qa in paragraph["qas"]:
                expected.append((qa["id"], qa["question"], words))
    assert len(examples) == len(expected) == 134
    for example, (qid, question, words) in zip(examples, expected):
        assert example.qas_id == qid
        assert example.question_text == question
        assert example.doc_tokens == words
        assert example.start_position is None
        assert example.is_impossible is False


def test_training_answer_alignment(tmp_path):
    context = "The leader was John Smith (1895-1943). Japanese industry."
    path = _write_squad(tmp_path / "train.json", [{
        "context": context,
        "qas": [
            _qa("q1", answers=[_answer(context, "John Smith")]),
            # Inside a word: aligned to the whole word, as the original.
            _qa("q2", answers=[_answer(context, "1895")]),
            _qa("q3", answers=[_answer(context, "Japan")]),
        ]}])
    examples = read_squad_examples(path, is_training=True)
    by_id = {e.qas_id: e for e in examples}
    assert (by_id["q1"].start_position, by_id["q1"].end_position) == (3, 4)
    assert by_id["q1"].orig_answer_text == "John Smith"
    assert (by_id["q2"].start_position, by_id["q2"].end_position) == (5, 5)
    assert (by_id["q3"].start_position, by_id["q3"].end_position) == (6, 6)


def test_training_skips_unrecoverable_answer_with_warning(tmp_path,
                                                         monkeypatch):
    context = "alpha beta gamma"
    path = _write_squad(tmp_path / "train.json", [{
        "context": context,
        "qas": [
            # Offset points at "beta" but the text says "delta".
            _qa("bad", answers=[{"text": "delta", "answer_start": 6}]),
            _qa("good", answers=[_answer(context, "gamma")]),
        ]}])
    warnings = []
    monkeypatch.setattr(logging, "warning",
                        lambda msg, *args: warnings.append(msg % args))
    examples = read_squad_examples(path, is_training=True)
    assert [e.qas_id for e in examples] == ["good"]
    assert any("Could not find answer" in w for w in warnings)


def test_v2_training_impossible_questions(tmp_path):
    context = "alpha beta gamma"
    path = _write_squad(tmp_path / "train.json", [{
        "context": context,
        "qas": [
            _qa("imp", answers=[], is_impossible=True),
            _qa("pos", answers=[_answer(context, "beta")],
                is_impossible=False),
        ]}], version="v2.0")
    examples = read_squad_examples(path, is_training=True,
                                   version_2_with_negative=True)
    imp, pos = examples
    assert imp.is_impossible is True
    assert (imp.start_position, imp.end_position) == (-1, -1)
    assert imp.orig_answer_text == ""
    assert pos.is_impossible is False
    assert (pos.start_position, pos.end_position) == (1, 1)
    # At prediction time answers and is_impossible are ignored.
    predict = read_squad_examples(path, is_training=False,
                                  version_2_with_negative=True)
    assert [e.start_position for e in predict] == [None, None]


def test_v2_training_requires_is_impossible(tmp_path):
    path = _write_squad(tmp_path / "train.json", [{
        "context": "alpha beta",
        "qas": [_qa("q-no-flag", answers=[{"text": "beta",
                                           "answer_start": 6}])]}])
    with pytest.raises(ValueError, match="q-no-flag.*is_impossible"):
        read_squad_examples(path, is_training=True,
                            version_2_with_negative=True)


def test_training_needs_exactly_one_answer(tmp_path):
    context = "alpha beta"
    path = _write_squad(tmp_path / "train.json", [{
        "context": context,
        "qas": [_qa("two-answers", answers=[_answer(context, "alpha"),
                                            _answer(context, "beta")])]}])
    with pytest.raises(ValueError, match="two-answers.*exactly 1 answer"):
        read_squad_examples(path, is_training=True)
    # Prediction does not care.
    assert len(read_squad_examples(path, is_training=False)) == 1


def test_answer_outside_context_is_a_clear_error(tmp_path):
    path = _write_squad(tmp_path / "train.json", [{
        "context": "alpha beta",
        "qas": [_qa("far", answers=[{"text": "beta", "answer_start": 40}])]}])
    with pytest.raises(ValueError, match="far.*outside the context"):
        read_squad_examples(path, is_training=True)


def test_malformed_json_names_the_file_and_line(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"data": [\n  {"paragraphs": [}\n]}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json.*line 2"):
        read_squad_examples(str(path), is_training=False)


def test_missing_fields_name_the_question(tmp_path):
    path = _write_squad(tmp_path / "x.json", [{
        "context": "alpha",
        "qas": [{"id": "no-question", "answers": []}]}])
    with pytest.raises(ValueError, match="no-question.*question"):
        read_squad_examples(path, is_training=False)
    path = _write_squad(tmp_path / "y.json", [{"qas": []}])
    with pytest.raises(ValueError, match=r"paragraphs\[0\].*context"):
        read_squad_examples(path, is_training=False)
    (tmp_path / "z.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match=r"z\.json.*\"data\""):
        read_squad_examples(str(tmp_path / "z.json"), is_training=False)


def test_empty_and_whitespace_contexts_do_not_crash(tmp_path):
    paragraphs = [
        {"context": "", "qas": [_qa("empty", answers=[
            {"text": "x", "answer_start": 0}])]},
        {"context": " \n\t ", "qas": [_qa("blank", answers=[
            {"text": "x", "answer_start": 1}])]},
    ]
    path = _write_squad(tmp_path / "e.json", paragraphs)
    predict = read_squad_examples(path, is_training=False)
    assert [(e.qas_id, e.doc_tokens) for e in predict] == [
        ("empty", []), ("blank", [])]
    # Training cannot recover an answer from no words: skipped, no crash.
    assert read_squad_examples(path, is_training=True) == []


def test_zipped_or_non_utf8_squad_file_is_named_with_what_to_do(tmp_path):
    import zipfile

    from bert_tf1.data.io.text_files import TextFileError
    from bert_tf1.data.squad import evaluate as squad_evaluate
    from bert_tf1.data.squad.examples import read_squad_examples

    zipped = tmp_path / "train-v1.1.json.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("train-v1.1.json", '{"data": []}')
    with pytest.raises(TextFileError, match=r"train-v1.1.json.zip: is a zip archive, "
                       r"expected SQuAD JSON; unzip it"):
        read_squad_examples(str(zipped), is_training=True)
    latin1 = tmp_path / "dev.json"
    latin1.write_bytes('{"data": [],\n "x": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(TextFileError, match=r"dev.json, line 2 \(byte 23\): not UTF-8"):
        read_squad_examples(str(latin1), is_training=False)
    with pytest.raises(TextFileError, match="dev.json, line 2"):
        squad_evaluate.evaluate_files(str(latin1), str(latin1))
