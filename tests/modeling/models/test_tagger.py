"""The tagging models: BertTokenClassifier and BertFeatureTagger (the paper's
feature-based approach).

Expectations are computed independently: the six feature choices from
BertModel's own outputs with NumPy, the BiLSTM head with a NumPy LSTM
written here from the LSTM equations (Hochreiter & Schmidhuber; gates in
Keras' i, f, c, o order), the loss by hand.
"""
import keras
import numpy as np
import pytest

from bert_tf1.modeling import BertConfig, BertFeatureTagger, BertTokenClassifier
from bert_tf1.modeling.models.feature_tagger import (FEATURE_LAYERS,
                                                     check_feature_layers)
from bert_tf1.modeling.naming import tf1_name

CONFIG = BertConfig(
    vocab_size=50, hidden_size=8, num_hidden_layers=4, num_attention_heads=2,
    intermediate_size=16, max_position_embeddings=16)
NUM_LABELS = 5
UNITS = 3


def make_inputs(seed=0, batch_size=2, seq_length=7, padding=3):
    rng = np.random.default_rng(seed)
    mask = np.ones((batch_size, seq_length), np.int32)
    mask[1, seq_length - padding:] = 0
    ids = rng.integers(1, CONFIG.vocab_size, (batch_size, seq_length))
    return {"input_ids": (ids * mask).astype(np.int32), "input_mask": mask,
            "segment_ids": np.zeros((batch_size, seq_length), np.int32)}


def head_names(prefix="cls/tagging_lstm"):
    names = [f"{prefix}/output_weights", f"{prefix}/output_bias"]
    for layer in range(2):
        for direction in ("forward", "backward"):
            names += [f"{prefix}/layer_{layer}/{direction}_lstm/lstm_cell/"
                      f"{name}" for name in ("kernel", "recurrent_kernel",
                                              "bias")]
    return names


# ----- a NumPy BiLSTM, for the head -------------------------------------------

def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def numpy_lstm(x, length, kernel, recurrent, bias, reverse):
    """One LSTM direction over x[:length] ([T, in]); zeros elsewhere."""
    units = recurrent.shape[0]
    h, c = np.zeros(units), np.zeros(units)
    out = np.zeros((x.shape[0], units))
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for t in steps:
        z = x[t] @ kernel + h @ recurrent + bias
        i, f = _sigmoid(z[:units]), _sigmoid(z[units:2 * units])
        g, o = np.tanh(z[2 * units:3 * units]), _sigmoid(z[3 * units:])
        c = f * c + i * g
        h = o * np.tanh(c)
        out[t] = h
    return out


def numpy_head(head, features, mask):
    """The BiLSTM head's logits from its weights, without Keras."""
    weights = {tf1_name(w).split("tagging_lstm/")[1]: np.asarray(w, np.float64)
               for w in head.weights}
    logits = []
    for row, row_mask in zip(np.asarray(features, np.float64), mask):
        length = int(row_mask.sum())
        hidden = row
        for layer in range(2):
            parts = []
            for direction in ("forward", "backward"):
                scope = f"layer_{layer}/{direction}_lstm/lstm_cell/"
                parts.append(numpy_lstm(
                    hidden, length, weights[scope + "kernel"],
                    weights[scope + "recurrent_kernel"],
                    weights[scope + "bias"], direction == "backward"))
            hidden = np.concatenate(parts, axis=-1)
        logits.append(hidden @ weights["output_weights"].T
                      + weights["output_bias"])
    return np.stack(logits)


# ----- BertTokenClassifier ---------------------------------------------------

def test_token_classifier_names_logits_and_loss():
    model = BertTokenClassifier(CONFIG, NUM_LABELS)
    names = {tf1_name(w): tuple(w.shape) for w in model.weights}
    assert names["cls/tagging/output_weights"] == (NUM_LABELS, 8)
    assert names["cls/tagging/output_bias"] == (NUM_LABELS,)
    assert len([n for n in names if n.startswith("bert/")]) == 5 + 4 * 16 + 2
    inputs = make_inputs()
    logits = np.asarray(model(inputs, training=False))
    sequence = np.asarray(model.bert(inputs)["sequence_output"])
    weights = model.tagging.output_weights.numpy()
    np.testing.assert_allclose(
        logits, sequence @ weights.T + model.tagging.output_bias.numpy(),
        atol=1e-5)
    labels = np.array([[0, 1, 2, 3, 4, 0, 1], [4, 3, 2, 1, 0, 0, 0]])
    label_weights = np.zeros((2, 7), np.float32)
    label_weights[0, [1, 3, 4]] = 1.0
    label_weights[1, [0, 2]] = 1.0
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
    expected = (nll * label_weights).sum() / (label_weights.sum() + 1e-5)
    loss = model.compute_loss(x=dict(inputs, label_weights=label_weights),
                              y=labels, y_pred=logits)
    assert float(loss) == pytest.approx(expected, rel=1e-5)
    # sample_weight weights each example; the normaliser stays the number
    # of scored tokens.
    example_weights = np.array([0.5, 2.0], np.float32)
    weighted = (nll * label_weights * example_weights[:, None]).sum() / (
        label_weights.sum() + 1e-5)
    loss = model.compute_loss(x=dict(inputs, label_weights=label_weights),
                              y=labels, y_pred=logits,
                              sample_weight=example_weights)
    assert float(loss) == pytest.approx(weighted, rel=1e-5)


# ----- feature choices -------------------------------------------------------

def _expected_features(model, inputs, choice):
    out = model.bert(inputs, training=False)
    layers = [np.asarray(x) for x in out["encoder_outputs"]]
    return {
        "embeddings": np.asarray(out["embedding_output"]),
        "second_to_last": layers[2],
        "last": layers[3],
        "sum_last_four": layers[0] + layers[1] + layers[2] + layers[3],
        "concat_last_four": np.concatenate(
            [layers[3], layers[2], layers[1], layers[0]], axis=-1),
        "sum_all": sum(layers),
    }[choice]


@pytest.mark.parametrize("choice", FEATURE_LAYERS)
def test_each_feature_choice_and_the_cached_path(choice):
    model = BertFeatureTagger(CONFIG, NUM_LABELS, choice, lstm_units=UNITS)
    inputs = make_inputs(seed=1)
    features = np.asarray(model.encoder_features(inputs))
    expected = _expected_features(model, inputs, choice)
    assert features.shape == (2, 7, 32 if choice == "concat_last_four" else 8)
    np.testing.assert_allclose(features, expected, atol=1e-5)
    end_to_end = np.asarray(model(inputs, training=False))
    cached = np.asarray(model({"features": features,
                               "input_mask": inputs["input_mask"]},
                              training=False))
    assert np.array_equal(end_to_end, cached)
    np.testing.assert_allclose(
        end_to_end, numpy_head(model.head, features, inputs["input_mask"]),
        atol=1e-5)


def test_feature_tagger_freezes_the_encoder_and_names_the_head():
    model = BertFeatureTagger(CONFIG, NUM_LABELS, "last", lstm_units=UNITS)
    trainable = sorted(tf1_name(w) for w in model.trainable_weights)
    assert trainable == sorted(head_names())
    assert all(tf1_name(w).startswith("bert/") for w in model.weights
               if not tf1_name(w).startswith("cls/"))
    shapes = {tf1_name(w): tuple(w.shape) for w in model.weights}
    assert shapes["cls/tagging_lstm/layer_0/forward_lstm/lstm_cell/kernel"] \
        == (8, 4 * UNITS)
    assert shapes["cls/tagging_lstm/layer_1/backward_lstm/lstm_cell/kernel"] \
        == (2 * UNITS, 4 * UNITS)
    assert shapes["cls/tagging_lstm/output_weights"] == (NUM_LABELS,
                                                         2 * UNITS)


@pytest.mark.parametrize("choice, layers, pattern", [
    ("concat_last_four", 3, "needs at least 4 encoder layers"),
    ("sum_last_four", 2, "needs at least 4"),
    ("second_to_last", 1, "needs at least 2"),
    ("top_layer", 12, "unknown feature layers 'top_layer'; expected one of "
                      "embeddings, second_to_last"),
])
def test_feature_choice_errors(choice, layers, pattern):
    with pytest.raises(ValueError, match=pattern):
        check_feature_layers(choice, layers)


def test_padding_does_not_change_real_positions():
    """Both LSTM directions skip padding: a window padded to 12 gives the
    logits of the same window at its real 7 positions."""
    model = BertFeatureTagger(CONFIG, NUM_LABELS, "sum_all", lstm_units=UNITS)
    short = make_inputs(seed=2, padding=0)
    long = {key: np.pad(value, ((0, 0), (0, 5))) for key, value in
            short.items()}
    np.testing.assert_allclose(np.asarray(model(long))[:, :7],
                               np.asarray(model(short)), atol=1e-5)


# ----- .keras round trips ---------------------------------------------------

@pytest.mark.parametrize("build", [
    lambda: BertTokenClassifier(CONFIG, NUM_LABELS),
    lambda: BertFeatureTagger(CONFIG, NUM_LABELS, "concat_last_four",
                              lstm_units=UNITS),
], ids=["token_classifier", "feature_tagger"])
def test_keras_round_trip_is_exact(build, tmp_path):
    model = build()
    inputs = make_inputs(seed=4)
    expected = np.asarray(model(inputs, training=False))
    model.save(tmp_path / "tagger.keras")
    loaded = keras.models.load_model(tmp_path / "tagger.keras")
    assert type(loaded) is type(model)
    assert loaded.get_config() == model.get_config()
    assert [tf1_name(w) for w in loaded.weights] == [
        tf1_name(w) for w in model.weights]
    assert [tf1_name(w) for w in loaded.trainable_weights] == [
        tf1_name(w) for w in model.trainable_weights]
    assert np.array_equal(np.asarray(loaded(inputs, training=False)),
                          expected)
