"""BertMultipleChoice (BERT paper §4.4): the recipe computed independently.

Expectations come from NumPy on the model's own weights: each choice run
through the encoder on its own (`model.bert` on [batch, seq]) and scored by
hand with the head's vector, and a NumPy softmax cross-entropy over the
choices for the loss.
"""
import keras
import numpy as np
import pytest

from bert_tf1.modeling import BertConfig, BertMultipleChoice
from bert_tf1.modeling.models.multiple_choice import flatten_choices
from bert_tf1.modeling.naming import tf1_name

CONFIG = BertConfig(
    vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=32, max_position_embeddings=24, type_vocab_size=2)


def make_inputs(batch_size=3, num_choices=4, seq_length=8, seed=0):
    """Random ids; choice k of example i has 8 - (i + k) % 3 real tokens."""
    rng = np.random.default_rng(seed)
    shape = (batch_size, num_choices, seq_length)
    input_ids = rng.integers(1, CONFIG.vocab_size, shape)
    input_mask = np.ones(shape)
    segment_ids = np.zeros(shape)
    for i in range(batch_size):
        for k in range(num_choices):
            length = seq_length - (i + k) % 3
            input_mask[i, k, length:] = 0
            input_ids[i, k, length:] = 0
            segment_ids[i, k, length // 2:length] = 1
    return {"input_ids": input_ids.astype("int32"),
            "input_mask": input_mask.astype("int32"),
            "segment_ids": segment_ids.astype("int32")}


@pytest.fixture(scope="module")
def model():
    return BertMultipleChoice(CONFIG)


def numpy_softmax_cross_entropy(logits, labels):
    logits = np.asarray(logits, np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -log_probs[np.arange(len(labels)), labels]


def test_weights_have_the_tf1_names_and_shapes(model):
    names = {tf1_name(v): tuple(v.shape) for v in model.weights}
    assert names["cls/multiple_choice/output_weights"] == (1, 16)
    assert names["cls/multiple_choice/output_bias"] == (1,)
    others = set(names) - {"cls/multiple_choice/output_weights",
                           "cls/multiple_choice/output_bias"}
    assert others and all(name.startswith("bert/") for name in others)
    assert "bert/pooler/dense/kernel" in others


def test_scores_equal_each_choice_through_the_encoder_alone(model):
    """[batch, 4, seq] as [batch * 4, seq] gives, for choice k, what the
    encoder gives on choice k alone, scored by the one head vector."""
    inputs = make_inputs()
    logits = np.asarray(model(inputs, training=False))
    assert logits.shape == (3, 4)
    weights = np.asarray(model.multiple_choice.output_weights, np.float64)
    bias = np.asarray(model.multiple_choice.output_bias, np.float64)
    expected = np.zeros((3, 4))
    for k in range(4):
        choice = {key: value[:, k, :] for key, value in inputs.items()}
        pooled = np.asarray(model.bert(choice, training=False)["pooled_output"],
                            np.float64)
        expected[:, k] = pooled @ weights[0] + bias[0]
    np.testing.assert_allclose(logits, expected, atol=1e-5)
    # The scores differ between choices (guards against a constant head).
    assert np.ptp(expected, axis=1).min() > 1e-4
    # Reordering the choices reorders the scores, nothing else.
    order = [2, 0, 3, 1]
    shuffled = {key: value[:, order, :] for key, value in inputs.items()}
    np.testing.assert_allclose(np.asarray(model(shuffled, training=False)),
                               logits[:, order], atol=1e-5)


def test_any_number_of_choices(model):
    for num_choices in (2, 5):
        inputs = make_inputs(batch_size=2, num_choices=num_choices, seed=3)
        logits = np.asarray(model(inputs, training=False))
        assert logits.shape == (2, num_choices)
        first = {key: value[:, :1, :] for key, value in inputs.items()}
        np.testing.assert_allclose(
            np.asarray(model(first, training=False))[:, 0], logits[:, 0],
            atol=1e-5)


def test_loss_is_softmax_cross_entropy_over_the_choices(model):
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(5, 4)).astype("float32") * 3
    labels = np.array([0, 3, 1, 2, 3], "int32")
    loss = float(model.compute_loss(y=labels, y_pred=logits))
    assert loss == pytest.approx(
        numpy_softmax_cross_entropy(logits, labels).mean(), abs=1e-6)
    # Not four binary decisions: a sigmoid loss gives another number.
    sigmoid = np.mean(np.log1p(np.exp(-np.where(
        np.eye(4)[labels] > 0, logits, -logits))).sum(-1))
    assert abs(loss - sigmoid) > 0.1
    assert model.compute_loss(y=None, y_pred=logits) is None


def test_loss_on_the_model_outputs(model):
    inputs = make_inputs(seed=5)
    labels = np.array([1, 0, 3], "int32")
    logits = model(inputs, training=False)
    assert float(model.compute_loss(y=labels, y_pred=logits)) == pytest.approx(
        numpy_softmax_cross_entropy(logits, labels).mean(), abs=1e-6)


def test_flatten_choices():
    x = np.arange(2 * 3 * 5).reshape(2, 3, 5)
    rows = np.asarray(flatten_choices(x))
    assert rows.shape == (6, 5)
    for i in range(2):
        for k in range(3):
            np.testing.assert_array_equal(rows[i * 3 + k], x[i, k])
    with pytest.raises(ValueError, match="expects"):
        flatten_choices(np.zeros(3))


def test_keras_round_trip_is_exact(model, tmp_path):
    inputs = make_inputs()
    expected = np.asarray(model(inputs, training=False))
    path = tmp_path / "multiple_choice.keras"
    model.save(path)
    loaded = keras.models.load_model(path)  # no custom_objects
    assert type(loaded) is BertMultipleChoice
    assert [tf1_name(v) for v in loaded.weights] == [
        tf1_name(v) for v in model.weights]
    assert loaded.get_config() == model.get_config()
    np.testing.assert_array_equal(np.asarray(loaded(inputs, training=False)),
                                  expected)


def test_inputs_of_rank_2_name_the_expected_shape(model):
    inputs = {key: value[:, 0, :] for key, value in make_inputs().items()}
    with pytest.raises(ValueError, match=r"`input_ids` has shape \(3, 8\); "
                       r"expected rank 3, \[batch_size, num_choices, "
                       r"seq_length\]"):
        model(inputs)
    with pytest.raises(TypeError, match="BertMultipleChoice inputs must be "
                                        "a dict"):
        model(make_inputs()["input_ids"])


def test_dropout_only_in_training(model):
    inputs = make_inputs()
    first = np.asarray(model(inputs, training=False))
    np.testing.assert_array_equal(np.asarray(model(inputs, training=False)),
                                  first)
    assert np.abs(np.asarray(model(inputs, training=True)) - first).max() > 1e-6
