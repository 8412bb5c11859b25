"""TF1 checkpoints <-> keras-hub BertBackbone (bert_tf1/modeling/interop/keras_hub.py)."""
import numpy as np
import pytest

from bert_tf1.modeling import BertConfig
from bert_tf1.modeling.conversion.convert import convert, read_weights
from bert_tf1.modeling.interop import keras_hub as interop_keras_hub
from bert_tf1.modeling.conversion import tf1

TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def pretraining(fixtures_dir):
    fixture = fixtures_dir / "tf1_tiny_pretraining"
    prefix, weights = tf1.read_tf1_weights(fixture)
    return fixture, weights, tf1.find_config(prefix)


def test_backbone_gives_the_original_encoder_outputs(pretraining):
    fixture, weights, config = pretraining
    backbone = interop_keras_hub.tf1_to_backbone(weights, config)
    reference = np.load(fixture / "reference_outputs.npz")
    outputs = backbone({"token_ids": reference["input_ids"],
                        "segment_ids": reference["segment_ids"],
                        "padding_mask": reference["input_mask"]}, training=False)
    for key in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(np.asarray(outputs[key]), reference[key],
                                   rtol=0, atol=TOLERANCE)


def test_attention_kernels_are_split_into_heads(pretraining):
    _, weights, config = pretraining
    backbone = interop_keras_hub.tf1_to_backbone(weights, config)
    by_path = {v.path: v.numpy() for v in backbone.weights}
    heads, size = config.num_attention_heads, config.head_size
    query = weights["bert/encoder/layer_1/attention/self/query/kernel"]
    theirs = by_path["transformer_layer_1/self_attention_layer/query/kernel"]
    # Head h, unit d of the [H, A, D] kernel is column h * D + d of [H, H].
    np.testing.assert_array_equal(theirs[:, 2, 3], query[:, 2 * size + 3])
    output = weights["bert/encoder/layer_1/attention/output/dense/kernel"]
    theirs = by_path["transformer_layer_1/self_attention_layer/attention_output/kernel"]
    assert theirs.shape == (heads, size, config.hidden_size)
    np.testing.assert_array_equal(theirs[3, 1], output[3 * size + 1])


@pytest.mark.parametrize("target", ["preset", "model.weights.h5"])
def test_round_trip_is_exact(pretraining, tmp_path, target):
    fixture, weights, _ = pretraining
    written = convert("tf1", str(fixture), "keras_hub", str(tmp_path / target))
    config_file = str(fixture / "bert_config.json")
    back = convert("keras_hub", written, "tf1", str(tmp_path / "back"),
                   bert_config_file=config_file)
    _, again = tf1.read_tf1_weights(back)
    encoder = tf1.encoder_only(weights)
    assert sorted(again) == sorted(encoder)
    for name, value in encoder.items():
        np.testing.assert_array_equal(again[name], value, err_msg=name)
    assert BertConfig.from_json_file(tmp_path / "back" / "bert_config.json") == (
        BertConfig.from_json_file(config_file))


@pytest.mark.slow
def test_preset_loads_with_keras_hub_and_keeps_the_vocab(fixtures_dir, tmp_path):
    import keras_hub

    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    preset = convert("tf1", str(fixture), "keras_hub", str(tmp_path / "preset"))
    backbone = keras_hub.models.BertBackbone.from_preset(preset)
    assert backbone.hidden_dim == 32 and backbone.num_layers == 2
    tokenizer = keras_hub.models.BertTokenizer.from_preset(preset)
    assert tokenizer.vocabulary_size() == 30522
    weights, _ = read_weights("keras_hub", preset)
    np.testing.assert_array_equal(
        weights["bert/pooler/dense/kernel"],
        tf1.read_tf1_weights(fixture)[1]["bert/pooler/dense/kernel"])


def test_refusals(pretraining, tmp_path):
    fixture, weights, config = pretraining
    with pytest.raises(FileExistsError, match="already exists"):
        convert("tf1", str(fixture), "keras_hub", str(tmp_path))
    with pytest.raises(ValueError, match="holds weights only"):
        read_weights("keras_hub", str(convert(
            "tf1", str(fixture), "keras_hub", str(tmp_path / "w.weights.h5"))))
    relu = BertConfig.from_dict(dict(config.to_dict(), hidden_act="relu"))
    with pytest.raises(ValueError, match="tanh-gelu only"):
        interop_keras_hub.tf1_to_backbone(weights, relu)
    with pytest.raises(ValueError, match="nothing to convert"):
        convert("tf1", str(fixture), "tf1", str(tmp_path / "x"))


def test_a_preset_name_is_not_downloaded(tmp_path, monkeypatch):
    """Only local folders and files are read: a keras-hub preset name or a
    hub handle is a missing file, and keras-hub's loader (which would fetch
    it) is never called."""
    import keras_hub

    def no_download(*args, **kwargs):
        raise AssertionError("from_preset was called")

    monkeypatch.setattr(keras_hub.models.BertBackbone, "from_preset",
                        no_download)
    monkeypatch.chdir(tmp_path)
    for name in ("bert_base_en_uncased", "kaggle://keras/bert/keras/bert_base_en",
                 "hf://google-bert/bert-base-uncased"):
        with pytest.raises(FileNotFoundError, match="No keras-hub preset"):
            interop_keras_hub.load_backbone(name)
