"""Which variables bert_tf1/modeling/optimization/ decays: the original's
exclusion patterns (LayerNorm, layer_norm, bias), Keras normalization
weights wherever they sit, and which BERT gradients enter the global norm.
"""
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.modeling import BertClassifier, BertConfig
from bert_tf1.modeling.naming import tf1_name
from bert_tf1.modeling.optimization import (AdamWeightDecay, create_optimizer,
                                            matches_exclusion, normalization_variables)
from tests.helpers.optimizer_reference import ORIGINAL_EXCLUDE, ToyModel


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


