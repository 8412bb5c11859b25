"""TensorBoard summaries where the original's Estimator put them: training
scalars in `output_dir`, evaluation scalars in `output_dir/eval/`, against
the global step; a step is never drawn twice (docs/running_scripts.md).

The purge of later steps' events on resume is our own rewrite, not the
Estimator's `SessionLog(status=START)`: TensorBoard's default loader (the
Rust data server) ignores START
(tests/modeling/training/test_tensorboard_resume.py).
"""
import os

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.atomic import atomic_output

#: The folder (under output_dir) of the evaluation events, as the Estimator.
EVAL_SUBDIR = "eval"
_EVENTS_MARK = "tfevents"


def event_files(logdir):
    """The event files directly in `logdir`, sorted by name (TensorBoard's
    order).
    """
    if not tf.io.gfile.isdir(logdir):
        return []
    return sorted(os.path.join(logdir, name)
                  for name in tf.io.gfile.listdir(logdir)
                  if _EVENTS_MARK in name
                  and not tf.io.gfile.isdir(os.path.join(logdir, name)))


def _events(path):
    # Event files are TFRecord files of `Event` protos.
    for record in tf.data.TFRecordDataset(path):
        yield tf.compat.v1.Event.FromString(record.numpy())


def _scalar_values(event):
    """(tag, float) of an event's scalar summaries (TF2 tensor and TF1 simple)."""
    for value in event.summary.value:
        if value.HasField("tensor"):
            array = tf.make_ndarray(value.tensor)
            if array.ndim == 0 and np.issubdtype(array.dtype, np.number):
                yield value.tag, float(array)
        elif value.HasField("simple_value"):
            yield value.tag, float(value.simple_value)


def read_scalars(logdir):
    """Every scalar written to the event files in `logdir`.

    Returns:
        dict tag -> list of (global step, value), in the order written.
    """
    scalars = {}
    for path in event_files(logdir):
        for event in _events(path):
            for tag, value in _scalar_values(event):
                scalars.setdefault(tag, []).append((int(event.step), value))
    return scalars


def purge_events(logdir, first_step, last_step=None):
    """Removes the summaries of steps `first_step`..`last_step` (inclusive;
    None: no end) from `logdir`'s event files, each rewritten atomically.

    Returns:
        int, the number of events removed.
    """
    removed = 0
    for path in event_files(logdir):
        kept, dropped = [], 0
        for event in _events(path):
            if event.HasField("summary") and event.step >= first_step and (
                    last_step is None or event.step <= last_step):
                dropped += 1
            else:
                kept.append(event.SerializeToString())
        if not dropped:
            continue
        # Same name: TensorBoard reads the files in name order.
        with atomic_output(path) as temp:
            with tf.io.TFRecordWriter(temp) as writer:
                for record in kept:
                    writer.write(record)
        removed += dropped
    if removed:
        logging.info("Replaced %d TensorBoard events of steps %d%s in %s "
                     "(an earlier run wrote them).", removed, first_step,
                     "" if last_step == first_step else
                     f"..{last_step if last_step is not None else ''}", logdir)
    return removed


class TrainingSummaries:
    """Scalars of a training run, in `output_dir`, at the global step.

    Args:
        output_dir: the run's folder (chief only writes).
        start_step: int, the global step the run starts from; summaries of
            later steps left by an earlier run are removed first.
    """

    def __init__(self, output_dir, start_step):
        purge_events(output_dir, int(start_step) + 1)
        self._writer = tf.summary.create_file_writer(output_dir)

    def write_step(self, step, scalars):
        """Writes `scalars` ({tag: float}) at global step `step`."""
        with self._writer.as_default():
            for tag, value in scalars.items():
                if value is not None and np.isfinite(value):
                    tf.summary.scalar(tag, float(value), step=int(step))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()


def write_eval_summaries(output_dir, results, global_step):
    """Writes an evaluation's numbers (dict name -> number; `global_step` and
    non-numbers left out) to `output_dir/eval/` at `global_step`, replacing
    earlier events at that step; returns the eval folder.
    """
    logdir = os.path.join(output_dir, EVAL_SUBDIR)
    tf.io.gfile.makedirs(logdir)
    step = int(global_step or 0)
    purge_events(logdir, step, step)
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for key in sorted(results):
            value = results[key]
            if key == "global_step" or isinstance(value, (bool, np.bool_)):
                continue
            if isinstance(value, (int, float, np.integer, np.floating)) \
                    and np.isfinite(value):
                tf.summary.scalar(key, float(value), step=step)
    writer.close()
    return logdir
