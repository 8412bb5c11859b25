"""TF1 checkpoints <-> Hugging Face BERT safetensors
(bert_tf1/modeling/interop/huggingface.py).

Without torch/transformers the tensors must round-trip exactly and follow
the name/transpose table; with them (optional, never a dependency) the
converted models must also give the original's outputs within 1e-4.
"""
import json

import numpy as np
import pytest
from safetensors.numpy import load_file

from bert_tf1.modeling import BertClassifier, BertConfig, BertPretrainer, BertSquad
from bert_tf1.modeling.checkpoints import model_weights_by_name
from bert_tf1.modeling.conversion import tf1
from bert_tf1.modeling.conversion.convert import convert
from bert_tf1.modeling.interop import huggingface
from tests.helpers.script_runner import run_script

HF_TOLERANCE = 1e-4
FIXTURES = ("tf1_tiny_pretraining", "tf1_tiny_classifier", "tf1_tiny_squad")
ARCHITECTURES = {"tf1_tiny_pretraining": "BertForPreTraining",
                 "tf1_tiny_classifier": "BertForSequenceClassification",
                 "tf1_tiny_squad": "BertForQuestionAnswering"}

# The optional peer (not in run_tests.sh's extras, so CI skips these); the
# stored transformers outputs of fixtures/hf_all_minilm_l6_v2 are checked
# without it (tests/tasks/test_real_model.py).
PEER_REASON = ("needs torch and transformers (pip install torch transformers) "
               "to run transformers' own model beside ours")


def fixture_weights(fixtures_dir, name):
    prefix, weights = tf1.read_tf1_weights(fixtures_dir / name)
    return weights, tf1.find_config(prefix)


def test_names_map_both_ways_for_every_weight():
    config = BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=16,
                        max_position_embeddings=16, type_vocab_size=2)
    names = set()
    for model in (BertPretrainer(config), BertSquad(config),
                  BertClassifier(config, 3)):
        names.update(model_weights_by_name(model))
    seen = set()
    for name in sorted(names):
        for prefix in ("bert.", ""):
            theirs, transpose = huggingface.hf_name(name, prefix)
            assert huggingface.tf1_name(theirs) == (name, transpose)
            assert transpose == name.endswith("/kernel")
        seen.add(huggingface.hf_name(name)[0])
    assert len(seen) == len(names)
    assert huggingface.hf_name(
        "bert/encoder/layer_1/attention/output/LayerNorm/gamma") == (
            "bert.encoder.layer.1.attention.output.LayerNorm.weight", False)
    assert huggingface.hf_name("cls/predictions/output_bias") == (
        "cls.predictions.bias", False)
    assert huggingface.tf1_name("bert.embeddings.position_ids") is None
    with pytest.raises(ValueError, match="No TF1 name"):
        huggingface.tf1_name("bert.encoder.layer.0.crossattention.self.query.weight")


@pytest.mark.parametrize("fixture", FIXTURES)
def test_round_trip_is_exact(fixtures_dir, tmp_path, fixture):
    weights, config = fixture_weights(fixtures_dir, fixture)
    hf_dir = convert("tf1", str(fixtures_dir / fixture), "huggingface",
                     str(tmp_path / "hf"))
    tensors = load_file(f"{hf_dir}/model.safetensors")
    hf_config = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert hf_config["architectures"] == [ARCHITECTURES[fixture]]
    assert hf_config["hidden_act"] == "gelu_new"  # the original's tanh gelu
    # Kernels are stored transposed ([out, in]); heads' output_weights as is.
    np.testing.assert_array_equal(
        tensors["bert.encoder.layer.0.intermediate.dense.weight"],
        weights["bert/encoder/layer_0/intermediate/dense/kernel"].T)
    assert len(tensors) == len(weights)

    back = convert("huggingface", hf_dir, "tf1", str(tmp_path / "tf1"))
    _, again = tf1.read_tf1_weights(back)
    assert sorted(again) == sorted(weights)
    for name, value in weights.items():
        assert again[name].dtype == value.dtype
        np.testing.assert_array_equal(again[name], value, err_msg=name)
    assert BertConfig.from_json_file(tmp_path / "tf1" / "bert_config.json") == config


def test_encoder_only_is_a_bare_bert_model(fixtures_dir, tmp_path):
    weights, _ = fixture_weights(fixtures_dir, "tf1_tiny_squad")
    hf_dir = convert("tf1", str(fixtures_dir / "tf1_tiny_squad"), "huggingface",
                     str(tmp_path / "hf"), encoder_only=True)
    tensors = load_file(f"{hf_dir}/model.safetensors")
    assert "embeddings.word_embeddings.weight" in tensors
    assert not any(name.startswith(("bert.", "qa_outputs")) for name in tensors)
    again, _ = huggingface.load_hf(hf_dir)
    assert sorted(again) == sorted(tf1.encoder_only(weights))


def test_tied_decoder_and_unsupported_configs(fixtures_dir, tmp_path):
    weights, config = fixture_weights(fixtures_dir, "tf1_tiny_pretraining")
    tensors = huggingface.tf1_to_hf(weights)
    tensors["cls.predictions.decoder.weight"] = tensors[
        "bert.embeddings.word_embeddings.weight"] + 1
    with pytest.raises(ValueError, match="ties them"):
        huggingface.hf_to_tf1(tensors)
    hf = huggingface.hf_config(config, "BertModel")
    assert huggingface.config_from_hf(hf) == config
    with pytest.raises(ValueError, match="layer_norm_eps"):
        huggingface.config_from_hf(dict(hf, layer_norm_eps=1e-5))
    with pytest.raises(ValueError, match="position_embedding_type"):
        huggingface.config_from_hf(dict(hf, position_embedding_type="relative_key"))
    with pytest.raises(FileNotFoundError, match="config.json"):
        huggingface.load_hf(str(tmp_path))


@pytest.mark.slow
def test_convert_script_round_trip_and_one_line_errors(fixtures_dir, tmp_path):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    run_script("convert_checkpoint.py", {
        "input_format": "tf1", "input_path": fixture,
        "output_format": "huggingface", "output_path": tmp_path / "hf"})
    assert (tmp_path / "hf" / "vocab.txt").read_bytes() == (
        fixture / "vocab.txt").read_bytes()
    run_script("convert_checkpoint.py", {
        "input_format": "huggingface", "input_path": tmp_path / "hf",
        "output_format": "tf1", "output_path": tmp_path / "tf1"})
    _, weights = tf1.read_tf1_weights(fixture)
    _, again = tf1.read_tf1_weights(tmp_path / "tf1")
    assert sorted(again) == sorted(weights)
    for name in weights:
        np.testing.assert_array_equal(again[name], weights[name])
    failed = run_script("convert_checkpoint.py", {
        "input_format": "tf1", "input_path": fixture,
        "output_format": "huggingface", "output_path": tmp_path / "hf"},
        check=False)
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines()[-1] == (
        f"convert_checkpoint.py: error: Output {tmp_path / 'hf'} already "
        "exists; not overwriting it. Choose a new path.")


# -- with transformers + torch (optional) -----------------------------------

def _torch_inputs(torch, reference):
    return {"input_ids": torch.tensor(reference["input_ids"]).long(),
            "attention_mask": torch.tensor(reference["input_mask"]).long(),
            "token_type_ids": torch.tensor(reference["segment_ids"]).long()}


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURES)
def test_transformers_gives_the_original_outputs(fixtures_dir, tmp_path, fixture):
    torch = pytest.importorskip("torch", reason=PEER_REASON)
    transformers = pytest.importorskip("transformers", reason=PEER_REASON)
    hf_dir = convert("tf1", str(fixtures_dir / fixture), "huggingface",
                     str(tmp_path / "hf"))
    model_class = getattr(transformers, ARCHITECTURES[fixture])
    model = model_class.from_pretrained(hf_dir).eval()
    reference = np.load(fixtures_dir / fixture / "reference_outputs.npz")
    with torch.no_grad():
        inputs = _torch_inputs(torch, reference)
        encoder = model.bert(**inputs)
        heads = model(**inputs)
    close = dict(rtol=0, atol=HF_TOLERANCE)
    np.testing.assert_allclose(encoder.last_hidden_state.numpy(),
                               reference["sequence_output"], **close)
    if fixture != "tf1_tiny_squad":  # transformers' QA model has no pooler
        np.testing.assert_allclose(encoder.pooler_output.numpy(),
                                   reference["pooled_output"], **close)
    if fixture == "tf1_tiny_pretraining":
        log_probs = torch.log_softmax(heads.prediction_logits, -1).numpy()
        positions = reference["masked_lm_positions"]
        gathered = np.concatenate([log_probs[row, positions[row]]
                                   for row in range(len(positions))])
        np.testing.assert_allclose(gathered, reference["masked_lm_log_probs"],
                                   **close)
        np.testing.assert_allclose(
            torch.log_softmax(heads.seq_relationship_logits, -1).numpy(),
            reference["next_sentence_log_probs"], **close)
    elif fixture == "tf1_tiny_classifier":
        np.testing.assert_allclose(heads.logits.numpy(),
                                   reference["classifier_logits"], **close)
    else:
        np.testing.assert_allclose(heads.start_logits.numpy(),
                                   reference["start_logits"], **close)
        np.testing.assert_allclose(heads.end_logits.numpy(),
                                   reference["end_logits"], **close)

    # What transformers itself writes converts back to the same weights.
    model.save_pretrained(tmp_path / "resaved")
    weights, _ = fixture_weights(fixtures_dir, fixture)
    again, _ = huggingface.load_hf(str(tmp_path / "resaved"))
    assert sorted(again) == sorted(weights)
    if fixture == "tf1_tiny_squad":  # dropped by transformers: zeros
        for name in ("bert/pooler/dense/kernel", "bert/pooler/dense/bias"):
            assert not again.pop(name).any()
            weights.pop(name)
    for name, value in weights.items():
        np.testing.assert_array_equal(again[name], value, err_msg=name)


@pytest.mark.slow
def test_transformers_reproduces_run_classifier_predictions(fixtures_dir, tmp_path):
    torch = pytest.importorskip("torch", reason=PEER_REASON)
    transformers = pytest.importorskip("transformers", reason=PEER_REASON)
    import csv

    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    hf_dir = convert("tf1", str(fixture), "huggingface", str(tmp_path / "hf"))
    model = transformers.BertForSequenceClassification.from_pretrained(hf_dir).eval()
    tokenizer = transformers.BertTokenizer.from_pretrained(hf_dir)
    with open(fixture / "mrpc_test64.tsv", encoding="utf-8") as reader:
        rows = list(csv.reader(reader, delimiter="\t", quotechar=None))[1:]
    batch = tokenizer([row[3] for row in rows], [row[4] for row in rows],
                      truncation="longest_first", max_length=128,
                      padding="max_length", return_tensors="pt")
    with torch.no_grad():
        probabilities = torch.softmax(model(**batch).logits, -1).numpy()
    expected = np.loadtxt(fixture / "mrpc_test64_test_results.tsv",
                          delimiter="\t", dtype=np.float32)
    np.testing.assert_allclose(probabilities, expected, rtol=0, atol=HF_TOLERANCE)
