"""Gradient caching for in-batch-negative losses: the gradients of a large
batch within the memory of a small one.

The loss of an in-batch-negative batch ties every example to every other,
so it cannot be split into independent mini-batches. Gradient caching (Gao
et al. 2021, "Scaling Deep Contrastive Learning Batch Size under Memory
Limited Setup"; sentence-transformers' CachedMultipleNegativesRankingLoss)
computes the same gradients in three steps:
1. embed the batch chunk by chunk with no gradient tape (activations of one
   chunk alive at a time);
2. the loss on all embeddings and its gradient d loss / d embeddings;
3. per chunk, run forward again under a tape and backpropagate
   sum(embeddings_chunk * cached_gradient_chunk); the sum over chunks is
   d loss / d weights.
Dropout must draw the same masks in steps 1 and 3: the model's Keras seed
generators (our `Dropout` draws stateless Philox from them) are saved before
step 1 and restored before step 3, which then calls them in the same order
with the same shapes.
"""
import keras
import tensorflow as tf

from bert_tf1.modeling import keras_internals


#: Seed-counter values each training batch owns in every dropout seed
#: generator (`seed_dropout_for_batch`): more than the draws of one batch
#: (one per forward pass; one per chunk under gradient caching).
DRAWS_PER_BATCH = 2 ** 20


def seed_dropout_for_batch(model):
    """Sets every seed generator of `model` to (its seed, batch *
    DRAWS_PER_BATCH), batch the optimizer's count of applied batches: the
    dropout masks of a batch depend on the seeds and the batch number only,
    so a run resumed from a checkpoint draws what the uninterrupted run drew
    (with --seed, whose seeds are the same each run). No-op without an
    optimizer."""
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None:
        return
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)
    counter = tf.cast(keras_internals.batch_counter(optimizer).value,
                      tf.int64) * DRAWS_PER_BATCH
    for state in keras_internals.seed_states(model):
        value = tf.convert_to_tensor(state.value)
        state.assign(tf.stack([value[0], tf.cast(counter, value.dtype)]))


def _chunk(x, index, size):
    """Rows [index * size, (index + 1) * size) of every tensor in `x`."""
    start = index * size
    return tf.nest.map_structure(lambda value: value[start:start + size], x)


def _batch_size(x):
    return tf.shape(tf.nest.flatten(x)[0])[0]


def _embed_in_chunks(model, x, size, num_chunks):
    """Step 1: the embeddings of every chunk, concatenated, no gradients."""
    shapes = []

    def body(index, array):
        embeddings = model(_chunk(x, index, size), training=True)
        shapes[:] = [embeddings.shape[1:]]
        return index + 1, array.write(index, tf.cast(embeddings, tf.float32))

    array = tf.TensorArray(tf.float32, size=num_chunks, infer_shape=False)
    # One chunk at a time: tf.while_loop's default runs up to 10 iterations
    # at once in a graph, each chunk's activations alive (15.7 GB peak RSS at
    # batch 1,024 of 128 tokens in chunks of 32; benchmarks/embeddings.py
    # --memory).
    _, array = tf.while_loop(lambda index, _: index < num_chunks, body,
                             (tf.constant(0), array), parallel_iterations=1)
    embeddings = array.concat()
    if shapes:  # the per-example shape, lost by the TensorArray
        embeddings.set_shape(tf.TensorShape([None]).concatenate(shapes[0]))
    return tf.stop_gradient(embeddings)


def cached_gradients(model, x, y, sample_weight, mini_batch_size,
                     variables=None):
    """The loss of the whole batch and its gradients, chunk by chunk.

    Args:
        model: a compiled `SentenceEmbedder` (any Keras model whose output
            rows follow its input rows and whose `compute_loss` takes the
            whole batch's output).
        x: dict of int32 inputs, [batch, seq] or [batch, num_texts, seq].
        y, sample_weight: as `fit` passes them (or None).
        mini_batch_size: int >= 1, examples per chunk (the last may be
            smaller).
        variables: the variables to differentiate (default the model's
            trainable variables).

    Returns:
        (loss: float scalar as `compute_loss` returns it, before the
        optimizer's loss scaling; embeddings: float32 [batch, ...], the
        model's output; gradients: list, one per variable, of the
        (loss-scaled, when the optimizer scales) loss's gradient, None for
        a variable the model does not use).

    Equal to the gradients of the loss on `model(x, training=True)` run on
    the whole batch at once whenever dropout draws per chunk are the draws
    that run would make (e.g. without dropout, or against a reference that
    embeds in the same chunks); tests/modeling/models/test_gradient_cache.py.
    """
    if variables is None:
        variables = model.trainable_variables
    size = int(mini_batch_size)
    x = tf.nest.map_structure(tf.convert_to_tensor, x)
    batch = _batch_size(x)
    num_chunks = (batch + size - 1) // size
    seeds = keras_internals.seed_states(model)
    # (Variable reads and writes run in program order, in tf.function too.)
    saved = [tf.identity(seed.value) for seed in seeds]
    embeddings = _embed_in_chunks(model, x, size, num_chunks)
    optimizer = getattr(model, "optimizer", None)
    with tf.GradientTape() as tape:
        tape.watch(embeddings)
        loss = model.compute_loss(x=x, y=y, y_pred=embeddings,
                                  sample_weight=sample_weight, training=True)
        scaled = loss if optimizer is None else optimizer.scale_loss(loss)
    embedding_gradients = tape.gradient(scaled, embeddings)
    # Step 3, with step 1's dropout masks.
    for seed, value in zip(seeds, saved):
        seed.assign(value)
    unused = []

    def body(index, *sums):
        with tf.GradientTape() as chunk_tape:
            chunk = model(_chunk(x, index, size), training=True)
            surrogate = tf.reduce_sum(tf.cast(chunk, tf.float32) * _chunk(
                embedding_gradients, index, size))
        grads = chunk_tape.gradient(surrogate, variables)
        unused[:] = [grad is None for grad in grads]
        return (index + 1,) + tuple(
            total if grad is None else
            total + tf.cast(tf.convert_to_tensor(grad), total.dtype)
            for total, grad in zip(sums, grads))

    zeros = tuple(tf.zeros(variable.shape, variable.dtype)
                  for variable in variables)
    results = tf.while_loop(lambda index, *_: index < num_chunks, body,
                            (tf.constant(0),) + zeros, parallel_iterations=1)
    gradients = [None if missing else total
                 for missing, total in zip(unused, results[1:])]
    return loss, embeddings, gradients


def cached_train_step(model, data, mini_batch_size):
    """`keras.Model.train_step` with gradient caching (`cached_gradients`):
    one optimizer step on the whole batch, its metrics as `fit` logs them.

    Args:
        model: a compiled `SentenceEmbedder`.
        data: the batch `fit` passes: x, (x, y) or (x, y, sample_weight).
        mini_batch_size: int >= 1.

    Returns:
        dict of metric results (`model.compute_metrics`).
    """
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
    variables = model.trainable_variables
    loss, embeddings, gradients = cached_gradients(
        model, x, y, sample_weight, mini_batch_size, variables)
    # fit's loss log: the per-replica loss times the replicas (Keras'
    # unscale_loss_for_distribution), weighted by the batch size.
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    keras_internals.loss_tracker(model).update_state(
        loss * replicas if replicas > 1 else loss,
        sample_weight=_batch_size(x))
    pairs = [(grad, variable) for grad, variable in zip(gradients, variables)
             if grad is not None]
    model.optimizer.apply_gradients(pairs)
    return model.compute_metrics(x, y, embeddings, sample_weight=sample_weight)
