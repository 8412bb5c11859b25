"""Every use of a private Keras or TensorFlow API, in one place.

Parity with the original optimizer needs hooks Keras 3 keeps private, and
multi-worker runs two attributes of `tf.distribute`. A release that renames
one fails in tests/modeling/test_keras_internals.py (one contract test per
hook) instead of inside a training run. Accessors below read or call a
private member; `OVERRIDDEN_HOOKS` lists the private optimizer methods
`TF1StyleOptimizer` overrides.
"""
import inspect
import sys

import keras
import tensorflow as tf

#: Private `keras.optimizers.Optimizer` methods our optimizers override:
#: name -> the parameter names (after `self`) Keras passes.
OVERRIDDEN_HOOKS = {
    # Keras' TF backend: sum over replicas, then one merge call of
    # `_distributed_tf_update_step`; we clip between the two.
    "_backend_update_step": ("grads", "trainable_variables", "learning_rate"),
    # Per-replica clipping before the sum; we clip after it instead.
    "_clip_gradients": ("grads",),
    # The rate of the current step; ours is evaluated at iterations + 1.
    "_get_current_learning_rate": (),
}


class KerasInternalsError(RuntimeError):
    """A private Keras/TensorFlow hook this project relies on has changed."""


def _require(owner, name):
    if not hasattr(owner, name):
        raise KerasInternalsError(
            f"{type(owner).__name__} has no {name!r}: the installed Keras "
            f"{keras.__version__} / TensorFlow {tf.__version__} changed a "
            "private API that bert_tf1/modeling/keras_internals.py relies on; see "
            "tests/modeling/test_keras_internals.py.")
    return getattr(owner, name)


# ----- optimizer state ----------------------------------------------------------

def variable_key(optimizer, variable):
    """The key Keras' optimizer uses for `variable` in its own tables."""
    return _require(optimizer, "_var_key")(variable)


def variable_index(optimizer, variable):
    """Index of `variable` among the optimizer's built variables, or None."""
    indices = _require(optimizer, "_trainable_variables_indices")
    return indices.get(variable_key(optimizer, variable))


def learning_rate_setting(optimizer):
    """What the optimizer was given as learning rate: a float variable or a
    `LearningRateSchedule` (Keras wraps floats in a variable)."""
    return _require(optimizer, "_learning_rate")


def batch_counter(optimizer):
    """The int64 variable counting applied batches (under gradient
    accumulation `optimizer.iterations` is computed from it: batches // k)."""
    return _require(optimizer, "_iterations")


# ----- the TF backend's distributed update ---------------------------------------

def all_reduce_sum_gradients(optimizer, grads_and_vars):
    """Sums gradients over replicas as Keras' TF backend does before updating.

    Args:
        optimizer: a Keras optimizer (TensorFlow backend).
        grads_and_vars: list of (gradient, variable value) pairs.
    Returns:
        list of (summed gradient, variable) pairs.
    """
    return _require(optimizer, "_all_reduce_sum_gradients")(grads_and_vars)


def distributed_update(optimizer, grads_and_vars, learning_rate):
    """Runs Keras' per-variable `update_step` for all pairs in one merge call
    (what its TF `_backend_update_step` does after the gradient sum)."""
    update = _require(optimizer, "_distributed_tf_update_step")
    strategy = _require(optimizer, "_distribution_strategy")
    tf.__internal__.distribute.interim.maybe_merge_call(
        update, strategy, grads_and_vars, learning_rate)


def hook_parameters(name):
    """The parameter names (after self) of a private method of
    `keras.optimizers.Optimizer` (the TF backend's)."""
    method = _require(keras.optimizers.Optimizer, name)
    return tuple(inspect.signature(method).parameters)[1:]


# ----- models -----------------------------------------------------------------

def all_layers(model):
    """Every layer inside `model`, itself included, nested ones too."""
    return list(_require(model, "_flatten_layers")(include_self=True,
                                                   recursive=True))


def seed_states(model):
    """The state variables (int [2] each) of every `keras.random.SeedGenerator`
    of `model`'s layers (Dropout's among them), in layer order: saved and
    restored, they replay the same random draws (gradient caching)."""
    return [generator.state for layer in all_layers(model)
            for generator in _require(layer, "_seed_generators")]


def loss_tracker(model):
    """The `keras.metrics.Mean` behind `fit`'s "loss" log (a compiled
    model's), which a custom `train_step` updates."""
    return _require(model, "_loss_tracker")


def lora_base_kernel(dense):
    """The frozen base kernel W of a LoRA-enabled `keras.layers.Dense`
    (its public `kernel` is W + (alpha / rank) A B, cast to the compute
    dtype)."""
    return _require(dense, "_kernel")


# ----- predict --------------------------------------------------------------------

def trace_predict_for(model, dataset):
    """Traces `model.predict_function` once for `dataset.element_spec`.

    Keras 3 calls `predict_function([batch])` with each batch's tensors and
    traces it anew for a second batch shape (then relaxed, by
    `reduce_retracing`): with dynamic padding every `predict` traced twice.
    Traced first for the dataset's spec (None where batches differ), every
    batch's call finds that one trace. Done only where Keras passes the
    dataset's elements as they are: a `tf.data.Dataset`, graph mode, one
    step per execution, no distribution strategy; otherwise nothing is done.

    Args:
      model: a `keras.Model`.
      dataset: what is about to be given to `model.predict`.
    """
    if (not isinstance(dataset, tf.data.Dataset) or model.run_eagerly
            or model.steps_per_execution != 1 or tf.distribute.has_strategy()
            or _require(model, "_distribute_strategy") is not None):
        return
    model.make_predict_function()
    model.predict_function.get_concrete_function([dataset.element_spec])


# ----- fit ------------------------------------------------------------------------

class EndStoppedEpoch(keras.callbacks.Callback):
    """Closes `fit`'s epoch generator when a callback stopped `fit` early.

    Our own code, for a measured stall: Keras 3's `fit` (TF backend) leaves
    the generator of its `TFEpochIterator` (the local `epoch_iterator`,
    attribute `_epoch_iterator`) suspended when a callback sets
    `model.stop_training`; the generator's frame holds the iterator and the
    iterator the generator, so the tf.data iterator in it is freed only by
    the cyclic garbage collector, and TensorFlow's iterator destructor run
    from a collection waits for the pipeline's autotuning thread to wake by
    itself (up to 60 s; 16 s in the first full collection after 25 s of
    training, 0.3 s with the generator closed), in whatever code of the
    process that collection happens to run. Closed, the iterator is freed
    when `fit` returns. Where Keras names them otherwise it does nothing
    (tests/modeling/test_keras_internals.py fails instead).
    """

    def on_train_end(self, logs=None):
        if getattr(self.model, "stop_training", False):
            generator = fit_epoch_generator(sys._getframe(1))
            if generator is not None:
                generator.close()


def fit_epoch_generator(frame):
    """The epoch generator of the `fit` call that `frame` (a callback's, or
    its caller's) runs in: the local `epoch_iterator`'s `_epoch_iterator`;
    None where there is none (outside `fit`, or renamed)."""
    while frame is not None and frame.f_code.co_name != "fit":
        frame = frame.f_back
    generator = getattr(frame and frame.f_locals.get("epoch_iterator"),
                        "_epoch_iterator", None)
    return generator if inspect.isgenerator(generator) else None


def with_end_stopped_epoch(callbacks):
    """`callbacks` (a list, None or a `keras.callbacks.CallbackList`) with an
    `EndStoppedEpoch` at the end, unless it holds one (or is a
    CallbackList, returned as it is)."""
    if isinstance(callbacks, keras.callbacks.CallbackList):
        return callbacks
    callbacks = list(callbacks or ())
    if not any(isinstance(c, EndStoppedEpoch) for c in callbacks):
        callbacks.append(EndStoppedEpoch())
    return callbacks


# ----- checkpoint state files ---------------------------------------------------

def checkpoint_state_proto():
    """The `CheckpointState` protobuf class of a folder's `checkpoint` file
    (TensorFlow exports readers of it, not the message itself)."""
    from tensorflow.python.training import checkpoint_state_pb2

    return checkpoint_state_pb2.CheckpointState


# ----- tf.saved_model -----------------------------------------------------------

def saved_model_tracing_context(options):
    """The context `tf.saved_model.save(..., options=options)` traces
    functions in (its SaveContext, whose variable policy is part of a
    tf.function's trace key): a signature traced under it is the trace that
    saving with the same `options` reuses.

    Raises:
        ValueError: already inside such a context (TensorFlow's own check).
    """
    from tensorflow.python.saved_model import save_context

    return save_context.save_context(options)


# ----- tf.distribute -------------------------------------------------------------

def in_multi_worker_mode(strategy):
    """True when `strategy` spans several worker processes."""
    extended = getattr(strategy, "extended", None)
    probe = getattr(extended, "_in_multi_worker_mode", None)
    return bool(probe()) if probe is not None else False


def num_workers(strategy):
    """How many worker processes a multi-worker strategy spans."""
    return int(_require(strategy.extended, "_num_workers"))
