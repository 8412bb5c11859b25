"""extract_features.py: input rules, layer outputs and JSON lines.

Ground truth: the original's rules (shared/reference/original_bert.md
section 2) and shared/fixtures/tf1_vocab_mrpc_classifier (the original
model's encoder layer outputs for three reference rows).
"""
import json

import numpy as np
import pytest

from bert_tf1.data.extraction.features import (InputFeatures, compute_layer_outputs,
                                              convert_examples_to_features,
                                              feature_json_line, parse_layer_indexes,
                                              read_examples)
from bert_tf1.data.tokenization import FullTokenizer
from bert_tf1.tasks.errors import UserError, one_line
from tests.helpers.task_runner import run_task

FIXTURE = "tf1_vocab_mrpc_classifier"


@pytest.fixture(scope="module")
def tokenizer(fixtures_dir):
    return FullTokenizer(fixtures_dir / FIXTURE / "vocab.txt", True)


def test_read_examples(tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(
        b"  Hello world ||| How are you?  \n"
        b"one ||| two ||| three\n"
        b"\n"
        b"no pair |||\n"
        b"single\r\n"
        b"last line without newline")
    examples = [(e.unique_id, e.text_a, e.text_b)
                for e in read_examples(str(path))]
    assert examples == [
        (0, "Hello world", "How are you?"),
        (1, "one ||| two", "three"),   # split at the last " ||| "
        (2, "", None),
        (3, "no pair |||", None),      # stripped, so no " ||| " left
        (4, "single", None),
        (5, "last line without newline", None),
    ]


def test_features_follow_the_original_rules(tokenizer):
    from bert_tf1.data.extraction.features import InputExample
    examples = [
        InputExample(0, "the cat sat on the mat", "a dog"),
        InputExample(1, "the cat sat on the mat today", None),
        InputExample(2, "the cat", "\u0e38"),   # text_b tokenizes to nothing
        InputExample(3, "", None),
    ]
    features = convert_examples_to_features(examples, 8, tokenizer)
    # Pair: 5 wordpieces fit (8 - 3); the longer A loses its last tokens.
    assert features[0].tokens == ["[CLS]", "the", "cat", "sat", "[SEP]", "a",
                                  "dog", "[SEP]"]
    assert features[0].input_type_ids == [0] * 5 + [1] * 3
    # Single: 6 wordpieces (8 - 2).
    assert features[1].tokens == ["[CLS]", "the", "cat", "sat", "on", "the",
                                  "mat", "[SEP]"]
    assert features[2].tokens == ["[CLS]", "the", "cat", "[SEP]"]
    assert features[2].input_mask == [1] * 4 + [0] * 4
    assert features[2].input_ids[4:] == [0] * 4
    assert features[3].tokens == ["[CLS]", "[SEP]"]
    assert features[0].input_ids == tokenizer.convert_tokens_to_ids(
        features[0].tokens)


def test_layer_indexes():
    assert parse_layer_indexes("-1,-2,0", 2) == [-1, -2, 0]
    with pytest.raises(ValueError, match="out of range"):
        parse_layer_indexes("-3", 2)
    with pytest.raises(ValueError, match="comma-separated integers"):
        parse_layer_indexes("-1;-2", 2)


def test_json_line_format():
    feature = InputFeatures(7, ["[CLS]", "caf\u00e9", "[SEP]"], [1, 2, 3, 0],
                            [1, 1, 1, 0], [0, 0, 0, 0])
    outputs = [np.array([[0.1234564, -2.0], [1e-7, 3.0000004],
                         [-0.0000006, 1.5], [9.0, 9.0]], np.float32)]
    line = feature_json_line(feature, outputs, [-1])
    assert line.endswith("}\n") and line.count("\n") == 1
    assert line.startswith('{"linex_index": 7, "features": [{"token": '
                           '"[CLS]", "layers": [{"index": -1, "values": [')
    assert '"caf\\u00e9"' in line  # json.dumps escapes non-ASCII
    parsed = json.loads(line)
    values = [token["layers"][0]["values"] for token in parsed["features"]]
    # float32 values widened to float, then round(x, 6); padding left out.
    assert values == [[round(float(np.float32(0.1234564)), 6), -2.0],
                      [0.0, round(float(np.float32(3.0000004)), 6)],
                      [round(float(np.float32(-0.0000006)), 6), 1.5]]


def test_layer_outputs_match_original_encoder_layers(fixtures_dir):
    from bert_tf1.modeling import BertConfig, BertModel, checkpoints

    fixture = fixtures_dir / FIXTURE
    reference = dict(np.load(fixture / "reference_outputs.npz"))
    model = BertModel(BertConfig.from_json_file(fixture / "bert_config.json"))
    checkpoints.load_tf1_checkpoint(model, fixture / "bert_model.ckpt",
                                    verbose=False)
    features = [InputFeatures(
        i, ["x"] * int(reference["input_mask"][i].sum()),
        list(reference["input_ids"][i]), list(reference["input_mask"][i]),
        list(reference["segment_ids"][i])) for i in range(3)]
    results = list(compute_layer_outputs(model, features, [-1, -2, 0],
                                         batch_size=2))
    assert [feature.unique_id for feature, _ in results] == [0, 1, 2]
    for row, (_, (last, second_last, first)) in enumerate(results):
        np.testing.assert_allclose(last, reference["encoder_layer_1"][row],
                                   atol=1e-5)
        np.testing.assert_allclose(second_last,
                                   reference["encoder_layer_0"][row],
                                   atol=1e-5)
        np.testing.assert_array_equal(first, second_last)


def test_script_end_to_end(tmp_path, fixtures_dir):
    from bert_tf1.modeling import BertConfig, BertModel, checkpoints

    fixture = fixtures_dir / FIXTURE
    input_file = tmp_path / "input.txt"
    input_file.write_text("Hello world ||| How are you?\n"
                          "A single sentence about a caf\u00e9.\n\n",
                          encoding="utf-8")
    output_file = tmp_path / "out" / "features.jsonl"
    flags = {"input_file": input_file, "output_file": output_file,
             "vocab_file": fixture / "vocab.txt",
             "bert_config_file": fixture / "bert_config.json",
             "init_checkpoint": fixture / "bert_model.ckpt",
             "layers": "-1,-2", "max_seq_length": 16, "batch_size": 2}
    run_task("extract_features.py", flags)
    lines = output_file.read_text(encoding="ascii").splitlines()
    assert len(lines) == 3
    assert sorted(p.name for p in output_file.parent.iterdir()) == [
        "features.jsonl"]

    tokenizer = FullTokenizer(fixture / "vocab.txt", True)
    features = convert_examples_to_features(read_examples(str(input_file)),
                                            16, tokenizer)
    model = BertModel(BertConfig.from_json_file(fixture / "bert_config.json"))
    checkpoints.load_tf1_checkpoint(model, fixture / "bert_model.ckpt",
                                    verbose=False)
    expected = compute_layer_outputs(model, features, [-1, -2], 3)
    for line, (feature, outputs) in zip(lines, expected):
        parsed = json.loads(line)
        assert list(parsed) == ["linex_index", "features"]
        assert parsed["linex_index"] == feature.unique_id
        assert [t["token"] for t in parsed["features"]] == feature.tokens
        for position, token in enumerate(parsed["features"]):
            assert [layer["index"] for layer in token["layers"]] == [-1, -2]
            for layer, output in zip(token["layers"], outputs):
                np.testing.assert_allclose(layer["values"], output[position],
                                           atol=1e-5)
    assert json.loads(lines[2])["features"][1]["token"] == "[SEP]"

    with pytest.raises(UserError) as error:
        run_task("extract_features.py", dict(
            flags, layers="-3", output_file=tmp_path / "out" / "other.jsonl"))
    assert "out of range" in one_line(error.value)
    assert not (tmp_path / "out" / "other.jsonl").exists()
