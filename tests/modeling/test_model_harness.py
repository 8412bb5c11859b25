"""One harness every model runs (as keras-hub's backbone test case does).

For BertModel, BertClassifier, BertSquad, BertPretrainer, BertTokenClassifier,
BertFeatureTagger (the feature-based tagger) and BertMultipleChoice (its
[batch, seq] inputs as the choices of one example, see `model_inputs`):
config round trip,
`.keras` round trip (in this process and in a fresh one), variable sequence
length, mixed precision and input (rank, shape, length) errors; and for
each task model the Keras loss contract in one plain-SGD fit step
(`sample_weight` all zeros: no update; all ones: the original's loss;
`class_weight` for the classifier and multiple choice; a `compile(loss=)`
loss is the one used).
"""
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import (BertClassifier, BertConfig, BertFeatureTagger,
                               BertModel, BertMultipleChoice, BertPretrainer,
                               BertSquad, BertTokenClassifier)
from bert_tf1.modeling.naming import tf1_name
from tests.helpers.keras_reload_worker import flatten_outputs, model_inputs

CONFIG = BertConfig(
    vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=32, max_position_embeddings=24, type_vocab_size=2)

# name -> builder(config, **keras_kwargs)
MODELS = {
    "BertModel": lambda config, **kwargs: BertModel(config, **kwargs),
    "BertClassifier": lambda config, **kwargs: BertClassifier(config, 3, **kwargs),
    "BertSquad": lambda config, **kwargs: BertSquad(config, **kwargs),
    "BertPretrainer": lambda config, **kwargs: BertPretrainer(config, **kwargs),
    "BertTokenClassifier": lambda config, **kwargs: BertTokenClassifier(
        config, 4, **kwargs),
    "BertFeatureTagger": lambda config, **kwargs: BertFeatureTagger(
        config, 4, "sum_all", lstm_units=3, **kwargs),
    "BertMultipleChoice": lambda config, **kwargs: BertMultipleChoice(
        config, **kwargs),
}
NAMES = sorted(MODELS)
NUM_MASKED = 3


def make_inputs(batch_size=2, seq_length=8, num_padding=2, seed=0):
    """Random ids, the last `num_padding` tokens of row 1 padded, two segments."""
    rng = np.random.default_rng(seed)
    input_ids = rng.integers(0, CONFIG.vocab_size, (batch_size, seq_length))
    input_mask = np.ones((batch_size, seq_length))
    input_mask[1, seq_length - num_padding:] = 0
    segment_ids = np.zeros((batch_size, seq_length))
    segment_ids[:, seq_length // 2:] = 1
    positions = np.stack([rng.choice(seq_length - num_padding, NUM_MASKED,
                                     replace=False)
                          for _ in range(batch_size)])
    return {"input_ids": input_ids.astype("int32"),
            "input_mask": input_mask.astype("int32"),
            "segment_ids": segment_ids.astype("int32"),
            "masked_lm_positions": positions.astype("int32")}


def run(model, inputs):
    return flatten_outputs(model(model_inputs(model, inputs), training=False))


def max_diff(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    return max(float(np.max(np.abs(ours[key] - theirs[key]))) for key in ours)


def input_signature(model, inputs):
    """TensorSpecs of unknown sizes for the inputs `model` takes."""
    return [{key: tf.TensorSpec([None] * np.ndim(value), tf.int32)
             for key, value in model_inputs(model, inputs).items()}]


def tf1_names(model):
    return [tf1_name(variable) for variable in model.weights]


@pytest.fixture(scope="module", params=NAMES)
def name(request):
    return request.param


@pytest.fixture(scope="module")
def model(name):
    """One model per class for the whole module; no test changes it."""
    return MODELS[name](CONFIG)


# ----- config and .keras round trips -------------------------------------------

def test_config_round_trip(model):
    config = model.get_config()
    json.dumps(keras.saving.serialize_keras_object(model))  # plain JSON
    assert config["config"] == CONFIG.to_dict()
    clone = type(model).from_config(config)
    assert clone.get_config() == config
    assert tf1_names(clone) == tf1_names(model)
    inputs = make_inputs()
    # Freshly initialised, the clone computes something else (guards the test:
    # 10x the tolerance below; the multiple-choice logits of this small random
    # model are ~1e-3, so a fixed 1e-3 failed for some initialisations).
    assert max_diff(run(clone, inputs), run(model, inputs)) > 1e-5
    clone.set_weights(model.get_weights())
    assert max_diff(run(clone, inputs), run(model, inputs)) <= 1e-6


def test_keras_round_trip(model, tmp_path):
    inputs = make_inputs()
    expected = run(model, inputs)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.models.load_model(path)  # no custom_objects
    assert type(loaded) is type(model)
    assert tf1_names(loaded) == tf1_names(model)
    assert loaded.get_config() == model.get_config()
    assert max_diff(run(loaded, inputs), expected) == 0.0
    if isinstance(loaded, BertPretrainer):
        # The MLM decoder is still the word embedding table itself.
        table = loaded.bert.embedding_table
        table.assign(table * 2.0)
        assert max_diff(run(loaded, inputs), expected) > 1e-3
        assert "cls/predictions/word_embeddings" not in tf1_names(loaded)


@pytest.mark.slow
def test_keras_round_trip_in_fresh_process(tmp_path, repo_root):
    """Each model saved here, loaded by a process that imports only Keras
    and `modeling` (tests/helpers/keras_reload_worker.py): same outputs and names."""
    inputs = make_inputs()
    np.savez(tmp_path / "inputs.npz", **inputs)
    expected = {}
    saved_weights = {}
    paths = []
    for name in NAMES:
        model = MODELS[name](CONFIG)
        expected[name] = (run(model, inputs), tf1_names(model))
        saved_weights[name] = model.weights
        paths.append(str(tmp_path / f"{name}.keras"))
        model.save(paths[-1])
    process = subprocess.run(
        [sys.executable, str(repo_root / "tests/helpers/keras_reload_worker.py"),
         str(tmp_path / "inputs.npz"), str(tmp_path), *paths],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(repo_root),
             "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "2",
             "TF_ENABLE_ONEDNN_OPTS": os.environ["TF_ENABLE_ONEDNN_OPTS"]})
    assert process.returncode == 0, process.stderr[-4000:]
    for name in NAMES:
        outputs = dict(np.load(tmp_path / f"{name}.npz"))
        info = json.loads((tmp_path / f"{name}.json").read_text())
        assert info["class"] == name
        assert info["tf1_names"] == expected[name][1]
        # The weights come back bit for bit; the outputs are computed by
        # another process, whose CPU kernels may sum in another order (seen
        # on an AVX-512 machine: 2.4e-7), so they are held to float32
        # rounding, far below the 1e-5 parity bound.
        weights = np.load(tmp_path / f"{name}.weights.npz")
        reloaded = [weights[f"arr_{i}"] for i in range(len(weights.files))]
        saved = [np.asarray(v) for v in saved_weights[name]]
        assert len(reloaded) == len(saved), name
        for got, want in zip(reloaded, saved):
            np.testing.assert_array_equal(got, want, err_msg=name)
        assert max_diff(outputs, expected[name][0]) <= 1e-6, name


# ----- sequence length ---------------------------------------------------------

def test_variable_sequence_length(model):
    """One model runs at 8 and at 20 tokens; 8 real tokens padded to 20 give
    the outputs of the 8 (padded keys get -10000 on their logits, as the
    original: exp underflows to exactly 0)."""
    short = make_inputs(seq_length=8, num_padding=0)
    long = {key: np.pad(value, ((0, 0), (0, 12))) if key != "masked_lm_positions"
            else value for key, value in short.items()}
    short_out, long_out = run(model, short), run(model, long)
    for key, value in short_out.items():
        other = long_out[key]
        if other.ndim >= 2 and other.shape[1] == 20:  # per-token outputs
            other = other[:, :8]
        np.testing.assert_allclose(other, value, atol=1e-5, err_msg=key)
    # The same Keras model object, traced with an unknown length, too.
    traced = tf.function(lambda x: model(x, training=False),
                         input_signature=input_signature(model, short))
    for seq_length in (8, 20):
        inputs = make_inputs(seq_length=seq_length)
        assert max_diff(flatten_outputs(traced(model_inputs(model, inputs))),
                        run(model, inputs)) <= 1e-5


# ----- mixed precision ---------------------------------------------------------

# Outputs documented as float32 whatever the policy (log-softmax and logits
# are computed in float32); BertModel's outputs are in the compute dtype.
FLOAT32_OUTPUTS = {"BertClassifier": True, "BertSquad": True,
                   "BertPretrainer": True, "BertTokenClassifier": True,
                   "BertFeatureTagger": True, "BertMultipleChoice": True,
                   "BertModel": False}


@pytest.mark.parametrize("policy, tolerance", [
    ("mixed_float16", 1e-2), ("mixed_bfloat16", 5e-2)])
def test_mixed_precision(name, policy, tolerance):
    # Seeded weights: BertModel's outputs are in the compute dtype, and
    # over unseeded draws their rounding reached 0.0265 of bfloat16's 0.05
    # and 0.0042 of float16's 0.01 (45 draws).
    keras.utils.set_random_seed(0)
    reference = MODELS[name](CONFIG)
    model = MODELS[name](CONFIG, dtype=policy)
    compute_dtype = keras.mixed_precision.Policy(policy).compute_dtype
    # Every sub-layer follows the model's policy; variables stay float32.
    query = model.layers[0] if name != "BertModel" else model
    query = query.encoder.transformer_layers[0].attention.self_attention.query
    assert query.compute_dtype == compute_dtype
    assert {v.dtype for v in model.weights} == {"float32"}
    model.set_weights(reference.get_weights())
    inputs = make_inputs()
    outputs = model(model_inputs(model, inputs), training=False)
    for value in keras.tree.flatten(outputs):
        expected = "float32" if FLOAT32_OUTPUTS[name] else compute_dtype
        assert keras.backend.standardize_dtype(value.dtype) == expected
    diff = max_diff(flatten_outputs(outputs), run(reference, inputs))
    assert 0 < diff <= tolerance, f"{name} {policy}: max abs diff {diff}"
    # The policy survives a config round trip.
    clone = type(model).from_config(model.get_config())
    assert clone.dtype_policy.name == policy
    assert clone.layers[-1].dtype_policy.name == policy


# ----- input errors ------------------------------------------------------------

@pytest.mark.parametrize("change, error, pattern", [
    ({"input_ids": np.zeros((8,), "int32")}, ValueError,
     r"`input_ids` has shape \(8,\) \(rank 1\); expected rank 2, "
     r"\[batch_size, seq_length\]"),
    ({"input_ids": np.zeros((2, 8, 1), "int32")}, ValueError,
     r"`input_ids` has shape \(2, 8, 1\) \(rank 3\)"),
    ({"input_ids": np.zeros((2, 30), "int32")}, ValueError,
     r"`input_ids` of shape \(2, 30\): cannot use sequence length 30 "
     r"because .* up to sequence length 24"),
    ({"input_mask": np.ones((2, 9), "int32")}, ValueError,
     r"`input_mask` has shape \(2, 9\); expected the shape of `input_ids`, "
     r"\(2, 8\)"),
    ({"segment_ids": np.ones((8,), "int32")}, ValueError,
     r"`segment_ids` has shape \(8,\)"),
])
def test_input_errors_name_the_input(model, change, error, pattern):
    if isinstance(model, BertMultipleChoice):
        pytest.skip("rank-3 inputs: tests/modeling/models/"
                    "test_multiple_choice.py checks their errors")
    inputs = dict(model_inputs(model, make_inputs()), **change)
    with pytest.raises(error, match=pattern):
        model(inputs)


def test_non_dict_input_is_a_type_error(model, name):
    with pytest.raises(TypeError, match=rf"{name} inputs must be a dict .* "
                       r"got .* of shape \(2, 8\)"):
        model(np.zeros((2, 8), "int32"))


def test_too_long_with_unknown_length_fails_at_run_time(model):
    traced = tf.function(lambda x: model(x, training=False),
                         input_signature=input_signature(model, make_inputs()))
    inputs = make_inputs(seq_length=30)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="seq_length exceeds max_position_embeddings"):
        traced(model_inputs(model, inputs))


# ----- Keras loss contract: sample_weight, class_weight, compile(loss=) --------

TASK_NAMES = [name for name in NAMES if name != "BertModel"]


def task_batch(name, model, seed=0):
    """(x, y) of one batch of 2 examples for a task model's default loss."""
    inputs = make_inputs(seed=seed)
    x = dict(model_inputs(model, inputs))
    if name == "BertClassifier":
        return x, np.array([0, 2], "int32")
    if name == "BertSquad":
        return x, {"start_positions": np.array([1, 2], "int32"),
                   "end_positions": np.array([3, 4], "int32")}
    if name == "BertPretrainer":
        return x, {"masked_lm_ids": np.full((2, NUM_MASKED), 5, "int32"),
                   "masked_lm_weights": np.array([[1, 1, 0], [1, 0, 0]],
                                                 "float32"),
                   "next_sentence_labels": np.array([0, 1], "int32")}
    if name == "BertMultipleChoice":
        # Two examples of 2 choices each (the harness's rows, twice).
        x = {key: np.concatenate([value, value[:, ::-1]])
             for key, value in x.items()}
        return x, np.array([0, 1], "int32")
    # Taggers: the scored tokens are an input.
    x["label_weights"] = inputs["input_mask"].astype("float32")
    return x, np.array([[1, 0, 2, 3, 0, 1, 2, 3]] * 2, "int32")


def fit_one_step(model, x, y, **kwargs):
    """One plain-SGD fit step; returns (weights changed?, the step's loss)."""
    before = [np.array(v) for v in model.trainable_weights]
    history = model.fit(x, y, batch_size=2, epochs=1, shuffle=False,
                        verbose=0, **kwargs)
    changed = any(not np.array_equal(a, np.asarray(b))
                  for a, b in zip(before, model.trainable_weights))
    return changed, float(history.history["loss"][-1])


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_fit_honours_sample_weight(task_name):
    """All-zero sample weights: zero loss, no update; all ones: the
    original's loss (today's `compute_loss`), weights move."""
    model = MODELS[task_name](CONFIG)
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    x, y = task_batch(task_name, model)
    changed, loss = fit_one_step(model, x, y, sample_weight=np.zeros(2))
    assert not changed and loss == 0.0
    y_pred = model(x, training=False)
    unweighted = float(model.compute_loss(x=x, y=y, y_pred=y_pred))
    ones = float(model.compute_loss(x=x, y=y, y_pred=y_pred,
                                    sample_weight=np.ones(2, "float32")))
    # float32: sum(w * l) / n and mean(l) may round apart by a few ulps.
    assert unweighted > 0 and ones == pytest.approx(unweighted, rel=1e-6)
    # Each example's weight scales its own part of the loss only.
    first, second = (float(model.compute_loss(
        x=x, y=y, y_pred=y_pred, sample_weight=np.array(weights, "float32")))
        for weights in ([1.0, 0.0], [0.0, 1.0]))
    assert first > 0 and second > 0
    assert first + second == pytest.approx(unweighted, rel=1e-6)
    changed, loss = fit_one_step(model, x, y, sample_weight=np.ones(2))
    assert changed and loss > 0


@pytest.mark.parametrize("task_name", ["BertClassifier", "BertMultipleChoice"])
def test_fit_honours_class_weight(task_name):
    """Keras turns class_weight into per-example weights: a class of weight
    0 contributes nothing (loss 0, no update), one of weight 1 does."""
    model = MODELS[task_name](CONFIG)
    model.compile(optimizer=keras.optimizers.SGD(0.1))
    x, y = task_batch(task_name, model)
    weights = {label: 0.0 for label in range(3)}
    changed, loss = fit_one_step(model, x, y, class_weight=weights)
    assert not changed and loss == 0.0
    weights[int(y[0])] = 1.0
    changed, loss = fit_one_step(model, x, y, class_weight=weights)
    assert changed and loss > 0


class CountingLoss(keras.losses.Loss):
    """Returns 7 * mean(sample_weight) (7 without weights); counts calls."""

    def __init__(self):
        super().__init__(name="counting")
        self.calls = 0

    def __call__(self, y_true, y_pred, sample_weight=None):
        self.calls += 1
        weight = 1.0 if sample_weight is None else keras.ops.mean(
            keras.ops.cast(sample_weight, "float32"))
        return 7.0 * weight


@pytest.mark.parametrize("task_name", TASK_NAMES)
def test_compiled_loss_is_used(task_name):
    model = MODELS[task_name](CONFIG)
    x, y = task_batch(task_name, model)
    y_pred = model(x, training=False)
    loss = CountingLoss()
    if isinstance(y_pred, dict):
        # One loss per output; y keyed by the output names.
        model.compile(optimizer="sgd", loss={key: loss for key in y_pred})
        y = {key: np.zeros(np.shape(value)[:1]) for key, value in
             y_pred.items()}
        expected = 7.0 * len(y_pred)
    else:
        model.compile(optimizer="sgd", loss=loss)
        expected = 7.0
    value = model.compute_loss(x=x, y=y, y_pred=y_pred)
    assert float(value) == pytest.approx(expected)
    assert loss.calls == (len(y_pred) if isinstance(y_pred, dict) else 1)
    value = model.compute_loss(x=x, y=y, y_pred=y_pred,
                               sample_weight=np.array([1.0, 0.0]))
    assert float(value) == pytest.approx(expected / 2)
