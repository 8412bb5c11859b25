"""SquadTask in-process: byte-identical predictions, training, checks.

Ground truth: shared/fixtures/tf1_vocab_squad (the original's
predictions.json / nbest_predictions.json for a windowed v1.1 slice).
"""
import json

import pytest
import tensorflow as tf

from tasks.errors import UserError
from tasks.squad import SquadConfig, SquadTask


@pytest.fixture(scope="module")
def fixture(fixtures_dir):
    return fixtures_dir / "tf1_vocab_squad"


def make_config(fixture, output_dir, **fields):
    values = dict(vocab_file=str(fixture / "vocab.txt"),
                  bert_config_file=str(fixture / "bert_config.json"),
                  init_checkpoint=str(fixture / "bert_model.ckpt"),
                  output_dir=str(output_dir))
    values.update(fields)
    return SquadConfig(**values)


def test_predict_is_byte_identical_to_original(fixture, tmp_path):
    folder = fixture / "squad_v1_windows"
    out = tmp_path / "out"
    task = SquadTask(make_config(
        fixture, out, do_predict=True, predict_file=str(folder / "input.json"),
        max_seq_length=128, doc_stride=48, predict_batch_size=7))
    result = task.predict()
    assert ((out / "predictions.json").read_text()
            == (folder / "predictions.json").read_text())
    expected = json.loads((folder / "predictions.json").read_text())
    assert dict(result["predictions"]) == expected
    ours = json.loads((out / "nbest_predictions.json").read_text())
    original = json.loads((folder / "nbest_predictions.json").read_text())
    assert list(ours) == list(original)
    for qid in original:
        assert [e["text"] for e in ours[qid]] == [e["text"] for e in original[qid]]
        for mine, ref in zip(ours[qid], original[qid]):
            assert abs(mine["start_logit"] - ref["start_logit"]) <= 1e-5
    assert result["eval"]["total"] == len(expected)
    assert not (out / "null_odds.json").exists()


@pytest.mark.slow  # trains (model.fit compiles): ~10-20 s
def test_train_then_predict_in_process(fixture, tmp_path):
    data = json.loads((fixture / "squad_v1_sample/input.json").read_text())
    data["data"] = data["data"][:1]
    for article in data["data"]:
        article["paragraphs"] = article["paragraphs"][:2]
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["answers"] = qa["answers"][:1]
    num_questions = sum(len(p["qas"]) for a in data["data"]
                        for p in a["paragraphs"])
    train_file = tmp_path / "train.json"
    train_file.write_text(json.dumps(data))
    out = tmp_path / "out"
    task = SquadTask(make_config(
        fixture, out, do_train=True, train_file=str(train_file),
        do_predict=True, predict_file=str(train_file), max_seq_length=96,
        doc_stride=48, train_batch_size=4, num_train_epochs=1.0,
        learning_rate=1e-3))
    results = task.run()
    steps = num_questions // 4
    assert steps >= 1 and results["train"]["global_step"] == steps
    reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(out)))
    assert int(reader.get_tensor("global_step")) == steps
    assert len(results["predict"]["predictions"]) == num_questions
    assert results["predict"]["eval"]["total"] == num_questions


def test_flag_checks_come_before_any_file(fixture, tmp_path):
    predict_file = str(fixture / "squad_v1_sample/input.json")
    cases = [
        (dict(do_predict=True, predict_file=predict_file, max_seq_length=67,
              max_query_length=64), "must be greater than max_query_length"),
        (dict(do_train=True), "`train_file` must be specified"),
        (dict(do_predict=True, predict_file=str(tmp_path / "missing.json")),
         "missing.json: file not found"),
        (dict(do_predict=True, predict_file=predict_file, max_seq_length=1024),
         "max_position_embeddings"),
        ({}, "At least one of `do_train` or `do_predict`"),
    ]
    for fields, message in cases:
        task = SquadTask(make_config(fixture, tmp_path / "out", **fields))
        with pytest.raises(UserError, match=message):
            task.prepare()
    assert not (tmp_path / "out").exists()
