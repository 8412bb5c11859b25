"""run_squad.py's work (bert_tf1.tasks.squad) against the original's outputs.

Runs in-process from the script's flags (tests/helpers/task_runner.py); the script
itself is run once in tests/scripts/test_script_smoke.py.
"""
import json

import pytest
import tensorflow as tf

from bert_tf1.tasks.errors import UserError, one_line
from bert_tf1.tasks.squad import SquadConfig, SquadTask
from tests.helpers.task_runner import fixture_flags, run_task


@pytest.fixture
def squad_fixture(fixtures_dir):
    return fixtures_dir / "tf1_vocab_squad"


_flags = fixture_flags


@pytest.mark.parametrize("name,max_seq_length,doc_stride,v2", [
    ("squad_v1_windows", 128, 48, False),
    ("squad_v2_sample", 384, 128, True),
])
def test_predict_reproduces_original_outputs(squad_fixture, tmp_path, name,
                                             max_seq_length, doc_stride, v2):
    folder = squad_fixture / name
    out = tmp_path / "out"
    run_task("run_squad.py", _flags(
        squad_fixture, out, do_predict=True,
        predict_file=folder / "input.json", max_seq_length=max_seq_length,
        doc_stride=doc_stride, version_2_with_negative=v2,
        predict_batch_size=7))
    assert ((out / "predictions.json").read_text()
            == (folder / "predictions.json").read_text())
    ours = json.loads((out / "nbest_predictions.json").read_text())
    expected = json.loads((folder / "nbest_predictions.json").read_text())
    assert list(ours) == list(expected)
    for qid in expected:
        assert ([e["text"] for e in ours[qid]]
                == [e["text"] for e in expected[qid]])
        for mine, ref in zip(ours[qid], expected[qid]):
            for key in ("probability", "start_logit", "end_logit"):
                assert abs(mine[key] - ref[key]) <= 1e-5, (qid, key)
    if v2:
        ours = json.loads((out / "null_odds.json").read_text())
        expected = json.loads((folder / "null_odds.json").read_text())
        assert list(ours) == list(expected)
        assert all(abs(ours[q] - expected[q]) <= 1e-5 for q in expected)
    else:
        assert not (out / "null_odds.json").exists()
    # The dev slice has gold answers: the official metrics are written.
    results = json.loads((out / "eval_results.json").read_text())
    assert results["total"] == len(expected)
    assert ("best_f1_thresh" in results) == v2


@pytest.mark.slow  # trains 4 steps, predicts 134 questions
def test_train_then_predict(squad_fixture, tmp_path):
    # Training needs exactly one answer per question: keep the first.
    data = json.loads(
        (squad_fixture / "squad_v1_sample/input.json").read_text())
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["answers"] = qa["answers"][:1]
    train_file = tmp_path / "train.json"
    train_file.write_text(json.dumps(data))
    out = tmp_path / "out"
    flags = _flags(squad_fixture, out, do_train=True, train_file=train_file,
                   do_predict=True, predict_file=train_file,
                   max_seq_length=128, doc_stride=64, train_batch_size=16,
                   num_train_epochs=0.5, save_checkpoints_steps=2,
                   learning_rate=1e-3)
    run_task("run_squad.py", flags)
    # 134 examples / 16 * 0.5 -> 4 steps, counted from examples.
    prefix = tf.train.latest_checkpoint(str(out))
    assert prefix.endswith("model.ckpt-4")
    reader = tf.train.load_checkpoint(prefix)
    assert int(reader.get_tensor("global_step")) == 4
    assert reader.has_tensor("cls/squad/output_weights/adam_m")
    num_records = sum(1 for _ in tf.data.TFRecordDataset(
        str(out / "train.tf_record")))
    assert num_records > 134  # windows of stride 64 over long contexts
    predictions = json.loads((out / "predictions.json").read_text())
    assert len(predictions) == 134
    assert json.loads((out / "eval_results.json").read_text())["total"] == 134


def test_original_flag_checks(squad_fixture, tmp_path):
    with pytest.raises(UserError) as error:
        run_task("run_squad.py", _flags(
            squad_fixture, tmp_path / "out", do_predict=True,
            predict_file=squad_fixture / "squad_v1_sample/input.json",
            max_seq_length=67, max_query_length=64))
    assert "must be greater than max_query_length" in one_line(error.value)
    assert not (tmp_path / "out").exists()


def test_checks_come_before_any_file(squad_fixture, tmp_path):
    fixture = squad_fixture
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
        values = {key: str(value) for key, value in _flags(
            fixture, tmp_path / "out").items()}
        task = SquadTask(SquadConfig(**values, **fields))
        with pytest.raises(UserError, match=message):
            task.prepare()
    assert not (tmp_path / "out").exists()
