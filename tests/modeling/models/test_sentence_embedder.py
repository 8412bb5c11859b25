"""SentenceEmbedder: pooled vectors checked against NumPy pooling of the
encoder's own sequence output, rank-2 and rank-3 inputs, the `.keras` round
trip, `from_checkpoint` of the vocab fixture; and the pooling record
(`pooling.json`) of a model folder."""
import json

import keras
import numpy as np
import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling import BertConfig, SentenceEmbedder, checkpoints
from bert_tf1.modeling.pooling import (POOLING_FILE, read_pooling_record,
                                       write_pooling_record)
from tests.helpers.fixture_models import reference_outputs

CONFIG = BertConfig(
    vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=32, max_position_embeddings=24, type_vocab_size=2)
KEYS = ("input_ids", "input_mask", "segment_ids")


def make_inputs(batch_size=3, num_texts=2, seq_length=8, seed=0):
    """Random ids [batch, num_texts, seq]; text k of example i has
    8 - (i + 2k) % 4 real tokens (padding ids are 0)."""
    rng = np.random.default_rng(seed)
    shape = (batch_size, num_texts, seq_length)
    input_ids = rng.integers(1, CONFIG.vocab_size, shape)
    input_mask = np.ones(shape)
    for i in range(batch_size):
        for k in range(num_texts):
            length = seq_length - (i + 2 * k) % 4
            input_mask[i, k, length:] = 0
            input_ids[i, k, length:] = 0
    return {"input_ids": input_ids.astype("int32"),
            "input_mask": input_mask.astype("int32"),
            "segment_ids": np.zeros(shape, "int32")}


def numpy_pool(sequence_output, input_mask, pooling, l2_normalize):
    """The pooling rule written out in NumPy (float64)."""
    values = np.asarray(sequence_output, np.float64)
    mask = np.asarray(input_mask, np.float64)[..., None]
    if pooling == "cls":
        pooled = values[:, 0]
    elif pooling == "mean":
        pooled = (values * mask).sum(1) / mask.sum(1)
    else:
        pooled = np.where(mask > 0, values, -np.inf).max(1)
    if l2_normalize:
        pooled = pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)
    return pooled


@pytest.fixture(scope="module")
def encoder_model():
    return SentenceEmbedder(CONFIG)


@pytest.mark.parametrize("pooling, l2_normalize", [
    ("mean", False), ("mean", True), ("cls", False), ("max", True)])
def test_pooling_of_the_encoder_output(encoder_model, pooling, l2_normalize):
    model = SentenceEmbedder(pooling=pooling, l2_normalize=l2_normalize,
                             encoder=encoder_model.bert)
    inputs = make_inputs()
    pooled = np.asarray(model(inputs, training=False))
    assert pooled.shape == (3, 2, 16) and pooled.dtype == np.float32
    for k in range(2):
        text = {key: value[:, k] for key, value in inputs.items()}
        sequence = model.bert(text, training=False)["sequence_output"]
        expected = numpy_pool(sequence, text["input_mask"], pooling,
                              l2_normalize)
        np.testing.assert_allclose(pooled[:, k], expected, atol=2e-6)
        # rank 2: the same vectors as the rank-3 call's column k.
        np.testing.assert_allclose(np.asarray(model(text, training=False)),
                                   pooled[:, k], atol=1e-6)
    if l2_normalize:
        np.testing.assert_allclose(np.linalg.norm(pooled, axis=-1), 1.0,
                                   atol=1e-6)
    # Padding matters for mean/max: the texts differ in length.
    assert np.ptp(inputs["input_mask"].sum(-1)) > 0


def test_poolings_differ_and_dropout_applies(encoder_model):
    inputs = make_inputs(seed=1)
    mean = np.asarray(encoder_model(inputs, training=False))
    cls = np.asarray(SentenceEmbedder(pooling="cls", encoder=encoder_model.bert)(
        inputs, training=False))
    assert np.abs(mean - cls).max() > 1e-3
    trained = np.asarray(encoder_model(inputs, training=True))
    assert np.abs(trained - mean).max() > 1e-4


def test_bad_arguments(encoder_model):
    with pytest.raises(ValueError, match="pooling 'sum'"):
        SentenceEmbedder(CONFIG, pooling="sum")
    with pytest.raises(ValueError, match="mini_batch_size must be positive"):
        SentenceEmbedder(CONFIG, mini_batch_size=0)
    ids = np.ones((2, 2, 2, 4), "int32")
    with pytest.raises(ValueError, match=r"expected \[batch, seq_length\]"):
        encoder_model({"input_ids": ids})


def test_keras_round_trip_keeps_pooling(tmp_path, encoder_model):
    model = SentenceEmbedder(pooling="max", l2_normalize=True,
                             mini_batch_size=4, encoder=encoder_model.bert)
    config = model.get_config()
    assert (config["pooling"], config["l2_normalize"],
            config["mini_batch_size"]) == ("max", True, 4)
    path = tmp_path / "embedder.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, SentenceEmbedder)
    assert (loaded.pooling, loaded.l2_normalize, loaded.mini_batch_size) == (
        "max", True, 4)
    inputs = make_inputs(seed=2)
    np.testing.assert_allclose(np.asarray(loaded(inputs)),
                               np.asarray(model(inputs)), atol=1e-6)


def test_from_checkpoint_loads_the_encoder(fixtures_dir):
    folder = fixtures_dir / "tf1_vocab_mrpc_classifier"
    model = SentenceEmbedder.from_checkpoint(folder, l2_normalize=True)
    names = set(checkpoints.model_weights_by_name(model))
    assert names and all(name.startswith("bert/") for name in names)
    # The classifier head of the checkpoint is not part of the embedder.
    assert "output_weights" not in names
    assert names <= set(checkpoints.list_checkpoint(folder))
    reference = reference_outputs(folder)
    pooled = np.asarray(model({key: reference[key] for key in KEYS}))
    expected = numpy_pool(reference["sequence_output"],
                          reference["input_mask"], "mean", True)
    np.testing.assert_allclose(pooled, expected, atol=1e-5)


# -- the pooling record ------------------------------------------------------

def test_pooling_record_round_trip(tmp_path):
    folder = tmp_path / "model"
    assert read_pooling_record(folder) is None
    path = write_pooling_record(folder, "mean", True)
    assert path.endswith(POOLING_FILE)
    assert json.loads((folder / POOLING_FILE).read_text()) == {
        "pooling": "mean", "l2_normalize": True}
    assert read_pooling_record(folder) == ("mean", True)
    # The same record again is fine; nothing changes.
    write_pooling_record(folder, "mean", True)
    assert read_pooling_record(folder) == ("mean", True)
    assert sorted(p.name for p in folder.iterdir()) == [POOLING_FILE]


def test_a_different_record_is_refused(tmp_path):
    write_pooling_record(tmp_path, "cls", False)
    before = (tmp_path / POOLING_FILE).read_bytes()
    with pytest.raises(UserError) as error:
        write_pooling_record(tmp_path, "mean", True)
    message = str(error.value)
    assert str(tmp_path / POOLING_FILE) in message
    assert "pooling=cls, l2_normalize=false" in message
    assert "given pooling=mean, l2_normalize=true" in message
    assert "\n" not in message
    assert (tmp_path / POOLING_FILE).read_bytes() == before


@pytest.mark.parametrize("text", [
    "{not json", '["mean"]', '{"pooling": "sum", "l2_normalize": true}',
    '{"pooling": "mean", "l2_normalize": "yes"}'])
def test_a_bad_record_names_the_file(tmp_path, text):
    (tmp_path / POOLING_FILE).write_text(text)
    with pytest.raises(UserError, match=POOLING_FILE):
        read_pooling_record(tmp_path)


def test_bad_values_are_not_written(tmp_path):
    with pytest.raises(UserError, match="pooling 'sum'"):
        write_pooling_record(tmp_path / "m", "sum", True)
    assert not (tmp_path / "m").exists()


def test_lora_trains_the_adapters_only():
    model = SentenceEmbedder(CONFIG)
    assert not model.bert.pooler.trainable  # unused by the embedder
    model.enable_lora(2)
    names = sorted(v.path.rsplit("/", 1)[-1] for v in model.trainable_variables)
    # query and value of 2 layers, A and B each; the pooler stays frozen.
    assert names == ["lora_kernel_a"] * 4 + ["lora_kernel_b"] * 4
    again = SentenceEmbedder.from_config(model.get_config())
    assert len(again.trainable_variables) == 8
