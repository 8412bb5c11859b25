"""Shared helpers of the optimizer tests: NumPy transcriptions of the
original optimization.py (float64) and a small model whose weights have
TF1-style names.
"""
import keras
import numpy as np

from bert_tf1.modeling.naming import tf1_name

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


def weights_by_name(model):
    return {tf1_name(v): v for v in model.trainable_variables}


def toy_data(rng, n=16):
    input_ids = rng.integers(0, 7, (n, 3)).astype("int32")
    labels = (rng.normal(0, 50, (n, 2))).astype("float32")
    return input_ids, labels
