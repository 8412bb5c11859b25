"""extract_features.py --pooling / --l2_normalize / .npy output: one vector
per input line, equal to numpy over the per-token output; inconsistent
combinations refused before anything is written.

Model: shared/fixtures/tf1_vocab_mrpc_classifier (2 layers, hidden 32).
"""
import json

import numpy as np
import pytest

from bert_tf1.tasks.errors import UserError, one_line
from tests.helpers.task_runner import fixture_flags, run_task

FIXTURE = "tf1_vocab_mrpc_classifier"
LINES = ["Hello world ||| How are you?",
         "A single sentence about a caf\u00e9, longer than the others here.",
         "",
         "short"]


@pytest.fixture(scope="module")
def per_token(fixtures_dir, tmp_path_factory):
    """(flags, per-token last-layer vectors of each line, from the JSON).

    The per-token run keeps every batch at max_seq_length
    (--dynamic_padding=false); the pooled runs below cut their batches (the
    default; batches of 3: the last, "short", is cut from 16 positions to
    8), so they also check that cut batches pool as the fixed layout does."""
    folder = tmp_path_factory.mktemp("pooling")
    input_file = folder / "input.txt"
    input_file.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    flags = fixture_flags(fixtures_dir / FIXTURE, None,
                          input_file=input_file, max_seq_length=16,
                          batch_size=3)
    del flags["output_dir"]
    output = folder / "tokens.jsonl"
    run_task("extract_features.py", dict(flags, output_file=output,
                                         layers="-1", dynamic_padding=False))
    tokens = []
    for line in output.read_text().splitlines():
        features = json.loads(line)["features"]
        tokens.append(np.array([f["layers"][0]["values"] for f in features]))
    return flags, tokens


@pytest.mark.parametrize("pooling,l2_normalize", [
    ("mean", False), ("mean", True), ("max", False), ("cls", True)])
def test_pooled_vectors_are_numpy_over_the_tokens(per_token, tmp_path,
                                                  pooling, l2_normalize):
    flags, tokens = per_token
    output = tmp_path / "vectors.npy"
    run_task("extract_features.py", dict(flags, output_file=output,
                                         pooling=pooling,
                                         l2_normalize=l2_normalize))
    vectors = np.load(output)
    assert vectors.dtype == np.float32 and vectors.shape == (len(LINES), 32)
    expected = np.stack([{"mean": t.mean(axis=0), "max": t.max(axis=0),
                          "cls": t[0]}[pooling] for t in tokens])
    if l2_normalize:
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    # The JSON values are rounded to 6 decimals.
    np.testing.assert_allclose(vectors, expected, rtol=0, atol=2e-6)


def test_pooled_json_lines_and_default_layer(per_token, tmp_path):
    flags, tokens = per_token
    flags = {k: v for k, v in flags.items() if k != "layers"}
    output = tmp_path / "vectors.jsonl"
    run_task("extract_features.py", dict(flags, output_file=output,
                                         pooling="mean"))
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["linex_index"] for line in lines] == [0, 1, 2, 3]
    np.testing.assert_allclose([line["values"] for line in lines],
                               [t.mean(axis=0) for t in tokens], atol=2e-6)


@pytest.mark.parametrize("changes,expected", [
    ({"output_file": "x.npy"}, "--output_file=x.npy: a .npy file holds one "
     "vector per input line; pass --pooling (mean, cls or max)"),
    ({"l2_normalize": True}, "--l2_normalize needs --pooling"),
    ({"pooling": "mean", "layers": "-1,-2"}, "--pooling=mean pools one "
     "layer; --layers=-1,-2 names 2 (leave --layers out for the last "
     "layer)"),
    ({"pooling": "sum"}, "--pooling=sum: expected none, mean, cls, max"),
])
def test_inconsistent_combinations(per_token, tmp_path, changes, expected):
    flags, _ = per_token
    flags = dict(flags, output_file=tmp_path / "out.jsonl")
    if "output_file" in changes:
        changes = dict(changes, output_file=tmp_path / changes["output_file"])
        expected = expected.replace("x.npy", str(tmp_path / "x.npy"))
    with pytest.raises(UserError) as raised:
        run_task("extract_features.py", dict(flags, **changes))
    assert one_line(raised.value).startswith(expected)
    assert list(tmp_path.iterdir()) == []
