"""predict_text.py --export_dir over each of the five format folders that
`export_model(formats=...)` wrote from an in-memory model
(bert_tf1/serving/predictions.py): the in-memory model's own results
through the same rules (probabilities, SQuAD scores and embeddings within
1e-4; the same labels, choices, answers, words, tags and entities), for
the fixture classifier, SQuAD, tagger, multiple-choice and encoder models.
A handful of inputs each, chosen to reach truncation, windows and the
empty cases (test_deploy_formats.py compares the numbers on 200 inputs)."""
import io
import json
import sys

import numpy as np
import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.serving.formats import FORMATS
from bert_tf1.serving.predictions import open_export, predictor_of_model
from bert_tf1.tasks.predict_text import PredictTextConfig, PredictTextTask

pytest.importorskip(
    "openvino", reason="--format needs the [deploy] extra (pip install -e '.[deploy]'; run_tests.sh installs it)")
TOLERANCE = 1e-4
LONG = ("The committee met in Geneva on Tuesday, and after a long debate "
        "about the budget of the new hospital in São Paulo, Maria Silva "
        "signed the agreement with the mayor of 北京 and left for Zürich.")
LINES = {
    "classifier": ["He said hello.\tHe greeted us.", "A single text.",
                   "Only A here\t", LONG, f"{LONG}\t{LONG}"],
    "squad": ["Where did the committee meet?\t" + LONG,
              "Who signed?\t" + " ".join([LONG] * 3),
              "What is here?\t\u200b", "Who?\tMaria."],
    "tagger": [LONG, " ".join([LONG] * 2), "Jose\u0301\tmet 北京 people",
               "\u200b", "!!"],
    "encoder": ["He said hello.\tHe greeted us.", "A single text.", LONG],
    "multiple_choice": ["The man picks up a guitar.\tHe plays it.\tHe eats "
                        "it.\tHe flies.", "She opens the door.\tShe walks in."
                        "\tThe door sings.", f"{LONG}\t{LONG}\tNo."],
}


def _predict(export_dir, lines):
    stdout = io.StringIO()
    results = PredictTextTask(PredictTextConfig(
        export_dir=str(export_dir), text=lines, batch_size=2)).run(
            stdout=stdout)
    assert [json.loads(line) for line in stdout.getvalue().splitlines()] == (
        results)
    return results


def _split_numbers(result):
    """(the result without its numbers, the numbers as a flat list)."""
    numbers, rest = [], {}
    for key, value in result.items():
        if key == "score" and value is not None:
            numbers.append(value)
        elif key == "embedding":
            numbers += value
            rest[key] = len(value)
        elif key == "probabilities":
            numbers += list(value.values() if isinstance(value, dict)
                            else value)
            rest[key] = list(value) if isinstance(value, dict) else len(value)
        else:
            rest[key] = value
    return rest, numbers


def _in_memory(exports, model_type, lines):
    """The in-memory model's results of `lines`, by the same rules."""
    folder, arguments = exports(model_type)
    model, preprocessor = exports.models[model_type]
    rules = {key: arguments[key] for key in ("pooling", "doc_stride")
             if key in arguments}
    predictor = predictor_of_model(model, preprocessor, model_type,
                                   arguments.get("label_list"), **rules)
    rows = [tuple(line.split("\t")) if model_type != "tagger" else (line,)
            for line in lines]
    return predictor.predict(rows, batch_size=2)


@pytest.mark.parametrize("model_type", sorted(LINES))
def test_each_format_gives_the_in_memory_models_results(model_type, exports):
    folder, _ = exports(model_type)
    want = _in_memory(exports, model_type, LINES[model_type])
    differences = {}
    for name in FORMATS:
        got = _predict(folder / name, LINES[model_type])
        assert [r["line"] for r in got] == list(range(1, len(want) + 1))
        difference = 0.0
        for mine, theirs in zip(got, want):
            mine_rest, mine_numbers = _split_numbers(mine)
            their_rest, their_numbers = _split_numbers(theirs)
            assert {key: value for key, value in mine_rest.items()
                    if key in their_rest} == their_rest, name
            if their_numbers:
                difference = max(difference, float(np.max(np.abs(
                    np.subtract(mine_numbers, their_numbers)))))
        assert difference <= TOLERANCE, (name, difference)
        differences[name] = difference
    print(f"{model_type}: largest difference {differences}", file=sys.stderr)
    if model_type == "squad":   # the cases the lines were chosen for
        # No span fits: the original's placeholder answer.
        assert want[2]["answer"] == "empty"
        assert want[0]["answer"] and want[1]["answer"]
    if model_type == "tagger":
        assert want[3]["words"] == [] and want[4]["words"] == ["!", "!"]
        assert want[2]["words"] == ["Jose\u0301", "met", "北", "京", "people"]
    if model_type == "encoder":
        assert len(want[0]["embedding"]) == exports.models[
            "encoder"][0].config.hidden_size


def test_folders_that_are_no_single_export(exports, tmp_path):
    folder, _ = exports("classifier")
    with pytest.raises(UserError, match=r"format folders litert, numeric, "
                       r"onnx, openvino, saved_model: give one"):
        open_export(folder)
    with pytest.raises(UserError, match="not an export"):
        open_export(tmp_path)
    with pytest.raises(UserError, match="serves a classifier model, not "
                       "--model_type=squad"):
        open_export(folder / "onnx", "squad")
