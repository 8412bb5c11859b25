"""A training loop on `strategy.run`, for the cases Keras 3 `fit` cannot run.

Keras 3 `fit` fails under MultiWorkerMirroredStrategy before step 1 (its
symbolic build reduces the dict batch with one `strategy.reduce`), and with
several local replicas `fit(jit_compile=True)` compiles the cross-replica
update into one replica's XLA cluster. This loop does what `fit`'s train
step does with the same pieces (forward pass, `model.compute_loss`,
gradients, optionally XLA-compiled per replica, then `model.optimizer.apply`)
and drives the same Keras callbacks by hand.
"""
import keras
import numpy as np
import tensorflow as tf

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling.training.preemption import STOP_SIGNALS
from bert_tf1.modeling.training.runtime import is_multi_worker


def make_train_function(model, strategy, jit_compile=False):
    """`train(iterator, num_steps) -> losses` over `num_steps` batches.

    Each step takes one distributed batch `(x, y)` or `(x, y, sample_weight)`
    from `iterator`, computes `model.compute_loss` (already divided by the
    number of replicas, see `bert_tf1.modeling.models.losses.scale_for_replicas`) and applies
    `model.optimizer`. The returned float32 tensor [num_steps] holds each
    batch's global-batch loss (the per-replica losses summed).

    Raises:
        UserError: the model trains with gradient caching (a
            `SentenceEmbedder` with `mini_batch_size`): its train step is
            `fit`'s only.
    """
    if getattr(model, "mini_batch_size", None):
        raise UserError(
            "--mini_batch_size (gradient caching) runs in Keras fit's train "
            "step, which this setup (several workers or XLA on several "
            "replicas) cannot use: leave it out, or lower the batch size.")
    optimizer = model.optimizer

    def gradients(x, y, sample_weight):
        with tf.GradientTape() as tape:
            y_pred = model(x, training=True)
            loss = model.compute_loss(x=x, y=y, y_pred=y_pred,
                                      sample_weight=sample_weight,
                                      training=True)
            scaled = optimizer.scale_loss(loss)
        return loss, tape.gradient(scaled, model.trainable_variables)

    if jit_compile:
        gradients = tf.function(gradients, jit_compile=True,
                                reduce_retracing=True)

    def replica_step(data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        loss, grads = gradients(x, y, sample_weight)
        optimizer.apply(grads, model.trainable_variables)
        return tf.cast(loss, tf.float32)

    @tf.function
    def train(iterator, num_steps):
        losses = tf.TensorArray(tf.float32, size=num_steps)
        for i in tf.range(num_steps):
            per_replica = strategy.run(replica_step, args=(next(iterator),))
            losses = losses.write(i, strategy.reduce(
                tf.distribute.ReduceOp.SUM, per_replica, axis=None))
        return losses.stack()

    return train


def _sum_over_replicas(strategy):
    """A tf.function: `value` summed over every replica of every worker."""
    @tf.function
    def total(value):
        def replica_fn(value):
            value = tf.identity(value)  # A copy on the replica's device.
            return tf.distribute.get_replica_context().all_reduce(
                tf.distribute.ReduceOp.SUM, value)
        return strategy.experimental_local_results(
            strategy.run(replica_fn, args=(value,)))[0]
    return total


def check_same_step(strategy, step):
    """Raises unless every worker resumes from the same global step (each
    restores the checkpoint it finds: output_dir must be shared).

    Raises:
        UserError: the workers' global steps differ.
    """
    total = _sum_over_replicas(strategy)
    mean = float(total(tf.constant(float(step), tf.float64))
                 ) / strategy.num_replicas_in_sync
    if float(total(tf.constant(abs(step - mean), tf.float64))) != 0.0:
        raise UserError(
            f"The workers resume from different global steps (this one from "
            f"{step}): output_dir must be one folder shared by all workers.")


def make_stop_agreement(strategy, signals=None):
    """`agree(signal_number) -> int`: the stop signal some worker got (0: none).

    A collective every worker calls once per execution, so all stop after
    the same step. Each contributes a one-hot vector over `signals` (the
    first any worker got wins: SIGTERM before SIGINT).
    """
    signals = tuple(signals or STOP_SIGNALS)
    sum_over_workers = _sum_over_replicas(strategy)

    def agree(signal_number):
        counts = sum_over_workers(tf.constant(
            [1.0 if signal_number == number else 0.0 for number in signals],
            tf.float32)).numpy()
        return next((int(number) for number, count in zip(signals, counts)
                     if count > 0), 0)

    return agree


def train_with_strategy_run(model, dataset, num_batches, strategy, callbacks,
                            steps_per_execution=1, jit_compile=False,
                            guard=None):
    """Runs `num_batches` training batches; returns their mean loss.

    Args:
        model: compiled (its `optimizer` built) under `strategy.scope()`.
        dataset: a repeating `tf.data.Dataset` of global batches.
        num_batches: int, batches to run.
        strategy: the `tf.distribute.Strategy`.
        callbacks: a `keras.callbacks.CallbackList` (those of the `fit`
            path), given `loss` (the running mean) in the logs as by `fit`.
        steps_per_execution: int, batches per compiled call.
        jit_compile: bool, XLA-compile each replica's gradient computation.
        guard: a `preemption.PreemptionGuard`, or None. A stop it requests
            (or `model.stop_training`) ends the loop after the current
            execution; under several workers all agree on it
            (`make_stop_agreement`).

    Returns:
        float, the mean loss over the batches run.
    """
    agree = None
    if guard is not None and guard.active and is_multi_worker(strategy):
        agree = make_stop_agreement(strategy)
    distributed = strategy.experimental_distribute_dataset(dataset)
    iterator = iter(distributed)
    train = make_train_function(model, strategy, jit_compile)
    # The batch losses come back to Python, where a `Mean` keeps the running
    # mean that fit's loss tracker keeps (made here, outside the strategy's
    # scope, its variables are plain ones).
    tracker = keras.metrics.Mean(name="loss")
    done = 0
    model.stop_training = False
    callbacks.on_train_begin()
    callbacks.on_epoch_begin(0)
    while done < num_batches:
        count = min(int(steps_per_execution), num_batches - done)
        callbacks.on_train_batch_begin(done)
        for loss in train(iterator, tf.constant(count, tf.int32)).numpy():
            tracker.update_state(loss, sample_weight=1.0)
        done += count
        logs = {"loss": float(tracker.result())}
        callbacks.on_train_batch_end(done - 1, logs)
        if agree is not None:
            local = guard.signal_number if model.stop_training else 0
            agreed = agree(local)
            if agreed:
                guard.stop(agreed)
                model.stop_training = True
        if model.stop_training:
            break
    logs = {"loss": float(tracker.result())}
    callbacks.on_epoch_end(0, logs)
    callbacks.on_train_end(logs)
    return logs["loss"]


def predict_on_this_worker(model, dataset):
    """`model.predict` run by this worker alone, on all of `dataset` (Keras 3
    `predict` under a multi-worker strategy gathers across workers).

    Args:
        model: a built Keras model.
        dataset: batches of inputs, or of `(inputs, ...)` tuples.

    Returns:
        numpy arrays in the structure of the model's outputs, batches
        concatenated along axis 0.

    Raises:
        ValueError: the dataset is empty.
    """
    @tf.function(reduce_retracing=True)
    def step(inputs):
        return model(inputs, training=False)

    outputs = []
    for batch in dataset:
        inputs, _, _ = keras.utils.unpack_x_y_sample_weight(batch)
        outputs.append(tf.nest.map_structure(lambda t: t.numpy(), step(inputs)))
    if not outputs:
        raise ValueError("predict_on_this_worker: the dataset is empty.")
    return tf.nest.map_structure(lambda *parts: np.concatenate(parts), *outputs)
