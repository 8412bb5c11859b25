"""predict_text.py --export_dir over each format folder of
export_saved_model.py --format (bert_tf1/serving/predictions.py): the same
JSON lines as over the raw-text SavedModel (probabilities and SQuAD scores
within 1e-4, the same labels, choices, answers, words, tags and entities),
for the fixture classifier, SQuAD, tagger and multiple-choice exports; an
encoder export is refused alike in every format. A handful of inputs each,
chosen to reach truncation, windows and the empty cases
(test_deploy_formats.py compares the numbers on 200 inputs)."""
import io
import json
import sys

import numpy as np
import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.serving.predictions import open_export
from bert_tf1.tasks.predict_text import PredictTextConfig, PredictTextTask

pytest.importorskip(
    "openvino", reason="--format needs the [deploy] extra (pip install -e '.[deploy]'; run_tests.sh installs it)")
TOLERANCE = 1e-4
OTHERS = ("numeric", "openvino", "litert", "onnx")
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
        elif key == "probabilities":
            numbers += list(value.values() if isinstance(value, dict)
                            else value)
            rest[key] = list(value) if isinstance(value, dict) else len(value)
        else:
            rest[key] = value
    return rest, numbers


@pytest.mark.parametrize("model_type", sorted(LINES))
def test_each_format_writes_the_saved_models_lines(model_type, exports):
    folder, _ = exports(model_type)
    want = _predict(folder / "saved_model", LINES[model_type])
    assert [r["line"] for r in want] == list(range(1, len(want) + 1))
    differences = {}
    for name in OTHERS:
        got = _predict(folder / name, LINES[model_type])
        assert len(got) == len(want), name
        difference = 0.0
        for mine, theirs in zip(got, want):
            mine_rest, mine_numbers = _split_numbers(mine)
            their_rest, their_numbers = _split_numbers(theirs)
            assert mine_rest == their_rest, name
            if their_numbers:
                difference = max(difference, float(np.max(np.abs(
                    np.subtract(mine_numbers, their_numbers)))))
        assert difference <= TOLERANCE, (name, difference)
        differences[name] = difference
    print(f"{model_type}: largest difference {differences}", file=sys.stderr)
    if model_type == "squad":   # the cases the lines were chosen for
        assert want[2] == dict(want[2], answer="", score=None)
        assert want[0]["answer"] and want[1]["answer"]
    if model_type == "tagger":
        assert want[3]["words"] == [] and want[4]["words"] == ["!", "!"]
        assert want[2]["words"] == ["Jose\u0301", "met", "北", "京", "people"]


def test_an_encoder_export_is_refused_alike(exports):
    folder, _ = exports("encoder")
    messages = set()
    for name in ("saved_model",) + OTHERS:
        with pytest.raises(UserError, match="extract_features.py") as error:
            _predict(folder / name, ["a text"])
        messages.add(str(error.value))
    assert len(messages) == 1


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
