"""Tests for bert_tf1/modeling/optimization/ against the original optimization.py.

Expected values come from NumPy transcriptions of the original formulas
(float64), from the original repo's optimization_test, and from the fixture
checkpoints, which the original `AdamWeightDecayOptimizer` trained for 2 steps
(lr 1e-3, warmup 2 of 10) and saved with their `adam_m`/`adam_v` slots.
"""
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertClassifier, BertConfig
from bert_tf1.modeling.optimization import (AdamWeightDecay, LambWeightDecay,
                                            WarmupLinearDecay, create_optimizer)
from tests.helpers.optimizer_reference import (ORIGINAL_EXCLUDE, ToyModel,
                                       numpy_adamw_step, numpy_lamb_step,
                                       original_global_norm, original_lr,
                                       weights_by_name)

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
    weights = weights_by_name(model)
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
    weights = weights_by_name(model)
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
    weights = weights_by_name(BertClassifier(config, num_labels=3))
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
