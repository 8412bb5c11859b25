"""The training loop shared by the scripts: `model.fit` with TF1 checkpoints.

As the original Estimator: `model.ckpt-<global_step>` + the `checkpoint`
state file in `output_dir` (optimizer state under the original names), a
rerun resumes from the newest, and `loss = ..., step = N` log lines
(`step_logs`). Added: a progress bar on a terminal, TensorBoard scalars
(`summaries`) and `training_curves.png` (`curves`). Where `fit` cannot run,
the same callbacks drive `strategy_loop`. Only the chief writes. `predict`
runs inference; `PaddedOutputs` pads per-token outputs of dynamically
padded batches back to max_seq_length.

`StopOnNonFiniteLoss` runs before `TF1CheckpointSaver` and raises
`NonFiniteLossError` naming the step; the exception skips `on_train_end`, so
the newest checkpoint stays the last good one. With float16 loss scaling a
non-finite loss is only logged (`LossScaleOptimizer` skips the step).
"""
import math
import sys
import time

import keras
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.dynamic_padding import pad_to_length
from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling.keras_internals import (trace_predict_for,
                                               with_end_stopped_epoch)
from bert_tf1.modeling.training import strategy_loop
from bert_tf1.modeling.training.checkpoint_state import (
    latest_training_checkpoint, restore_loss_scale, save_training_checkpoint)
from bert_tf1.modeling.training.curves import write_training_curves
from bert_tf1.modeling.training.evaluation import early_stop_step
from bert_tf1.modeling.training.preemption import (StopOnRequest, TrainingInterrupted,
                                                   stop_on_signals)
from bert_tf1.modeling.training.resume import choose_start, restore_for_training
from bert_tf1.modeling.training.runtime import (is_chief, is_multi_worker,
                                                shard_for_workers, steps_per_execution)
from bert_tf1.modeling.training.step_logs import StepLogger
from bert_tf1.modeling.training.summaries import TrainingSummaries


class TF1CheckpointSaver(keras.callbacks.Callback):
    """Saves a training checkpoint every `save_checkpoints_steps` and at the end."""

    def __init__(self, model, optimizer, output_dir, save_checkpoints_steps,
                 keep_checkpoint_max=5, chief=True):
        super().__init__()
        self._bert_model = model
        self._optimizer = optimizer
        self._output_dir = output_dir
        self._every = max(1, int(save_checkpoints_steps))
        self._keep = keep_checkpoint_max
        self._chief = chief
        self._last_saved = None

    def _save(self):
        step = int(self._optimizer.iterations.numpy())
        if self._chief and step != self._last_saved:
            save_training_checkpoint(self._bert_model, self._optimizer,
                                     self._output_dir, self._keep)
            self._last_saved = step

    def on_train_begin(self, logs=None):
        # Count from the step training starts at (a resumed run's included).
        if self._last_saved is None:
            self._last_saved = int(self._optimizer.iterations.numpy())

    def on_train_batch_end(self, batch, logs=None):
        # With steps_per_execution > 1 this runs once per several steps, so
        # save whenever a multiple of `every` was passed since the last save.
        step = int(self._optimizer.iterations.numpy())
        if step // self._every > self._last_saved // self._every:
            self._save()

    def on_train_end(self, logs=None):
        if self._chief and int(self._optimizer.iterations.numpy()) != self._last_saved:
            # Weights and Adam slots can take a while: say so first.
            logging.info("Training finished; writing the final checkpoint.")
        self._save()


class ExamplesPerSecond(keras.callbacks.Callback):
    """Adds `examples_per_sec` (training throughput) to the progress bar.

    Attributes:
        last_step_end: `time.perf_counter()` when the last batch ended.
    """

    def __init__(self, batch_size):
        super().__init__()
        self._batch_size = batch_size
        self._start = None
        self.last_step_end = None

    def on_train_batch_begin(self, batch, logs=None):
        if self._start is None:
            self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.last_step_end = time.perf_counter()
        elapsed = self.last_step_end - self._start
        if logs is not None and elapsed > 0:
            logs["examples_per_sec"] = (batch + 1) * self._batch_size / elapsed


class NonFiniteLossError(UserError):
    """The training loss became NaN or infinite (the run diverged)."""


class StopOnNonFiniteLoss(keras.callbacks.Callback):
    """Raises `NonFiniteLossError` when the logged loss is not finite.

    Keras' `loss` log is the epoch's running mean: it turns non-finite at
    the first such step (with steps_per_execution k, at the end of the
    execution holding it).

    Args:
        optimizer: the run's optimizer (its `iterations` is the step).
        output_dir: for the message (where the last good checkpoint is).
        loss_scaled: the optimizer is a float16 `LossScaleOptimizer` (then
            only log).
    """

    def __init__(self, optimizer, output_dir, loss_scaled=False):
        super().__init__()
        self._optimizer = optimizer
        self._output_dir = output_dir
        self._loss_scaled = loss_scaled
        self._first_step = None

    def on_train_begin(self, logs=None):
        if self._first_step is None:
            self._first_step = int(self._optimizer.iterations.numpy())

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or math.isfinite(float(loss)):
            return
        loss = float(loss)
        step = int(self._optimizer.iterations.numpy())
        if self._loss_scaled:
            logging.warning("Loss is %s at step %d: float16 overflow; the "
                            "loss scale skips this step.", loss, step)
            return
        try:
            kept = latest_training_checkpoint(self._output_dir)
        except UserError:
            kept = None
        where = (f"the newest checkpoint, {kept}, holds the last finite weights"
                 if kept else "no checkpoint of this run was written")
        raise NonFiniteLossError(
            f"training diverged: the loss is {loss} at step {step}; stopped "
            f"without writing a checkpoint of the diverged weights ({where}). "
            "Lower --learning_rate, check the input data and the init "
            "checkpoint, and run again.")


def needs_strategy_loop(strategy, options):
    """True where Keras `fit` cannot train (see `bert_tf1.modeling.training.strategy_loop`)."""
    return is_multi_worker(strategy) or (
        bool(options.use_xla) and strategy.num_replicas_in_sync > 1)


def _callbacks(model, optimizer, output_dir, options, batch_size,
               initial_step, chief, verbose, guard):
    batches_per_step = int(optimizer.gradient_accumulation_steps or 1)
    return [
        # Before the saver: a NaN step must stop before it is saved.
        StopOnNonFiniteLoss(optimizer, output_dir, loss_scaled=isinstance(
            model.optimizer, keras.optimizers.LossScaleOptimizer)),
        StopOnRequest(guard, optimizer),
        ExamplesPerSecond(batch_size),
        TF1CheckpointSaver(model, optimizer, output_dir,
                           options.save_checkpoints_steps,
                           options.keep_checkpoint_max, chief=chief),
        StepLogger(optimizer, batch_size, options.log_steps, batches_per_step,
                   summaries=(TrainingSummaries(output_dir, initial_step)
                              if chief else None),
                   progress_bar=verbose == 1 and sys.stdout.isatty()),
    ]


@stop_on_signals
def run_training(model, optimizer, dataset, num_train_steps, output_dir, options,
                 batch_size, strategy=None, start_from=None,
                 init_checkpoint=None, verbose="auto", callbacks=None,
                 guard=None):
    """Trains `model` to `num_train_steps` global steps.

    With `model.fit`, or `strategy_loop` where fit cannot run: same loss,
    optimizer, callbacks and checkpoints. Under a multi-worker strategy the
    dataset is DATA-sharded (`runtime.shard_for_workers`) unless its options
    chose a policy, all workers share `output_dir`, and only the chief writes.

    Args:
        model: a task model built with `optimizer` under `strategy.scope()`.
        optimizer: a Keras optimizer with `slot_variables`
            (`bert_tf1.modeling.optimization.create_optimizer`).
        dataset: a repeating `tf.data.Dataset` of `(features, labels)` global
            batches of `batch_size`.
        num_train_steps: int, the total number of optimizer steps.
        output_dir: where checkpoints and TensorBoard logs go.
        options: `bert_tf1.modeling.training.runtime.RuntimeOptions`.
        batch_size: int, global examples per batch.
        strategy: the `tf.distribute.Strategy`.
        start_from: the `resume.CheckpointChoice` to restore; default
            `resume.choose_start(output_dir, init_checkpoint)`.
        verbose: Keras `fit` verbosity; "auto": a progress bar on a terminal.
            The step logs are absl INFO lines whatever it is.
        callbacks: extra Keras callbacks, run after the project's own; one
            that sets `model.stop_training` ends training normally.
        guard: set by `preemption.stop_on_signals`.

    Returns:
        dict with `loss` (mean training loss of this run, or None when
        nothing was trained, e.g. after early stopping) and `global_step`.

    Raises:
        ValueError: `batch_size` does not split evenly over the replicas of a
            multi-worker run.
        RuntimeError: no optimizer step was applied (float16 overflow), or
            the workers resume from different steps.
        checkpoints.CheckpointMismatchError: output_dir holds another model's
            checkpoint.
        NonFiniteLossError: the loss became NaN/Inf.
        preemption.TrainingInterrupted: SIGTERM/SIGINT arrived; a checkpoint
            of the current step was written.
    """
    strategy = strategy or tf.distribute.get_strategy()
    tf.io.gfile.makedirs(output_dir)
    chief = is_chief(strategy)
    use_loop = needs_strategy_loop(strategy, options)
    if is_multi_worker(strategy):
        if batch_size % strategy.num_replicas_in_sync:
            raise UserError(
                f"The train batch size {batch_size} must be a multiple of the "
                f"{strategy.num_replicas_in_sync} replicas of all workers.")
        dataset = shard_for_workers(dataset)
    executions = steps_per_execution(options, strategy)
    with strategy.scope():
        if start_from is None:
            start_from = choose_start(output_dir, init_checkpoint)
        initial_step = restore_for_training(model, optimizer, start_from,
                                            chief=chief)
        if is_multi_worker(strategy):
            strategy_loop.check_same_step(strategy, initial_step)
        remaining = num_train_steps - initial_step
        stop_step = early_stop_step(output_dir)
        if stop_step is not None:
            logging.info(
                "Early stopping ended training in %s at step %d (see its "
                "eval_history.jsonl); not training further: the model holds "
                "the checkpoint of step %d%s.", output_dir, stop_step,
                initial_step,
                "" if stop_step <= initial_step else
                " (the stopped run's final checkpoint is missing)")
            return {"loss": None, "global_step": initial_step}
        if remaining <= 0:
            logging.info("Checkpoint in %s is at step %d >= num_train_steps %d; "
                         "nothing to train.", output_dir, initial_step,
                         num_train_steps)
            return {"loss": None, "global_step": initial_step}
        model.compile(optimizer=optimizer,
                      jit_compile=bool(options.use_xla) and not use_loop,
                      steps_per_execution=executions)
        model.optimizer.build(model.trainable_variables)
        if start_from.source == "output_dir":
            restore_loss_scale(model, start_from.path)
    if verbose == "auto":
        # A progress bar on a terminal only (in a file it is one endless line).
        verbose = 1 if sys.stdout.isatty() else 0
    extra = list(callbacks or ())
    callbacks = _callbacks(model, optimizer, output_dir, options, batch_size,
                           initial_step, chief, verbose, guard)
    clock = next(c for c in callbacks if isinstance(c, ExamplesPerSecond))
    callbacks = with_end_stopped_epoch(callbacks + extra)
    batches_per_step = int(optimizer.gradient_accumulation_steps or 1)
    logging.info("Training from step %d to %d%s.", initial_step, num_train_steps,
                 " on strategy.run (Keras fit cannot run this setup)"
                 if use_loop else "")
    # With float16 loss scaling, steps whose gradients overflow are skipped
    # and not counted; train on until the step count is really reached.
    losses = []
    while remaining > 0 and not guard.requested:
        if use_loop:
            callback_list = keras.callbacks.CallbackList(
                callbacks, add_progbar=verbose != 0, model=model,
                verbose=verbose, epochs=1, steps=remaining * batches_per_step)
            losses.append(strategy_loop.train_with_strategy_run(
                model, dataset, remaining * batches_per_step, strategy,
                callback_list, executions, jit_compile=bool(options.use_xla),
                guard=guard))
        else:
            history = model.fit(dataset, epochs=1,
                                steps_per_epoch=remaining * batches_per_step,
                                shuffle=False, callbacks=callbacks,
                                verbose=verbose)
            losses.append(float(history.history["loss"][-1]))
        if getattr(model, "stop_training", False) and not guard.requested:
            logging.info("A callback stopped training at step %d of %d.",
                         int(optimizer.iterations.numpy()), num_train_steps)
            break
        left = num_train_steps - int(optimizer.iterations.numpy())
        if left >= remaining and not guard.requested:
            raise UserError(
                f"No optimizer step was applied in {remaining} batches (every "
                "gradient overflowed or was not finite); training diverged.")
        remaining = left
    if guard.requested:
        step = int(optimizer.iterations.numpy())
        raise TrainingInterrupted(
            guard.signal_number, step,
            latest_training_checkpoint(output_dir) if chief else None,
            output_dir)
    logging.info("Training done at step %d; %.1f s after the last step for the "
                 "final checkpoint, summaries and input pipeline shutdown.",
                 int(optimizer.iterations.numpy()),
                 time.perf_counter() - (clock.last_step_end or time.perf_counter()))
    if chief:
        write_training_curves(output_dir)
    return {"loss": losses[-1],
            "global_step": int(optimizer.iterations.numpy())}


def predict(model, dataset, strategy=None):
    """`model.predict(dataset)`; under a multi-worker strategy, this worker's own.

    Returns:
        numpy arrays in the structure of the model's outputs.
    """
    strategy = strategy or tf.distribute.get_strategy()
    if is_multi_worker(strategy):
        return strategy_loop.predict_on_this_worker(model, dataset)
    trace_predict_for(model, dataset)  # one trace for every batch length
    return model.predict(dataset, verbose=0)


class PaddedOutputs(keras.Model):
    """Inference wrapper: `model(inputs)` with every output padded along axis 1
    to `seq_length` with `value` (SQuAD's logits: a very low score), inside
    the predict step, per replica (dynamic padding gives each batch its own
    length; `model.predict` concatenates batches). Shares `model`'s weights;
    build it under the strategy's scope.

    Call returns:
        the model's outputs, each [batch, seq_length, ...].
    """

    def __init__(self, model, seq_length, value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.inner = model
        self.seq_length = int(seq_length)
        self.value = float(value)

    def call(self, inputs, training=False):
        outputs = self.inner(inputs, training=False)
        return tf.nest.map_structure(
            lambda output: pad_to_length(output, self.seq_length,
                                         value=self.value),
            outputs)
