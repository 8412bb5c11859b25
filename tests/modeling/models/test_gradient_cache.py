"""Gradient caching (`SentenceEmbedder(mini_batch_size=...)`) gives the
gradients of the loss on the whole batch, with dropout on: the second pass
replays the first pass's dropout masks."""
import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertConfig, SentenceEmbedder, keras_internals
from bert_tf1.modeling.models.embedding_losses import (
    MultipleNegativesRankingLoss)
from bert_tf1.modeling.models.gradient_cache import cached_gradients

TOLERANCE = 1e-5


@pytest.fixture(autouse=True)
def seeded_weights():
    """The same initial weights in every run. TOLERANCE is absolute, and
    the gradient of token_type_embeddings sums over every token of the
    batch: over unseeded initialisations its largest entry ranged 3.7-32
    and cached vs whole-batch differed by 1.5e-07-7.8e-07 of it (float32
    summation order), 1.1e-05 once in a suite run. Seed 0 gives entries up
    to 13.5 and differences of 2.9e-06-3.2e-06 (2-core Zen 3)."""
    keras.utils.set_random_seed(0)


def config(dropout):
    return BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2,
                      num_attention_heads=2, intermediate_size=32,
                      max_position_embeddings=16, hidden_dropout_prob=dropout,
                      attention_probs_dropout_prob=dropout)


def batch(size=5, num_texts=3, seq_length=7, seed=0):
    rng = np.random.default_rng(seed)
    shape = (size, num_texts, seq_length)
    mask = np.ones(shape, "int32")
    mask[:, :, 5:] = rng.integers(0, 2, (size, num_texts, 1))
    return {"input_ids": rng.integers(1, 64, shape).astype("int32") * mask,
            "input_mask": mask, "segment_ids": np.zeros(shape, "int32")}


def whole_batch_gradients(model, x, y, chunk_size=None):
    """The reference: one tape over the whole batch (run in chunks of
    `chunk_size` when given, so dropout draws what the cached pass draws)."""
    with tf.GradientTape() as tape:
        if chunk_size is None:
            embeddings = model(x, training=True)
        else:
            embeddings = tf.concat([
                model({k: v[i:i + chunk_size] for k, v in x.items()},
                      training=True)
                for i in range(0, len(x["input_ids"]), chunk_size)], axis=0)
        loss = model.compute_loss(x=x, y=y, y_pred=embeddings)
    return float(loss), tape.gradient(loss, model.trainable_variables)


def max_difference(grads_a, grads_b):
    return max(float(np.max(np.abs(np.asarray(tf.convert_to_tensor(a))
                                   - np.asarray(tf.convert_to_tensor(b)))))
               for a, b in zip(grads_a, grads_b) if a is not None)


def test_fit_with_caching_and_dropout_takes_the_whole_batch_step():
    """One traced fit step (SGD, rate 1) with mini_batch_size 2 on 5
    examples (MNRL, symmetric, one hard negative), dropout on: the step is
    minus the gradient of one tape over the batch embedded with the same
    masks, and the seeds end where that pass leaves them."""
    model = SentenceEmbedder(config(0.1), mini_batch_size=2)
    model.compile(optimizer=keras.optimizers.SGD(1.0),
                  loss=MultipleNegativesRankingLoss(symmetric=True),
                  jit_compile=False)
    x = batch(num_texts=3)
    y = np.zeros(5, "float32")
    seeds = keras_internals.seed_states(model)
    assert len(seeds) > 2
    start = [s.numpy() for s in seeds]
    weights = [v.numpy() for v in model.trainable_variables]
    history = model.fit(x, batch_size=5, epochs=1, verbose=0, shuffle=False)
    steps = [w - v.numpy() for w, v in zip(weights, model.trainable_variables)]
    after = [s.numpy() for s in seeds]
    for variable, value in zip(model.trainable_variables, weights):
        variable.assign(value)
    for seed, value in zip(seeds, start):
        seed.assign(value)
    reference_loss, reference = whole_batch_gradients(model, x, y, 2)
    for a, b in zip(after, (s.numpy() for s in seeds)):
        np.testing.assert_array_equal(a, b)
    assert history.history["loss"][0] == pytest.approx(reference_loss,
                                                       abs=1e-5)
    assert max_difference(steps, reference) < TOLERANCE
    # Dropout was on: other masks give other gradients (by far more than
    # the tolerance), so a replay with the wrong masks would fail above.
    _, other_masks = whole_batch_gradients(model, x, y, 2)
    assert max_difference(other_masks, reference) > 1e-3


def test_without_dropout_they_equal_one_pass_over_the_batch():
    """Eager `cached_gradients` in chunks of 4 of 6 against one tape over
    the whole batch run at once."""
    model = SentenceEmbedder(config(0.0))
    model.compile(loss=MultipleNegativesRankingLoss())
    x = batch(size=6, num_texts=2, seed=1)
    y = np.zeros(6, "float32")
    _, _, cached = cached_gradients(model, x, y, None, 4)
    _, plain = whole_batch_gradients(model, x, y)
    assert max_difference(cached, plain) < TOLERANCE
    assert max(float(np.abs(np.asarray(tf.convert_to_tensor(g))).max())
               for g in plain if g is not None) > 1e-2


def test_the_strategy_run_loop_refuses_caching():
    from bert_tf1.data.io.errors import UserError
    from bert_tf1.modeling.training.strategy_loop import make_train_function

    model = SentenceEmbedder(config(0.0), mini_batch_size=2)
    with pytest.raises(UserError, match="--mini_batch_size"):
        make_train_function(model, tf.distribute.get_strategy())
