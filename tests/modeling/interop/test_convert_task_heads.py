"""The tagging and multiple-choice heads across layouts: Hugging Face
`BertForTokenClassification` / `BertForMultipleChoice` both ways, and a
tagger started from a keras-hub backbone's weights.

Exact round trips always; with torch and transformers installed (optional),
transformers' own models on the converted weights must give our logits.
"""
import json

import numpy as np
import pytest
from safetensors.numpy import load_file

from bert_tf1.modeling import BertConfig, checkpoints
from bert_tf1.modeling.checkpoints import model_weights_by_name
from bert_tf1.modeling.conversion import tf1
from bert_tf1.modeling.conversion.convert import convert
from bert_tf1.modeling.interop import huggingface
from bert_tf1.modeling.models import BertModel, BertMultipleChoice, BertTokenClassifier
from tests.helpers.script_runner import run_script
from tests.helpers.task_checkpoints import (TAGS,
                                            write_multiple_choice_checkpoint,
                                            write_tagger_checkpoint)

HF_TOLERANCE = 1e-5
FIXTURE = "tf1_tiny_classifier"   # hidden 64, vocab 512, 2 layers

# The optional peer (not in run_tests.sh's extras, so CI skips these); the
# stored transformers outputs of fixtures/hf_all_minilm_l6_v2 are checked
# without it (tests/tasks/test_real_model.py).
PEER_REASON = ("needs torch and transformers (pip install torch transformers) "
               "to run transformers' own model beside ours")


@pytest.fixture(scope="module")
def tagger_dir(fixtures_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tagger")
    write_tagger_checkpoint(fixtures_dir / FIXTURE, folder, seed=3)
    (folder / "bert_config.json").write_bytes(
        (fixtures_dir / FIXTURE / "bert_config.json").read_bytes())
    return folder


@pytest.fixture(scope="module")
def choice_dir(fixtures_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("choice")
    write_multiple_choice_checkpoint(fixtures_dir / FIXTURE, folder, seed=4)
    (folder / "bert_config.json").write_bytes(
        (fixtures_dir / FIXTURE / "bert_config.json").read_bytes())
    return folder


def _tiny_config():
    return BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1,
                      num_attention_heads=2, intermediate_size=16,
                      max_position_embeddings=16, type_vocab_size=2)


@pytest.mark.parametrize("model_class, architecture", [
    (lambda c: BertTokenClassifier(c, 5), "BertForTokenClassification"),
    (BertMultipleChoice, "BertForMultipleChoice")])
def test_head_names_map_both_ways(model_class, architecture):
    names = model_weights_by_name(model_class(_tiny_config()))
    heads = sorted(name for name in names if name.startswith("cls/"))
    assert len(heads) == 2
    for name in names:
        theirs, transpose = huggingface.hf_name(name)
        assert huggingface.tf1_name(theirs, architecture) == (name, transpose)
    assert {huggingface.hf_name(name)[0] for name in heads} == {
        "classifier.weight", "classifier.bias"}
    assert huggingface.architecture(names) == architecture
    # Without an architecture, `classifier.*` stays run_classifier.py's head.
    assert huggingface.tf1_name("classifier.weight") == ("output_weights", False)


def _assert_same(weights, again):
    assert sorted(again) == sorted(weights)
    for name, value in weights.items():
        assert again[name].dtype == value.dtype
        np.testing.assert_array_equal(again[name], value, err_msg=name)


def test_tagger_round_trip_is_exact_and_keeps_the_tags(tagger_dir, tmp_path):
    _, weights = tf1.read_tf1_weights(tagger_dir)
    hf_dir = convert("tf1", str(tagger_dir), "huggingface",
                     str(tmp_path / "hf"), label_names=TAGS)
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["architectures"] == ["BertForTokenClassification"]
    assert config["id2label"] == {str(i): tag for i, tag in enumerate(TAGS)}
    assert config["label2id"]["I-PER"] == 6
    tensors = load_file(f"{hf_dir}/model.safetensors")
    np.testing.assert_array_equal(tensors["classifier.weight"],
                                  weights["cls/tagging/output_weights"])
    assert tensors["classifier.weight"].shape == (len(TAGS), 64)
    assert huggingface.read_label_names(hf_dir) == TAGS

    back = convert("huggingface", hf_dir, "tf1", str(tmp_path / "tf1"))
    _, again = tf1.read_tf1_weights(back)
    _assert_same(weights, again)
    # The tags come back as the label_list.txt export_saved_model.py reads.
    assert (tmp_path / "tf1" / "label_list.txt").read_text().split() == TAGS


def test_multiple_choice_round_trip_is_exact(choice_dir, tmp_path):
    _, weights = tf1.read_tf1_weights(choice_dir)
    hf_dir = convert("tf1", str(choice_dir), "huggingface", str(tmp_path / "hf"))
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["architectures"] == ["BertForMultipleChoice"]
    tensors = load_file(f"{hf_dir}/model.safetensors")
    assert tensors["classifier.weight"].shape == (1, 64)
    assert tensors["classifier.bias"].shape == (1,)
    back = convert("huggingface", hf_dir, "tf1", str(tmp_path / "tf1"))
    _, again = tf1.read_tf1_weights(back)
    _assert_same(weights, again)
    assert not (tmp_path / "tf1" / "label_list.txt").exists()


def test_classifier_tensors_follow_the_architecture(tagger_dir):
    _, weights = tf1.read_tf1_weights(tagger_dir)
    tensors = huggingface.tf1_to_hf(weights)
    as_tagger = huggingface.hf_to_tf1(tensors, "BertForTokenClassification")
    assert "cls/tagging/output_weights" in as_tagger
    as_classifier = huggingface.hf_to_tf1(tensors)
    assert "output_weights" in as_classifier
    assert "cls/tagging/output_weights" not in as_classifier


def test_default_label_names_say_nothing(tagger_dir, tmp_path):
    hf_dir = convert("tf1", str(tagger_dir), "huggingface", str(tmp_path / "hf"))
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["id2label"]["3"] == "3"
    assert huggingface.read_label_names(hf_dir) is None


def test_label_names_must_fit_the_head(tagger_dir, tmp_path):
    prefix, weights = tf1.read_tf1_weights(tagger_dir)
    with pytest.raises(ValueError, match="3 label names for a tagging head of 7"):
        tf1.write_tf1_checkpoint(weights, tf1.find_config(prefix),
                                 str(tmp_path / "x"),
                                 label_names=["O", "B-X", "I-X"])
    assert not (tmp_path / "x").exists()


def test_a_tagger_starts_from_a_keras_hub_backbone(fixtures_dir, tmp_path):
    """keras-hub -> TF1 gives an encoder checkpoint; a tagger loads every
    encoder weight from it (only its new head is left initialised) and
    computes the original encoder's sequence output."""
    fixture = fixtures_dir / FIXTURE
    preset = convert("tf1", str(fixture), "keras_hub", str(tmp_path / "preset"))
    encoder_dir = tmp_path / "encoder"
    convert("keras_hub", preset, "tf1", str(encoder_dir))
    config = BertConfig.from_json_file(encoder_dir / "bert_config.json")
    tagger = BertTokenClassifier(config, len(TAGS))
    status = checkpoints.load_tf1_checkpoint(tagger, encoder_dir, verbose=False)
    assert sorted(status.missing) == ["cls/tagging/output_bias",
                                      "cls/tagging/output_weights"]
    assert len(status.loaded) == len(model_weights_by_name(BertModel(config)))
    reference = np.load(fixture / "reference_outputs.npz")
    inputs = {key: reference[key] for key in ("input_ids", "input_mask",
                                              "segment_ids")}
    sequence = tagger.bert(inputs, training=False)["sequence_output"]
    np.testing.assert_allclose(np.asarray(sequence),
                               reference["sequence_output"], rtol=0, atol=1e-5)


@pytest.mark.slow
def test_convert_script_carries_a_tagger_and_its_tags(tagger_dir, tmp_path):
    run_script("convert_checkpoint.py", {
        "input_format": "tf1", "input_path": tagger_dir,
        "output_format": "huggingface", "output_path": tmp_path / "hf"})
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert config["id2label"] == {str(i): tag for i, tag in enumerate(TAGS)}
    run_script("convert_checkpoint.py", {
        "input_format": "huggingface", "input_path": tmp_path / "hf",
        "output_format": "tf1", "output_path": tmp_path / "tf1"})
    _assert_same(tf1.read_tf1_weights(tagger_dir)[1],
                 tf1.read_tf1_weights(tmp_path / "tf1")[1])
    assert (tmp_path / "tf1" / "label_list.txt").read_text() == (
        tagger_dir / "label_list.txt").read_text()


# -- with transformers + torch (optional) -----------------------------------

def _torch_inputs(torch, ids, mask, segments):
    return {"input_ids": torch.tensor(ids).long(),
            "attention_mask": torch.tensor(mask).long(),
            "token_type_ids": torch.tensor(segments).long()}


@pytest.mark.slow
def test_transformers_token_classifier_gives_our_logits(fixtures_dir, tagger_dir,
                                                        tmp_path):
    torch = pytest.importorskip("torch", reason=PEER_REASON)
    transformers = pytest.importorskip("transformers", reason=PEER_REASON)
    hf_dir = convert("tf1", str(tagger_dir), "huggingface",
                     str(tmp_path / "hf"), label_names=TAGS)
    model = transformers.BertForTokenClassification.from_pretrained(hf_dir).eval()
    assert model.config.id2label[5] == "B-PER"
    reference = np.load(fixtures_dir / FIXTURE / "reference_outputs.npz")
    keys = ("input_ids", "input_mask", "segment_ids")
    ours = BertTokenClassifier(
        BertConfig.from_json_file(tagger_dir / "bert_config.json"), len(TAGS))
    checkpoints.load_tf1_checkpoint(ours, tagger_dir, verbose=False)
    expected = np.asarray(ours({k: reference[k] for k in keys}, training=False))
    with torch.no_grad():
        logits = model(**_torch_inputs(torch, *(reference[k] for k in keys))
                       ).logits.numpy()
    assert logits.shape == (3, 24, len(TAGS))
    np.testing.assert_allclose(logits, expected, rtol=0, atol=HF_TOLERANCE)
    assert (np.diff(expected.argmax(-1), axis=1) != 0).any()  # tags vary

    # transformers' own file has no pooler: read back as zeros.
    model.save_pretrained(tmp_path / "resaved")
    again, _ = huggingface.load_hf(str(tmp_path / "resaved"))
    weights = tf1.read_tf1_weights(tagger_dir)[1]
    for name in ("bert/pooler/dense/kernel", "bert/pooler/dense/bias"):
        assert not again.pop(name).any()
        weights.pop(name)
    _assert_same(weights, again)


@pytest.mark.slow
def test_transformers_multiple_choice_gives_our_logits(fixtures_dir, choice_dir,
                                                       tmp_path):
    torch = pytest.importorskip("torch", reason=PEER_REASON)
    transformers = pytest.importorskip("transformers", reason=PEER_REASON)
    hf_dir = convert("tf1", str(choice_dir), "huggingface", str(tmp_path / "hf"))
    model = transformers.BertForMultipleChoice.from_pretrained(hf_dir).eval()
    reference = np.load(fixtures_dir / FIXTURE / "reference_outputs.npz")
    keys = ("input_ids", "input_mask", "segment_ids")
    # Two examples of three choices: the fixture's three rows, in two orders.
    order = [[0, 1, 2], [2, 0, 1]]
    inputs = {k: reference[k][order] for k in keys}
    ours = BertMultipleChoice(
        BertConfig.from_json_file(choice_dir / "bert_config.json"))
    checkpoints.load_tf1_checkpoint(ours, choice_dir, verbose=False)
    expected = np.asarray(ours(inputs, training=False))
    with torch.no_grad():
        logits = model(**_torch_inputs(torch, *(inputs[k] for k in keys))
                       ).logits.numpy()
    assert logits.shape == (2, 3)
    np.testing.assert_allclose(logits, expected, rtol=0, atol=HF_TOLERANCE)
    np.testing.assert_allclose(logits[1], logits[0][[2, 0, 1]], rtol=0,
                               atol=HF_TOLERANCE)
    model.save_pretrained(tmp_path / "resaved")
    again, _ = huggingface.load_hf(str(tmp_path / "resaved"))
    _assert_same(tf1.read_tf1_weights(choice_dir)[1], again)
