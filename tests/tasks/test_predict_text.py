"""predict_text.py (bert_tf1/tasks/predict_text.py, bert_tf1/serving/predictions.py): raw text
in, JSON lines out, from an export or a checkpoint.

The classifier's probabilities must be `run_classifier.py --do_predict`'s on
the same rows (the MRPC fixture: the original's test_results.tsv, and ours
computed here); the tagger's and the multiple-choice model's results those
of their serving modules; bad input is one UserError naming the line.
"""
import csv
import io
import json
import re

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.serving import build_serving_module, export_saved_model
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.predict_text import PredictTextConfig, PredictTextTask, parse_rows
from tests.helpers.task_checkpoints import (TAGS,
                                            write_multiple_choice_checkpoint,
                                            write_tagger_checkpoint)
from tests.helpers.script_runner import run_script_argv
from tests.helpers.task_runner import fixture_flags, run_task

FIXTURE = "tf1_vocab_mrpc_classifier"


def _model_flags(fixture, **extra):
    return dict(bert_config_file=str(fixture / "bert_config.json"),
                vocab_file=str(fixture / "vocab.txt"), **extra)


def _mrpc_pairs(fixture):
    with open(fixture / "mrpc_test64.tsv", encoding="utf-8") as reader:
        rows = list(csv.reader(reader, delimiter="\t", quotechar=None))[1:]
    return [(row[3], row[4]) for row in rows]


def _run(config, stdin_text=None):
    stdin = io.TextIOWrapper(io.BytesIO((stdin_text or "").encode("utf-8")),
                             encoding="utf-8")
    stdout = io.StringIO()
    results = PredictTextTask(config, stdin=stdin).run(stdout=stdout)
    lines = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert lines == results
    return results


@pytest.mark.slow
def test_classifier_lines_equal_run_classifier_do_predict(fixtures_dir,
                                                          tmp_path):
    fixture = fixtures_dir / FIXTURE
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "test.tsv").write_bytes((fixture / "mrpc_test64.tsv")
                                        .read_bytes())
    run_task("run_classifier.py", fixture_flags(
        fixture, tmp_path / "out", task_name="MRPC", data_dir=data_dir,
        do_predict=True, max_seq_length=128))
    ours = np.loadtxt(tmp_path / "out" / "test_results.tsv", delimiter="\t")
    original = np.loadtxt(fixture / "mrpc_test64_test_results.tsv",
                          delimiter="\t")
    pairs = _mrpc_pairs(fixture)
    lines = "".join(f"{a}\t{b}\n" for a, b in pairs) + "\n"

    # 1. The script on an export, lines from --input_file.
    export_dir = export_saved_model(
        tmp_path / "export", model_type="classifier",
        label_list=["0", "1"], init_checkpoint=str(fixture),
        max_seq_length=128, **_model_flags(fixture))
    (tmp_path / "pairs.txt").write_text(lines, encoding="utf-8")
    # A fork of the warm script server runs it as `python predict_text.py`
    # would; nothing here is about TensorFlow's start-up.
    process = run_script_argv(
        "predict_text.py", f"--export_dir={export_dir}",
        f"--input_file={tmp_path / 'pairs.txt'}", "--batch_size=7",
        timeout=900)
    assert process.returncode == 0, process.stderr[-3000:]
    from_export = [json.loads(line) for line in process.stdout.splitlines()]

    # 2. The task on the checkpoint, lines from standard input.
    from_checkpoint = _run(PredictTextConfig(
        init_checkpoint=str(fixture), model_type="classifier",
        task_name="MRPC", batch_size=64, **_model_flags(fixture)), lines)

    for results in (from_export, from_checkpoint):
        assert [r["line"] for r in results] == list(range(1, 65))
        assert [(r["text_a"], r["text_b"]) for r in results] == pairs
        probabilities = np.array([[r["probabilities"]["0"],
                                   r["probabilities"]["1"]] for r in results])
        np.testing.assert_allclose(probabilities, ours, rtol=0, atol=1e-6)
        np.testing.assert_allclose(probabilities, original, rtol=0, atol=1e-5)
        assert [r["label"] for r in results] == [
            str(i) for i in ours.argmax(-1)]


@pytest.mark.slow
def test_tagger_and_multiple_choice_lines(fixtures_dir, tmp_path):
    fixture = fixtures_dir / FIXTURE
    tagger_dir = tmp_path / "ner_out"
    write_tagger_checkpoint(fixture, tagger_dir, seed=1, scale=2.0)
    texts = ["John Smith visited São Paulo.", "Jose\u0301\tmet 北京 people"]
    tagged = _run(PredictTextConfig(
        init_checkpoint=str(tagger_dir), model_type="tagger", text=texts,
        max_seq_length=16, doc_stride=4, **_model_flags(fixture)))
    module = build_serving_module(
        "tagger", init_checkpoint=str(tagger_dir), label_list=TAGS,
        max_seq_length=16, doc_stride=4, **_model_flags(fixture))
    served = module.tag_text(tf.constant(texts))
    for row, (text, result) in enumerate(zip(texts, tagged)):
        count = served["num_words"].numpy()[row]
        assert result["text"] == text
        assert result["tags"] == [t.decode() for t in
                                  served["tag"].numpy()[row, :count]]
        assert len(result["words"]) == count
        for entity in result["entities"]:
            assert text[entity["char_start"]:entity["char_end"]] == (
                entity["text"])
            assert result["tags"][entity["word_start"]].endswith(
                entity["type"])
    assert tagged[1]["words"] == ["Jose\u0301", "met", "北", "京", "people"]

    choice_dir = tmp_path / "mc_out"
    write_multiple_choice_checkpoint(fixture, choice_dir, seed=2, scale=3.0)
    lines = ("The man picks up a guitar.\tHe plays it.\tHe eats it.\tHe flies.\n"
             "\n"
             "She opens the door.\tShe walks in.\tThe door sings.\n")
    chosen = _run(PredictTextConfig(
        init_checkpoint=str(choice_dir), model_type="multiple_choice",
        max_seq_length=24, batch_size=1, **_model_flags(fixture)), lines)
    assert [r["line"] for r in chosen] == [1, 3]
    assert chosen[1]["endings"] == ["She walks in.", "The door sings."]
    module = build_serving_module("multiple_choice",
                                  init_checkpoint=str(choice_dir),
                                  max_seq_length=24, **_model_flags(fixture))
    for result in chosen:
        out = module.multiple_choice(context=tf.constant([result["context"]]),
                                     endings=tf.constant([result["endings"]]))
        np.testing.assert_allclose(result["probabilities"],
                                   out["probabilities"].numpy()[0], atol=1e-6)
        assert result["choice"] == int(out["choice"].numpy()[0])


# -- bad input: one UserError naming what is wrong ----------------------------

@pytest.mark.parametrize("model_type, line, message", [
    ("classifier", "a\tb\tc", "line 2: 3 TAB-separated field(s); a classifier "
     "takes 1 or 2"),
    ("squad", "only a question", "line 2: 1 TAB-separated field(s); a squad "
     "takes 2"),
    ("multiple_choice", "a context without endings", "line 2: 1 "
     "TAB-separated field(s); a multiple_choice takes at least 2"),
])
def test_a_line_with_the_wrong_fields_is_named(model_type, line, message):
    with pytest.raises(UserError, match=re.escape("in.txt, " + message)):
        parse_rows([(1, "fine\tfine"), (2, line)], model_type, "in.txt")


def test_blank_lines_are_skipped_and_tabs_are_text_for_a_tagger():
    rows = parse_rows([(1, ""), (2, "a\tb\tc"), (3, "  ")], "tagger", "x")
    assert rows == [(2, ("a\tb\tc",))]
    with pytest.raises(UserError, match="x: no examples"):
        parse_rows([(1, ""), (2, " ")], "classifier", "x")


@pytest.mark.parametrize("config, message", [
    (dict(), "Give --export_dir .* or --init_checkpoint"),
    (dict(export_dir="e", init_checkpoint="c"), "exactly one"),
    (dict(init_checkpoint="c"), "needs --model_type"),
    (dict(init_checkpoint="c", model_type="pretrainer"),
     "--model_type=pretrainer: expected one of"),
    (dict(export_dir="e", text=["x"], input_file="f"), "not both"),
    (dict(export_dir="e", batch_size=0), "--batch_size=0"),
])
def test_flags_that_do_not_fit(config, message):
    with pytest.raises(UserError, match=message):
        PredictTextTask(PredictTextConfig(**config)).prepare()


def test_missing_export_and_labels(fixtures_dir, tmp_path):
    fixture = fixtures_dir / FIXTURE
    with pytest.raises(UserError, match=f"{tmp_path} is not an export of "
                       "export_saved_model.py"):
        PredictTextTask(PredictTextConfig(export_dir=str(tmp_path),
                                          text=["x"])).prepare()
    with pytest.raises(UserError, match="exactly one of --task_name"):
        PredictTextTask(PredictTextConfig(
            init_checkpoint=str(fixture), model_type="classifier",
            text=["x"], **_model_flags(fixture))).prepare()
    with pytest.raises(UserError, match="no label_list.txt in"):
        PredictTextTask(PredictTextConfig(
            init_checkpoint=str(fixture), model_type="tagger",
            text=["x"], **_model_flags(fixture))).prepare()
