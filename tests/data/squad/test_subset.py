"""bert_tf1.data.squad.subset: slices of SQuAD files, one-answer training files."""
import json

import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.squad import subset
from bert_tf1.data.squad.examples import read_squad_examples


def _squad():
    def qa(qid, answers):
        return {"id": qid, "question": f"q{qid}?",
                "answers": [{"text": a, "answer_start": 0} for a in answers]}
    return {"version": "1.1", "data": [
        {"title": "A", "paragraphs": [
            {"context": "x y", "qas": [qa("1", ["x", "x y"]), qa("2", ["y"])]},
            {"context": "z", "qas": [qa("3", ["z", "z", "z"])]}]},
        {"title": "B", "paragraphs": [
            {"context": "w", "qas": [qa("4", ["w"]), qa("5", ["w", "w"])]}]}]}


def _ids(value):
    return [qa["id"] for article in value["data"]
            for paragraph in article["paragraphs"] for qa in paragraph["qas"]]


def test_slices_keep_order_and_drop_empty_paragraphs_and_articles():
    value, count = subset.squad_subset(_squad(), skip_questions=1, max_questions=2)
    assert (count, _ids(value)) == (2, ["2", "3"])
    assert [a["title"] for a in value["data"]] == ["A"]
    assert value["version"] == "1.1"
    value, count = subset.squad_subset(_squad(), skip_questions=3)
    assert (count, _ids(value)) == (2, ["4", "5"])


def test_first_answer_only_and_the_input_is_not_changed():
    original = _squad()
    value, _ = subset.squad_subset(original, first_answer_only=True)
    answers = [qa["answers"] for article in value["data"]
               for paragraph in article["paragraphs"] for qa in paragraph["qas"]]
    assert [[a["text"] for a in item] for item in answers] == [
        ["x"], ["y"], ["z"], ["w"], ["w"]]
    assert len(original["data"][0]["paragraphs"][0]["qas"][0]["answers"]) == 2


def test_training_file_from_the_shared_dev_zip(data_dir, tmp_path):
    out = tmp_path / "train.json"
    assert subset.main([str(data_dir / "squad/dev-v1.1.json.zip"), str(out),
                        "--first_answer_only", "--max_questions=40"]) == 0
    # The original's training reader accepts it (exactly one answer each).
    examples = read_squad_examples(str(out), is_training=True)
    assert len(examples) == 40
    whole = subset.read_squad_file(str(data_dir / "squad/dev-v1.1.json.zip"))
    assert len(_ids(whole)) == 10570  # the official dev-v1.1 size
    assert _ids(json.loads(out.read_text())) == _ids(whole)[:40]


def test_bad_input_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert subset.main([str(bad), str(tmp_path / "out.json")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.json: not valid JSON" in err[0]
    with pytest.raises(UserError, match="no.json"):
        subset.read_squad_file(str(tmp_path / "no.json"))
