"""Tests for modeling/optimization.py against the original optimization.py.

Expected values come from NumPy transcriptions of the original formulas
(float64), from the original repo's optimization_test, and from the fixture
checkpoints, which the original `AdamWeightDecayOptimizer` trained for 2 steps
(lr 1e-3, warmup 2 of 10) and saved with their `adam_m`/`adam_v` slots.
"""
import os
import re
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from modeling import BertClassifier, BertConfig, checkpoints
from modeling.naming import tf1_name
from modeling.optimization import (AdamWeightDecay, LambWeightDecay,
                                   WarmupLinearDecay, create_optimizer,
                                   matches_exclusion, normalization_variables)

ORIGINAL_EXCLUDE = ("LayerNorm", "layer_norm", "bias")


# ----- NumPy transcriptions of the original ----------------------------------

def original_lr(step, init_lr, num_train_steps, num_warmup_steps):
    """optimization.create_optimizer's learning rate at global step `step`."""
    decayed = init_lr * (1.0 - min(step, num_train_steps) / num_train_steps)
    if num_warmup_steps and step < num_warmup_steps:
        return init_lr * step / num_warmup_steps
    return decayed


def original_global_norm(grads):
    """tf.global_norm as the original called it: an IndexedSlices gradient
    (a gather's) counts its rows as they come, repeated rows included."""
    total = 0.0
    for grad in grads:
        values = grad[1] if isinstance(grad, tuple) else grad
        total += np.sum(np.square(values.astype(np.float64)))
    return np.sqrt(total)


def densify(grad, shape):
    if not isinstance(grad, tuple):
        return grad.astype(np.float64)
    indices, values = grad
    dense = np.zeros(shape)
    np.add.at(dense, indices, values)
    return dense


def numpy_adamw_step(params, slots, grads, lr, decays, clip_norm,
                     weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999,
                     epsilon=1e-6):
    """One original train step: clip_by_global_norm, then
    AdamWeightDecayOptimizer.apply_gradients, in float64."""
    scale = 1.0
    if clip_norm is not None:
        norm = original_global_norm(grads.values())
        scale = clip_norm * min(1.0 / norm, 1.0 / clip_norm)
    for name in params:
        g = densify(grads[name], params[name].shape) * scale
        m, v = slots[name]
        m = beta_1 * m + (1.0 - beta_1) * g
        v = beta_2 * v + (1.0 - beta_2) * g * g
        update = m / (np.sqrt(v) + epsilon)
        if decays[name]:
            update = update + weight_decay_rate * params[name]
        params[name] = params[name] - lr * update
        slots[name] = (m, v)


def numpy_lamb_step(params, slots, grads, lr, decays, t,
                    weight_decay_rate=0.01, beta_1=0.9, beta_2=0.999,
                    epsilon=1e-6):
    """One LAMB step (paper's Algorithm 2, tfa.optimizers.LAMB exclusions)."""
    for name in params:
        g = densify(grads[name], params[name].shape)
        m, v = slots[name]
        m = beta_1 * m + (1.0 - beta_1) * g
        v = beta_2 * v + (1.0 - beta_2) * g * g
        update = (m / (1 - beta_1 ** t)) / (
            np.sqrt(v / (1 - beta_2 ** t)) + epsilon)
        ratio = 1.0
        if decays[name]:
            update = update + weight_decay_rate * params[name]
            w_norm, u_norm = (np.linalg.norm(params[name]),
                              np.linalg.norm(update))
            if w_norm > 0 and u_norm > 0:
                ratio = w_norm / u_norm
        params[name] = params[name] - ratio * lr * update
        slots[name] = (m, v)


# ----- a small model whose weights have TF1-style names ------------------------

class _Block(keras.layers.Layer):
    """dense -> LayerNorm, the way the original scopes name them."""

    def __init__(self, units, norm_name, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(units, name="dense")
        if norm_name is None:
            self.norm = keras.layers.LayerNormalization()
        else:
            self.norm = keras.layers.LayerNormalization(name=norm_name)

    def call(self, x):
        return self.norm(self.dense(x))


class ToyModel(keras.Model):
    """Weights (TF1 names): word_embeddings, LayerNorm/*, layer_norm/*,
    layernorm/*, Layernorm/*, layer_normalization/*, ln/*, every dense/*,
    output_weights, output_bias."""

    NORM_NAMES = ("LayerNorm", "layer_norm", "layernorm", "Layernorm", None,
                  "ln")

    def __init__(self, norm_names=NORM_NAMES, vocab_size=7, hidden=4,
                 num_labels=2, **kwargs):
        super().__init__(**kwargs)
        self.blocks = [_Block(hidden, norm, name=f"block_{i}")
                       for i, norm in enumerate(norm_names)]
        self.word_embeddings = self.add_weight(
            name="word_embeddings", shape=(vocab_size, hidden),
            initializer=keras.initializers.RandomNormal(seed=1))
        self.output_weights = self.add_weight(
            name="output_weights", shape=(num_labels, hidden),
            initializer=keras.initializers.RandomNormal(seed=2))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(num_labels,), initializer="zeros")
        self(np.zeros((1, 3), "int32"))

    def call(self, input_ids):
        # Keras' symbolic build under MirroredStrategy passes float32 specs.
        input_ids = keras.ops.cast(input_ids, "int32")
        x = keras.ops.take(self.word_embeddings, input_ids, axis=0)
        for block in self.blocks:
            x = block(x)
        x = keras.ops.mean(x, axis=1)
        return (keras.ops.matmul(x, keras.ops.transpose(self.output_weights))
                + self.output_bias)


def _weights(model):
    return {tf1_name(v): v for v in model.trainable_variables}


# ----- the learning rate -------------------------------------------------------

@pytest.mark.parametrize("init_lr,total,warmup", [
    (1e-3, 10, 2), (5e-5, 1000, 100), (2e-5, 7, 3), (1e-4, 20, 0)])
def test_schedule_matches_original(init_lr, total, warmup):
    schedule = WarmupLinearDecay(init_lr, total, warmup)
    steps = sorted({0, 1, max(warmup - 1, 0), warmup, warmup + 1, total - 1,
                    total, total + 5, 10 * total})
    for step in steps:
        expected = original_lr(step, init_lr, total, warmup)
        got = float(schedule(tf.constant(step, tf.int64)))
        assert got == pytest.approx(expected, rel=1e-6, abs=1e-12), step


def test_schedule_edges_and_config():
    schedule = WarmupLinearDecay(1e-3, 10, 2)
    assert float(schedule(0)) == 0.0
    # Right after warmup the decay is measured from step 0, not from warmup.
    assert float(schedule(2)) == pytest.approx(8e-4, rel=1e-6)
    assert float(schedule(10)) == 0.0 and float(schedule(11)) == 0.0
    clone = WarmupLinearDecay.from_config(schedule.get_config())
    assert [float(clone(s)) for s in range(12)] == [
        float(schedule(s)) for s in range(12)]
    for bad in [(1e-3, 0, 0), (1e-3, 10, -1), (-1.0, 10, 2)]:
        with pytest.raises(ValueError):
            WarmupLinearDecay(*bad)


# ----- the update, step by step ----------------------------------------------

def _random_grads(rng, params, step):
    grads = {}
    for name, value in params.items():
        # Large gradients: the global norm is far above 1, so clipping acts.
        grads[name] = rng.normal(0, 5.0, value.shape).astype(np.float32)
    # The embedding's gradient arrives as a gather's IndexedSlices, with a
    # repeated row, as in the original on CPU/GPU.
    indices = np.array([1, 3, 1, step % 5], np.int64)
    values = rng.normal(0, 5.0, (4, params["word_embeddings"].shape[1]))
    grads["word_embeddings"] = (indices, values.astype(np.float32))
    return grads


def _as_tf(grad):
    if isinstance(grad, tuple):
        indices, values = grad
        return tf.IndexedSlices(tf.constant(values), tf.constant(indices))
    return tf.constant(grad)


@pytest.mark.parametrize("mode", ["eager", "function", "xla"])
def test_adamw_matches_original_step_by_step(mode):
    model = ToyModel(name="toy")
    weights = _weights(model)
    names = ["word_embeddings", "block_0/dense/kernel", "block_0/dense/bias",
             "block_0/LayerNorm/gamma", "output_weights", "output_bias"]
    variables = [weights[n] for n in names]
    rng = np.random.default_rng(0)
    for variable in variables:
        variable.assign(rng.normal(0, 1, variable.shape).astype(np.float32))
    init_lr, total, warmup = 1e-2, 6, 2
    optimizer = create_optimizer(init_lr, total, warmup)
    optimizer.build(variables)

    def apply(grads):
        optimizer.apply(grads, variables)

    if mode != "eager":
        apply = tf.function(apply, jit_compile=(mode == "xla"))

    params = {n: v.numpy().astype(np.float64) for n, v in zip(names, variables)}
    slots = {n: (np.zeros(p.shape), np.zeros(p.shape))
             for n, p in params.items()}
    decays = {n: not any(re.search(p, n) for p in ORIGINAL_EXCLUDE)
              for n in names}
    assert sorted(n for n in names if decays[n]) == [
        "block_0/dense/kernel", "output_weights", "word_embeddings"]
    for step in range(5):
        grads = _random_grads(rng, params, step)
        assert original_global_norm(grads.values()) > 10.0
        apply([_as_tf(grads[n]) for n in names])
        # The original's updates used the rate of the step after the update
        # (see test_two_steps_reproduce_fixture_checkpoint).
        lr = original_lr(step + 1, init_lr, total, warmup)
        numpy_adamw_step(params, slots, grads, lr, decays, clip_norm=1.0)
        for name, variable in zip(names, variables):
            np.testing.assert_allclose(variable.numpy(), params[name],
                                       rtol=1e-6, atol=1e-6, err_msg=name)
            m, v = optimizer.slot_variables(variable).values()
            np.testing.assert_allclose(m.numpy(), slots[name][0],
                                       rtol=1e-5, atol=1e-7, err_msg=name)
            np.testing.assert_allclose(v.numpy(), slots[name][1],
                                       rtol=1e-5, atol=1e-9, err_msg=name)
    assert int(optimizer.iterations.numpy()) == 5


def test_lamb_matches_transcription():
    model = ToyModel(name="toy")
    weights = _weights(model)
    names = ["block_1/dense/kernel", "block_1/layer_norm/gamma",
             "output_bias", "output_weights"]
    variables = [weights[n] for n in names]
    rng = np.random.default_rng(1)
    for variable in variables:
        variable.assign(rng.normal(0, 1, variable.shape).astype(np.float32))
    optimizer = create_optimizer(1e-2, 10, 0, optimizer_type="lamb",
                                 global_clipnorm=None)
    assert isinstance(optimizer, LambWeightDecay)
    params = {n: v.numpy().astype(np.float64) for n, v in zip(names, variables)}
    slots = {n: (np.zeros(p.shape), np.zeros(p.shape))
             for n, p in params.items()}
    decays = {n: not any(re.search(p, n) for p in ORIGINAL_EXCLUDE)
              for n in names}
    for step in range(3):
        grads = {n: rng.normal(0, 1, p.shape).astype(np.float32)
                 for n, p in params.items()}
        optimizer.apply([tf.constant(grads[n]) for n in names], variables)
        numpy_lamb_step(params, slots, grads,
                        original_lr(step + 1, 1e-2, 10, 0), decays, t=step + 1)
        for name, variable in zip(names, variables):
            np.testing.assert_allclose(variable.numpy(), params[name],
                                       rtol=1e-5, atol=1e-6, err_msg=name)


def test_original_optimization_test():
    """The original repo's optimization_test: Adam without decay or
    clipping, lr 0.2, reaches the target of mean((x - w)^2) in 100 steps."""
    w = keras.Variable(np.array([0.1, -0.2, -0.1], np.float32), name="w")
    x = tf.constant([0.4, 0.2, -0.5])
    optimizer = AdamWeightDecay(learning_rate=0.2)

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(x - w.value))
        optimizer.apply([tape.gradient(loss, w.value)], [w])

    for _ in range(100):
        train_step()
    np.testing.assert_allclose(w.numpy(), x.numpy(), rtol=1e-2, atol=1e-2)
    assert int(optimizer.iterations.numpy()) == 100


# ----- against the original's own 2-step checkpoints ---------------------------

def _gradient_pairs(m2, v2, beta_1=0.9, beta_2=0.999):
    """The two (g1, g2) that give moments m2, v2 after two steps from 0
    (no bias correction): m2 = b1(1-b1) g1 + (1-b1) g2, likewise v2."""
    m2, v2 = m2.astype(np.float64), v2.astype(np.float64)
    # Substitute g2 = (m2 - b1 (1-b1) g1) / (1-b1) into the v2 equation.
    k = beta_1
    a = beta_2 * (1 - beta_2) + (1 - beta_2) * k * k
    b = -2 * (1 - beta_2) * k * m2 / (1 - beta_1)
    c = (1 - beta_2) * (m2 / (1 - beta_1)) ** 2 - v2
    root = np.sqrt(np.maximum(b * b - 4 * a * c, 0.0))
    pairs = []
    for sign in (1.0, -1.0):
        g1 = (-b + sign * root) / (2 * a)
        pairs.append((g1, (m2 - beta_1 * (1 - beta_1) * g1) / (1 - beta_1)))
    return pairs


def _run_two_steps(variables, initial, grads_1, grads_2, offset):
    for variable, value in zip(variables, initial):
        variable.assign(value)
    optimizer = AdamWeightDecay(
        learning_rate=WarmupLinearDecay(1e-3, 10, 2), weight_decay_rate=0.01,
        exclude_from_weight_decay=ORIGINAL_EXCLUDE,
        schedule_step_offset=offset)
    optimizer.build(variables)
    optimizer.apply([tf.constant(g, tf.float32) for g in grads_1], variables)
    optimizer.apply([tf.constant(g, tf.float32) for g in grads_2], variables)
    return ([v.numpy() for v in variables],
            [optimizer.slot_variables(v) for v in variables])


def test_two_steps_reproduce_fixture_checkpoint(fixtures_dir):
    """tf1_tiny_classifier was trained 2 steps by the original optimizer
    (lr 1e-3, warmup 2 of 10, wd 0.01). LayerNorm gammas start at 1, betas
    and biases at 0 and are not decayed, so from the saved adam_m/adam_v the
    2 (clipped) gradients follow up to a choice of root, and our optimizer
    must land on the saved weights. It does only with the rates of steps 1
    and 2 (5e-4, 8e-4): the original reads global_step after incrementing."""
    fixture = fixtures_dir / "tf1_tiny_classifier"
    reader = tf.train.load_checkpoint(str(fixture / "bert_model.ckpt"))
    assert int(reader.get_tensor("global_step")) == 2
    config = BertConfig.from_json_file(fixture / "bert_config.json")
    weights = _weights(BertClassifier(config, num_labels=3))
    names = sorted(n for n in weights
                   if n.endswith(("LayerNorm/gamma", "LayerNorm/beta", "bias")))
    assert len(names) == 2 * 5 + 2 * 6 + 2  # embeddings, 2 layers, pooler, head
    variables = [weights[n] for n in names]
    initial = [np.ones(v.shape, np.float32) if n.endswith("gamma")
               else np.zeros(v.shape, np.float32)
               for n, v in zip(names, variables)]
    saved = [reader.get_tensor(n) for n in names]
    pairs = [_gradient_pairs(reader.get_tensor(n + "/adam_m"),
                             reader.get_tensor(n + "/adam_v")) for n in names]

    def worst_error(offset):
        results = []
        for root in range(2):
            results.append(_run_two_steps(
                variables, initial, [p[root][0] for p in pairs],
                [p[root][1] for p in pairs], offset))
        worst = 0.0
        for i, name in enumerate(names):
            errors = [np.abs(results[r][0][i] - saved[i]) for r in range(2)]
            worst = max(worst, float(np.minimum(*errors).max()))
            for r in range(2):
                slots = results[r][1][i]
                np.testing.assert_allclose(
                    slots["adam_m"].numpy(),
                    reader.get_tensor(name + "/adam_m"), rtol=1e-4, atol=1e-9)
                np.testing.assert_allclose(
                    slots["adam_v"].numpy(),
                    reader.get_tensor(name + "/adam_v"), rtol=1e-4, atol=1e-12)
        return worst

    assert worst_error(offset=1) < 1e-6
    assert worst_error(offset=0) > 1e-4


# ----- which variables are decayed ---------------------------------------------

def test_decay_skips_every_layer_norm_and_bias():
    model = ToyModel(name="toy")
    optimizer = create_optimizer(1e-3, 10, 1)
    optimizer.build(model.trainable_variables)
    decayed = sorted(tf1_name(v) for v in model.trainable_variables
                     if optimizer.uses_weight_decay(v))
    dense_kernels = [f"block_{i}/dense/kernel" for i in range(6)]
    # "ln/gamma" matches no pattern by its scope; as a Keras normalization
    # weight (`gamma`/`beta`) it is matched as `LayerNorm/gamma` (issue #10).
    assert decayed == sorted(dense_kernels + ["output_weights",
                                              "word_embeddings"])

    optimizer = create_optimizer(1e-3, 10, 1, model=model)
    optimizer.build(model.trainable_variables)
    decayed = sorted(tf1_name(v) for v in model.trainable_variables
                     if optimizer.uses_weight_decay(v))
    assert decayed == sorted(dense_kernels + ["output_weights",
                                              "word_embeddings"])
    assert len(normalization_variables(model)) == 12


def test_decay_is_applied_to_exactly_the_decayed_variables():
    """With zero gradients the update is the decay alone: p *= 1 - lr*wd."""
    model = ToyModel(name="toy")
    optimizer = AdamWeightDecay(learning_rate=0.5, weight_decay_rate=0.1,
                                exclude_from_weight_decay=ORIGINAL_EXCLUDE)
    optimizer.exclude_from_weight_decay(
        var_list=normalization_variables(model))
    variables = model.trainable_variables
    for variable in variables:
        variable.assign(np.full(variable.shape, 2.0, np.float32))
    optimizer.apply([tf.zeros(v.shape) for v in variables], variables)
    for variable in variables:
        name = tf1_name(variable)
        expected = 2.0 * (1 - 0.5 * 0.1) if name.endswith(
            ("kernel", "output_weights", "word_embeddings")) else 2.0
        np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6,
                                   err_msg=name)
    with pytest.raises(ValueError, match="before"):
        optimizer.exclude_from_weight_decay(var_names=["kernel"])


def _plain_keras_models():
    """Normalization layers placed where no scope says "LayerNorm"."""
    sequential = keras.Sequential([
        keras.Input((3,)), keras.layers.Dense(4),
        keras.layers.LayerNormalization(), keras.layers.Dense(2)])
    inputs = keras.Input((3,))
    x = keras.layers.Dense(4, name="proj")(inputs)
    x = keras.layers.LayerNormalization(name="ln")(x)
    x = keras.layers.BatchNormalization(name="bn")(x)
    functional = keras.Model(inputs, keras.layers.Dense(2)(x))
    bare = keras.layers.LayerNormalization()
    bare.build((None, 3))
    return {"sequential": sequential, "functional": functional, "bare": bare}


@pytest.mark.parametrize("kind", ["sequential", "functional", "bare"])
def test_plain_keras_norm_weights_and_biases_are_not_decayed(kind):
    """Issue #10: the default exclusions must not depend on where a
    LayerNormalization sits (a functional model's `ln/gamma` has the TF1
    name `gamma`). Zero gradients: the update is the decay alone."""
    layer = _plain_keras_models()[kind]
    variables = layer.trainable_variables
    # create_optimizer's first update uses the rate at step 1: 1e-3 * 9/10.
    for optimizer, lr in (
            (create_optimizer(1e-3, 10, 0, weight_decay_rate=0.1), 9e-4),
            (AdamWeightDecay(learning_rate=0.5, weight_decay_rate=0.1,
                             exclude_from_weight_decay=ORIGINAL_EXCLUDE), 0.5)):
        for variable in variables:
            variable.assign(np.full(variable.shape, 2.0, np.float32))
        optimizer.apply([tf.zeros(v.shape) for v in variables], variables)
        for variable in variables:
            decayed = variable.path.endswith("kernel")
            expected = 2.0 * (1 - lr * 0.1) if decayed else 2.0
            np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6,
                                       err_msg=variable.path)
    names = {v.path for v in variables}
    assert any(name.endswith("gamma") for name in names)


def test_exclusion_matching_rule():
    assert matches_exclusion("gamma", ORIGINAL_EXCLUDE)
    assert matches_exclusion("model/ln/beta", ORIGINAL_EXCLUDE)
    assert matches_exclusion("model/dense/bias", ORIGINAL_EXCLUDE)
    assert matches_exclusion("model/bert/encoder/layer_0/output/LayerNorm/gamma",
                             ORIGINAL_EXCLUDE)
    assert not matches_exclusion("model/dense/kernel", ORIGINAL_EXCLUDE)
    assert not matches_exclusion("model/word_embeddings", ORIGINAL_EXCLUDE)
    # The model's own name is not matched: a model called "bias_net" or
    # "layer_norm_study" does not lose weight decay on all its kernels.
    assert not matches_exclusion("bias_net/dense/kernel", ORIGINAL_EXCLUDE)
    # gamma/beta count as LayerNorm weights only for patterns that exclude
    # LayerNorm weights: no patterns, or others, exclude nothing more.
    assert not matches_exclusion("ln/gamma", ())
    assert not matches_exclusion("ln/gamma", ("kernel",))


def test_decay_choice_on_bert_matches_original_rule(fixtures_dir):
    config = BertConfig.from_json_file(
        fixtures_dir / "tf1_tiny_classifier" / "bert_config.json")
    model = BertClassifier(config, num_labels=3)
    optimizer = create_optimizer(1e-3, 10, 1, model=model)
    optimizer.build(model.trainable_variables)
    for variable in model.trainable_variables:
        name = tf1_name(variable)
        original = not any(re.search(p, name) for p in ORIGINAL_EXCLUDE)
        assert optimizer.uses_weight_decay(variable) == original, name
    assert not create_optimizer(1e-3, 10, 1, weight_decay_rate=0.0) \
        .uses_weight_decay(model.trainable_variables[0])


def test_bert_gradients_enter_the_global_norm_as_in_the_original(fixtures_dir):
    """The original (CPU/GPU) gathers word embeddings (an IndexedSlices
    gradient, norm over its B*S rows), and takes token types by a one-hot
    matmul and positions by a slice (dense gradients). tf.clip_by_global_norm
    sees those types, so the clipping scale depends on them."""
    fixture = fixtures_dir / "tf1_tiny_classifier"
    config = BertConfig.from_json_file(fixture / "bert_config.json")
    model = BertClassifier(config, num_labels=3)
    reference = dict(np.load(fixture / "reference_outputs.npz"))
    inputs = {k: reference[k] for k in ("input_ids", "input_mask",
                                        "segment_ids")}
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(inputs, training=False))
    variables = model.trainable_variables
    grads = tape.gradient(loss, [v.value for v in variables])
    sparse = sorted(tf1_name(v) for v, g in zip(variables, grads)
                    if isinstance(g, tf.IndexedSlices))
    assert sparse == ["bert/embeddings/word_embeddings"]


# ----- slots, resume, config -----------------------------------------------------

def test_slots_exist_before_first_step_and_resume():
    model = ToyModel(name="toy")
    variables = model.trainable_variables
    optimizer = create_optimizer(1e-3, 100, 10)
    with pytest.raises(ValueError, match="build"):
        optimizer.slot_variables(variables[0])
    optimizer.build(variables)
    kernel = _weights(model)["block_0/dense/kernel"]
    slots = optimizer.slot_variables(kernel)
    assert sorted(slots) == ["adam_m", "adam_v"]
    assert slots["adam_m"].shape == kernel.shape
    assert np.all(slots["adam_v"].numpy() == 0)
    named = optimizer.tf1_slot_variables()
    assert len(named) == 2 * len(variables)
    assert named["block_0/dense/kernel/adam_m"] is slots["adam_m"]
    with pytest.raises(ValueError, match="not built with"):
        optimizer.slot_variables(keras.Variable(np.zeros(2), name="stray"))

    # A resumed run: slots and global_step assigned, then one step.
    rng = np.random.default_rng(3)
    m0 = rng.normal(0, 1, kernel.shape)
    v0 = rng.uniform(0.1, 1, kernel.shape)
    slots["adam_m"].assign(m0)
    slots["adam_v"].assign(v0)
    optimizer.iterations.assign(50)
    p0 = kernel.numpy().astype(np.float64)
    grad = rng.normal(0, 0.01, kernel.shape)
    grads = [tf.zeros(v.shape) for v in variables]
    grads[[id(v) for v in variables].index(id(kernel))] = tf.constant(
        grad, tf.float32)
    optimizer.apply(grads, variables)
    params, moments = {"k": p0}, {"k": (m0, v0)}
    numpy_adamw_step(params, moments, {"k": grad}, original_lr(51, 1e-3, 100, 10),
                     {"k": True}, clip_norm=1.0)
    np.testing.assert_allclose(kernel.numpy(), params["k"], rtol=1e-6, atol=1e-7)
    assert int(optimizer.iterations.numpy()) == 51


def test_resume_from_original_checkpoint_and_save_it_back(fixtures_dir,
                                                         tmp_path):
    """The slots and global_step the original saved come back through
    `slot_variables`/`iterations`, and are written back unchanged."""
    fixture = fixtures_dir / "tf1_tiny_classifier"
    model = BertClassifier(
        BertConfig.from_json_file(fixture / "bert_config.json"), num_labels=3)
    optimizer = create_optimizer(1e-3, 10, 2, model=model)
    optimizer.build(model.trainable_variables)
    status = checkpoints.load_tf1_checkpoint(model, fixture,
                                             optimizer=optimizer,
                                             verbose=False)
    assert status.optimizer_restored
    assert int(optimizer.iterations.numpy()) == 2
    # The next (third) update uses the rate of step 3.
    assert float(optimizer.learning_rate) == pytest.approx(7e-4, rel=1e-6)
    reader = tf.train.load_checkpoint(str(fixture / "bert_model.ckpt"))
    slots = optimizer.tf1_slot_variables()
    assert len(slots) == 2 * len(model.trainable_variables)
    for name, slot in slots.items():
        np.testing.assert_array_equal(slot.numpy(), reader.get_tensor(name))
    checkpoints.save_tf1_checkpoint(model, str(tmp_path / "model.ckpt-2"),
                                    optimizer=optimizer)
    written = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-2"))
    names = reader.get_variable_to_shape_map()
    assert written.get_variable_to_shape_map() == names
    for name in names:
        np.testing.assert_array_equal(written.get_tensor(name),
                                      reader.get_tensor(name), err_msg=name)


def test_config_round_trip_and_errors():
    optimizer = create_optimizer(3e-5, 1000, 100, weight_decay_rate=0.02)
    clone = AdamWeightDecay.from_config(optimizer.get_config())
    assert clone.weight_decay_rate == 0.02 and clone.global_clipnorm == 1.0
    assert clone.epsilon == 1e-6 and clone.schedule_step_offset == 1
    assert float(clone.learning_rate) == pytest.approx(3e-7, rel=1e-5)
    with pytest.raises(ValueError, match="optimizer_type"):
        create_optimizer(1e-3, 10, 1, optimizer_type="sgd")
    with pytest.raises(ValueError, match="weight_decay_rate"):
        AdamWeightDecay(weight_decay=0.01)


# ----- Keras integration -----------------------------------------------------------

def _toy_data(rng, n=16):
    input_ids = rng.integers(0, 7, (n, 3)).astype("int32")
    labels = (rng.normal(0, 50, (n, 2))).astype("float32")
    return input_ids, labels


@pytest.mark.parametrize("jit_compile", [
    False, pytest.param(True, marks=pytest.mark.slow)])
def test_model_fit(jit_compile):
    rng = np.random.default_rng(4)
    model = ToyModel(("LayerNorm", "ln"), name="toy")
    optimizer = create_optimizer(1e-2, 8, 2, model=model)
    model.compile(optimizer=optimizer, loss="mse", jit_compile=jit_compile)
    before = {tf1_name(v): v.numpy() for v in model.trainable_variables}
    history = model.fit(*_toy_data(rng), batch_size=4, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert int(optimizer.iterations.numpy()) == 8
    moved = [n for n, v in before.items()
             if not np.array_equal(v, _weights(model)[n].numpy())]
    assert "word_embeddings" in moved and "output_bias" in moved
    # The schedule reached 0 at num_train_steps.
    assert float(optimizer.learning_rate) == 0.0


def test_loss_scale_optimizer_matches_unscaled():
    rng = np.random.default_rng(5)
    variables = [keras.Variable(rng.normal(0, 1, (3, 2)).astype("float32"),
                                name="kernel"),
                 keras.Variable(np.zeros(2, "float32"), name="bias")]
    copies = [keras.Variable(v.numpy(), name=v.name) for v in variables]
    grads = [rng.normal(0, 3, v.shape).astype("float32") for v in variables]
    plain = create_optimizer(1e-2, 10, 0)
    scaled = keras.optimizers.LossScaleOptimizer(create_optimizer(1e-2, 10, 0))
    for _ in range(2):
        plain.apply([tf.constant(g) for g in grads], copies)
        scale = float(scaled.dynamic_scale.numpy()) if scaled.built else None
        if scale is None:
            scaled.build(variables)
            scale = float(scaled.dynamic_scale.numpy())
        scaled.apply([tf.constant(g * scale) for g in grads], variables)
    for a, b in zip(variables, copies):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    assert int(scaled.iterations.numpy()) == 2
    assert scaled.inner_optimizer.slot_variables(variables[0])["adam_m"] \
        is not None


def test_mixed_precision_fit():
    rng = np.random.default_rng(6)
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_float16")
    try:
        model = ToyModel(("LayerNorm",), name="toy")
        model.compile(optimizer=create_optimizer(1e-2, 8, 2, model=model),
                      loss="mse")
        input_ids, labels = _toy_data(rng)
        # Small targets: a float16 loss times the initial scale 2**15 stays
        # finite, so no step is skipped.
        history = model.fit(input_ids, labels / 100.0, batch_size=4,
                            epochs=1, verbose=0)
    finally:
        keras.config.set_dtype_policy(previous)
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    assert isinstance(model.optimizer.inner_optimizer, AdamWeightDecay)
    assert np.isfinite(history.history["loss"][0])
    assert int(model.optimizer.iterations.numpy()) == 4


_MIRRORED_SCRIPT = textwrap.dedent("""
    import numpy as np, tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras
    from modeling.optimization import create_optimizer
    from tests.test_optimization import ToyModel, _toy_data

    def train(strategy):
        keras.utils.set_random_seed(0)
        with strategy.scope():
            model = ToyModel(("LayerNorm", "ln"), name="toy")
            model.compile(optimizer=create_optimizer(1e-2, 8, 2, model=model),
                          loss="mse")
        dataset = tf.data.Dataset.from_tensor_slices(
            _toy_data(np.random.default_rng(7))).batch(8)
        model.fit(dataset, epochs=2, verbose=0)
        return [v.numpy() for v in model.trainable_variables]

    single = train(tf.distribute.OneDeviceStrategy("/cpu:0"))
    mirrored = train(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
    worst = max(float(np.abs(a - b).max()) for a, b in zip(single, mirrored))
    print("WORST", worst)
    assert worst < 1e-5, worst
""")


@pytest.mark.slow
def test_mirrored_strategy_matches_single_device(repo_root):
    """2 replicas, global batch 8: the same weights as one device, which
    needs clipping after the cross-replica sum (gradients here are large)."""
    env = dict(os.environ, PYTHONPATH=str(repo_root))
    result = subprocess.run([sys.executable, "-c", _MIRRORED_SCRIPT],
                            cwd=repo_root, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WORST" in result.stdout
