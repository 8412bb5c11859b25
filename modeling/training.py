"""The training loop shared by the scripts: `model.fit` with TF1 checkpoints.

What it keeps from the original Estimator setup: checkpoints named
`model.ckpt-<global_step>` plus a `checkpoint` state file in `output_dir`
(every `save_checkpoints_steps` and at the end, the newest
`keep_checkpoint_max` kept), with the optimizer state under the original names
(`<var>/adam_m`, `<var>/adam_v`, `global_step`); a rerun of the same command
resumes from the newest one. What it adds: a Keras progress bar with the loss and
examples per second, and TensorBoard logs in `output_dir`.

Where Keras 3 `fit` cannot run (multi-worker, or XLA over several local
replicas) the same callbacks drive `modeling.strategy_loop` instead. Only the
chief writes checkpoints and summaries. A float16 run's loss scale is saved
with its checkpoints (`loss_scale`, `good_steps`) and restored on resume.
"""
import os
import sys
import time

import keras
import tensorflow as tf
from absl import logging

from data.io.atomic import write_text_atomically
from modeling import checkpoints, optimization, strategy_loop
from modeling.runtime import (is_chief, is_multi_worker, shard_for_workers,
                              steps_per_execution)

TRAINING_CHECKPOINT_PREFIX = "model.ckpt"
# Extra checkpoint entries of a float16 run (skipped by weight loaders, see
# `checkpoints.is_optimizer_state`).
LOSS_SCALE = "loss_scale"
GOOD_STEPS = "good_steps"


def create_training_optimizer(options, init_lr, num_train_steps,
                              num_warmup_steps, model=None):
    """The original optimizer as `options` ask: `--optimizer`, accumulation.

    Call under `strategy.scope()`. With `gradient_accumulation_steps` k > 1
    the gradients of k batches are averaged per update (Keras' optimizer
    option); `iterations`, i.e. `global_step`, then counts updates, so
    `num_train_steps` and the schedule stay in updates.

    Args:
        options: `modeling.runtime.RuntimeOptions` (`optimizer`,
            `gradient_accumulation_steps`).
        init_lr, num_train_steps, num_warmup_steps, model: as
            `modeling.optimization.create_optimizer`.

    Returns:
        `AdamWeightDecay` or `LambWeightDecay`.
    Raises:
        ValueError: see `create_optimizer`.
    """
    optimizer = optimization.create_optimizer(
        init_lr, num_train_steps, num_warmup_steps,
        optimizer_type=options.optimizer, model=model)
    steps = int(options.gradient_accumulation_steps or 1)
    if steps > 1:
        # Read by Keras' `build` (accumulators) and `apply`; set before build.
        optimizer.gradient_accumulation_steps = steps
    return optimizer


def latest_training_checkpoint(output_dir):
    """Prefix of the newest `model.ckpt-N` recorded in `output_dir`, or None."""
    if not tf.io.gfile.isdir(output_dir):
        return None
    return tf.train.latest_checkpoint(output_dir)


def _write_checkpoint_state(output_dir, paths):
    # The `checkpoint` text proto the Estimator writes, with relative paths so
    # the folder can be moved; written atomically.
    lines = [f'model_checkpoint_path: "{paths[-1]}"']
    lines += [f'all_model_checkpoint_paths: "{path}"' for path in paths]
    write_text_atomically(os.path.join(output_dir, "checkpoint"),
                          "\n".join(lines) + "\n")


def _recorded_checkpoints(output_dir):
    state = tf.train.get_checkpoint_state(output_dir)
    if state is None:
        return []
    return [os.path.basename(path) for path in state.all_model_checkpoint_paths]


def _loss_scale_optimizer(model):
    optimizer = getattr(model, "optimizer", None)
    if isinstance(optimizer, keras.optimizers.LossScaleOptimizer) and optimizer.built:
        return optimizer
    return None


def _loss_scale_tensors(model):
    optimizer = _loss_scale_optimizer(model)
    if optimizer is None:
        return {}
    return {LOSS_SCALE: tf.cast(optimizer.dynamic_scale.value, tf.float32),
            GOOD_STEPS: tf.cast(optimizer.step_counter.value, tf.int64)}


def restore_loss_scale(model, checkpoint):
    """Sets a compiled float16 model's loss scale from `checkpoint`, if saved.

    Returns:
        float, the restored scale, or None (no loss scaling, or none saved).
    """
    optimizer = _loss_scale_optimizer(model)
    if optimizer is None or not checkpoint:
        return None
    reader = tf.train.load_checkpoint(checkpoint)
    if not reader.has_tensor(LOSS_SCALE):
        return None
    scale = float(reader.get_tensor(LOSS_SCALE))
    optimizer.dynamic_scale.assign(scale)
    if reader.has_tensor(GOOD_STEPS):
        optimizer.step_counter.assign(int(reader.get_tensor(GOOD_STEPS)))
    logging.info("Restored the float16 loss scale %g from %s.", scale, checkpoint)
    return scale


def save_training_checkpoint(model, optimizer, output_dir, keep_checkpoint_max=5):
    """Writes `model.ckpt-<global_step>` with optimizer state; updates `checkpoint`.

    A compiled float16 model's loss scale goes in as `loss_scale` and
    `good_steps`.

    Args:
        model: the task model being trained.
        optimizer: its optimizer (slots and `iterations` are saved).
        output_dir: the training run's folder.
        keep_checkpoint_max: how many recorded checkpoints to keep; older
            ones are deleted (0 keeps all).

    Returns:
        str, the prefix written.
    """
    start = time.perf_counter()
    step = int(optimizer.iterations.numpy())
    name = f"{TRAINING_CHECKPOINT_PREFIX}-{step}"
    prefix = os.path.join(output_dir, name)
    # A file of this name that the state file does not list is a leftover
    # (e.g. of an interrupted earlier run); the current weights replace it.
    checkpoints.save_tf1_checkpoint(model, prefix, optimizer=optimizer,
                                    overwrite=True,
                                    extra_tensors=_loss_scale_tensors(model))
    recorded = [path for path in _recorded_checkpoints(output_dir) if path != name]
    recorded.append(name)
    stale = recorded[:-keep_checkpoint_max] if keep_checkpoint_max > 0 else []
    kept = recorded[len(stale):]
    _write_checkpoint_state(output_dir, kept)
    for old in stale:
        for path in tf.io.gfile.glob(os.path.join(output_dir, old + ".*")):
            tf.io.gfile.remove(path)
    logging.info("Saved checkpoint %s in %.1f s", prefix,
                 time.perf_counter() - start)
    return prefix


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
            # Weights and Adam slots: 3x the model (1.3 GB for BERT-Base),
            # which can take a while; say so before the pause.
            logging.info("Training finished; writing the final checkpoint.")
        self._save()


class ExamplesPerSecond(keras.callbacks.Callback):
    """Adds `examples_per_sec` (training throughput) to the progress bar."""

    def __init__(self, batch_size):
        super().__init__()
        self._batch_size = batch_size
        self._start = None
        self._batches = 0

    def on_train_batch_begin(self, batch, logs=None):
        if self._start is None:
            self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self._batches = batch + 1
        elapsed = time.perf_counter() - self._start
        if logs is not None and elapsed > 0:
            logs["examples_per_sec"] = self._batches * self._batch_size / elapsed



class LastStepClock(keras.callbacks.Callback):
    """When the last train step ended, to say what the time after it was.

    The wrap-up after the last step (the final checkpoint, TensorBoard's
    flush, shutting down the input pipeline) used to pass without a word;
    `run_training` now logs how long it took.
    """

    def __init__(self):
        super().__init__()
        self.last_step_end = None

    def on_train_batch_end(self, batch, logs=None):
        self.last_step_end = time.perf_counter()


class StepLogger(keras.callbacks.Callback):
    """Logs the step, loss and examples per second every `every` steps.

    Used instead of the progress bar when output goes to a file or pipe,
    where a bar would write one endless line.
    """

    def __init__(self, optimizer, num_train_steps, every):
        super().__init__()
        self._optimizer = optimizer
        self._total = num_train_steps
        self._every = max(1, int(every))
        self._logged = None

    def on_train_batch_end(self, batch, logs=None):
        step = int(self._optimizer.iterations.numpy())
        # Once per step: with gradient accumulation a step spans batches.
        if step != self._logged and (step % self._every == 0
                                     or step == self._total):
            self._logged = step
            logs = logs or {}
            logging.info("step %d/%d: loss = %.6g, examples/sec = %.1f", step,
                         self._total, logs.get("loss", float("nan")),
                         logs.get("examples_per_sec", float("nan")))


class _AccumulatingStepView:
    """The optimizer as `load_tf1_checkpoint` sees it under accumulation.

    With Keras' gradient accumulation, `optimizer.iterations` is computed
    (batches // k) from a private batch counter; restoring `global_step`
    sets that counter to `global_step * k`.
    """

    def __init__(self, optimizer):
        self._optimizer = optimizer
        self.dtype = optimizer._iterations.dtype

    def slot_variables(self, variable):
        return self._optimizer.slot_variables(variable)

    @property
    def iterations(self):
        return self

    def assign(self, value):
        steps = self._optimizer.gradient_accumulation_steps
        self._optimizer._iterations.assign(int(value) * steps)


def restore_or_initialize(model, optimizer, output_dir, init_checkpoint=None,
                          chief=True):
    """Resumes from `output_dir`, else starts from `init_checkpoint`, else fresh.

    The optimizer's variables are built first so its slots and step can be
    restored. `chief` removes checkpoint files the state file does not list.

    Returns:
        int, the global step training starts from.
    """
    optimizer.build(model.trainable_variables)
    latest = latest_training_checkpoint(output_dir)
    if latest:
        # Leftovers of a run killed between the state write and the deletion.
        if chief:
            checkpoints.remove_unlisted_checkpoints(output_dir, TRAINING_CHECKPOINT_PREFIX)
        logging.info("Resuming training from %s", latest)
        target = (_AccumulatingStepView(optimizer)
                  if optimizer.gradient_accumulation_steps else optimizer)
        try:
            status = checkpoints.load_tf1_checkpoint(model, latest,
                                                     optimizer=target)
        except checkpoints.CheckpointMismatchError as error:
            raise checkpoints.CheckpointMismatchError(
                f"output_dir {output_dir} already holds a training checkpoint "
                f"({latest}) from another model, and a rerun resumes from it. "
                f"Use a fresh --output_dir. {error}") from None
        if not status.optimizer_restored:
            logging.warning("%s has no optimizer state; the optimizer starts "
                            "afresh.", latest)
    elif init_checkpoint:
        checkpoints.load_tf1_checkpoint(model, init_checkpoint)
    return int(optimizer.iterations.numpy())


def needs_strategy_loop(strategy, options):
    """True where Keras `fit` cannot train (see `modeling.strategy_loop`)."""
    return is_multi_worker(strategy) or (
        bool(options.use_xla) and strategy.num_replicas_in_sync > 1)


def _callbacks(model, optimizer, output_dir, options, batch_size,
               num_train_steps, chief, verbose):
    callbacks = [
        ExamplesPerSecond(batch_size),
        TF1CheckpointSaver(model, optimizer, output_dir,
                           options.save_checkpoints_steps,
                           options.keep_checkpoint_max, chief=chief),
    ]
    if not verbose:
        callbacks.append(StepLogger(optimizer, num_train_steps,
                                    min(100, options.save_checkpoints_steps)))
    if chief:
        callbacks.append(keras.callbacks.TensorBoard(
            log_dir=output_dir, update_freq=min(100, options.save_checkpoints_steps)))
    return callbacks


def run_training(model, optimizer, dataset, num_train_steps, output_dir, options,
                 batch_size, strategy=None, init_checkpoint=None, verbose="auto"):
    """Trains `model` to `num_train_steps` global steps.

    With `model.fit`, or where fit cannot run (several workers; XLA over
    several local replicas) with `modeling.strategy_loop`: same loss,
    optimizer, callbacks and checkpoints. Under a multi-worker strategy the
    dataset is DATA-sharded (`runtime.shard_for_workers`) unless its options
    chose a policy, every worker must see the same `output_dir` (a shared
    folder, as for the original Estimator), and only the chief writes there.

    Args:
        model: a task model whose `compute_loss` takes the dataset's labels;
            built (with `optimizer`) under `strategy.scope()`.
        optimizer: a Keras optimizer with `slot_variables` (see
            `modeling/optimization.py`, `create_training_optimizer`).
        dataset: a repeating `tf.data.Dataset` of `(features, labels)` global
            batches of `batch_size`.
        num_train_steps: int, the total number of optimizer steps.
        output_dir: where checkpoints and TensorBoard logs go.
        options: `modeling.runtime.RuntimeOptions`.
        batch_size: int, global examples per batch (for examples/sec).
        strategy: the `tf.distribute.Strategy` (decides who writes files).
        init_checkpoint: optional checkpoint to start from when `output_dir`
            has none.
        verbose: Keras `fit` verbosity; "auto" shows a progress bar on a
            terminal and logs every 100 steps otherwise.

    Returns:
        dict with `loss` (mean training loss of this run, or None when there
        was nothing left to do) and `global_step`.

    Raises:
        ValueError: `batch_size` does not split evenly over the replicas of a
            multi-worker run.
        RuntimeError: no optimizer step was applied (float16 overflow), or
            the workers resume from different steps.
        checkpoints.CheckpointMismatchError: output_dir holds another model's
            checkpoint.
    """
    strategy = strategy or tf.distribute.get_strategy()
    tf.io.gfile.makedirs(output_dir)
    chief = is_chief(strategy)
    use_loop = needs_strategy_loop(strategy, options)
    if is_multi_worker(strategy):
        if batch_size % strategy.num_replicas_in_sync:
            raise ValueError(
                f"The train batch size {batch_size} must be a multiple of the "
                f"{strategy.num_replicas_in_sync} replicas of all workers.")
        dataset = shard_for_workers(dataset)
    executions = steps_per_execution(options, strategy)
    with strategy.scope():
        initial_step = restore_or_initialize(model, optimizer, output_dir,
                                             init_checkpoint, chief=chief)
        if is_multi_worker(strategy):
            strategy_loop.check_same_step(strategy, initial_step)
        remaining = num_train_steps - initial_step
        if remaining <= 0:
            logging.info("Checkpoint in %s is at step %d >= num_train_steps %d; "
                         "nothing to train.", output_dir, initial_step,
                         num_train_steps)
            return {"loss": None, "global_step": initial_step}
        model.compile(optimizer=optimizer,
                      jit_compile=bool(options.use_xla) and not use_loop,
                      steps_per_execution=executions)
        model.optimizer.build(model.trainable_variables)
        restore_loss_scale(model, latest_training_checkpoint(output_dir))
    if verbose == "auto":
        # A progress bar on a terminal; step logs in files and pipes.
        verbose = 1 if sys.stdout.isatty() else 0
    callbacks = _callbacks(model, optimizer, output_dir, options, batch_size,
                           num_train_steps, chief, verbose)
    clock = LastStepClock()
    callbacks.append(clock)
    batches_per_step = int(optimizer.gradient_accumulation_steps or 1)
    logging.info("Training from step %d to %d%s.", initial_step, num_train_steps,
                 " on strategy.run (Keras fit cannot run this setup)"
                 if use_loop else "")
    # With float16 loss scaling, steps whose gradients overflow are skipped
    # and not counted; train on until the step count is really reached.
    losses = []
    while remaining > 0:
        if use_loop:
            callback_list = keras.callbacks.CallbackList(
                callbacks, add_progbar=verbose != 0, model=model,
                verbose=verbose, epochs=1, steps=remaining * batches_per_step)
            losses.append(strategy_loop.train_with_strategy_run(
                model, dataset, remaining * batches_per_step, strategy,
                callback_list, executions, jit_compile=bool(options.use_xla)))
        else:
            history = model.fit(dataset, epochs=1,
                                steps_per_epoch=remaining * batches_per_step,
                                shuffle=False, callbacks=callbacks,
                                verbose=verbose)
            losses.append(float(history.history["loss"][-1]))
        left = num_train_steps - int(optimizer.iterations.numpy())
        if left >= remaining:
            raise RuntimeError(
                f"No optimizer step was applied in {remaining} batches (every "
                "gradient overflowed or was not finite); training diverged.")
        remaining = left
    logging.info("Training done at step %d; %.1f s after the last step for the "
                 "final checkpoint, summaries and input pipeline shutdown.",
                 int(optimizer.iterations.numpy()),
                 time.perf_counter() - (clock.last_step_end or time.perf_counter()))
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
    return model.predict(dataset, verbose=0)


def restore_for_inference(model, output_dir, init_checkpoint=None):
    """Weights for evaluation or prediction, chosen as the Estimator does.

    The newest `model.ckpt-N` in `output_dir` (its global step is reported),
    else `init_checkpoint` (reported as step 0: only model weights come from
    it), else the model stays randomly initialised (with a warning).

    Returns:
        int, the global step to report in result files.
    """
    latest = latest_training_checkpoint(output_dir)
    if latest:
        logging.info("Restoring %s", latest)
        try:
            checkpoints.load_tf1_checkpoint(model, latest)
        except checkpoints.CheckpointMismatchError as error:
            raise checkpoints.CheckpointMismatchError(
                f"output_dir {output_dir} holds a checkpoint ({latest}) from "
                "another model, and it takes precedence over "
                f"--init_checkpoint. Use a fresh --output_dir. {error}") from None
        reader = tf.train.load_checkpoint(latest)
        if reader.has_tensor(checkpoints.GLOBAL_STEP):
            return int(reader.get_tensor(checkpoints.GLOBAL_STEP))
        return 0
    if init_checkpoint:
        logging.info("Restoring %s", init_checkpoint)
        checkpoints.load_tf1_checkpoint(model, init_checkpoint)
    else:
        logging.warning("No checkpoint in %s and no --init_checkpoint: using a "
                        "randomly initialised model.", output_dir)
    return 0
