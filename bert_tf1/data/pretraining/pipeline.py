"""Text corpus -> pre-training TFRecords, whole or in shards, in parallel.

Source: create_pretraining_data.py main (one shard: the original's instances
and order). Each shard is built like a run of the original on its part with
seed shard_seed(random_seed, index); the result depends on the shard size,
never on the number of workers.

This process pool is `--runner=local`, the default: it needs no Beam
install, and it was 15% faster than Beam's DirectRunner in its
multi-processing mode with the same 2 workers and shards (511 s against
586 s for 100 MB: docs/pretraining.md). `bert_tf1.data.pretraining.beam_pipeline`
writes the same bytes on Beam, for a corpus larger than one machine.
"""
import concurrent.futures
import dataclasses
import multiprocessing
import os
import queue as queue_lib
import sys
import time

from absl import logging
import tensorflow as tf

from bert_tf1.data.io import atomic
from bert_tf1.data.io.errors import MissingFileError, UserError
from bert_tf1.data.io.tfrecord import RecordFileWriter
from bert_tf1.data.pretraining import corpus as pretraining_corpus
from bert_tf1.data.pretraining import instances as pretraining_instances
from bert_tf1.data.pretraining import interleave as pretraining_interleave
from bert_tf1.data.pretraining import records as pretraining_records
from bert_tf1.data.pretraining import shard_build, shard_records, worker_start
from bert_tf1.data.pretraining.shard_build import (build_shard_records,
                                                   shard_seed)
from bert_tf1.data.tokenization import FullTokenizer


@dataclasses.dataclass(frozen=True)
class PretrainingOptions:
    """The original's instance flags, with its defaults.

    Source: create_pretraining_data.py, flags.
    """
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    dupe_factor: int = 10
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    do_whole_word_mask: bool = False

    def validate(self):
        """Raises UserError naming the first bad option."""
        if self.max_seq_length < 5:
            raise UserError(
                "max_seq_length must be at least 5 ([CLS] A [SEP] B [SEP]), "
                "got %d" % self.max_seq_length)
        if self.max_predictions_per_seq < 1:
            raise UserError("max_predictions_per_seq must be at least 1, "
                            "got %d" % self.max_predictions_per_seq)
        if self.dupe_factor < 1:
            raise UserError("dupe_factor must be at least 1, got %d"
                            % self.dupe_factor)
        for name in ("masked_lm_prob", "short_seq_prob"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise UserError("%s must be in [0, 1], got %r"
                                % (name, value))


class _Progress:
    """Progress bar over input bytes; logs instance counts per shard."""

    def __init__(self, shard_sizes, enabled):
        self.shard_sizes = shard_sizes
        self.fractions = [0.0] * len(shard_sizes)
        self.instances = 0
        self.shards_done = 0
        self.bar = None
        self.last_update = 0.0
        if enabled:
            import keras  # Imported late: only the progress bar needs it.
            self.bar = keras.utils.Progbar(
                max(sum(shard_sizes), 1), unit_name="byte",
                verbose=1 if sys.stdout.isatty() else 2)

    def set(self, shard_index, fraction, force=False):
        self.fractions[shard_index] = max(self.fractions[shard_index],
                                          fraction)
        now = time.monotonic()
        if self.bar is None or (not force and now - self.last_update < 0.2):
            return
        self.last_update = now
        done = int(sum(f * s for f, s in zip(self.fractions,
                                             self.shard_sizes)))
        self.bar.update(done, finalize=False)

    def shard_done(self, shard_index, count):
        self.instances += count
        self.shards_done += 1
        self.set(shard_index, 1.0, force=True)
        if len(self.shard_sizes) > 1:
            logging.info("Shard %d done (%d/%d): %d instances, %d in all",
                         shard_index, self.shards_done,
                         len(self.shard_sizes), count, self.instances)

    def finish(self):
        if self.bar is not None:
            self.bar.update(max(sum(self.shard_sizes), 1), finalize=True)


_WORKER_QUEUE = None
_WORKER_TOKENIZER = None


def _init_worker(progress_queue, vocab_file, do_lower_case):
    """A worker's state (after worker_start.die_with_parent)."""
    global _WORKER_QUEUE, _WORKER_TOKENIZER
    _WORKER_QUEUE = progress_queue
    _WORKER_TOKENIZER = FullTokenizer(vocab_file, do_lower_case)


def _write_shard(shard_index, shard, tokenizer, options, seed, output_files,
                 report):
    """Builds one shard and writes its records round-robin to output_files
    (list of str, atomically); returns their number."""
    built = build_shard_records(
        shard, tokenizer, options, seed,
        progress=lambda fraction: report(shard_index, fraction))
    with RecordFileWriter(output_files) as writer:
        for record in built.records:
            writer.write(record)
            if writer.total_written % 1000 == 0:
                report(shard_index, shard_build.write_progress(
                    writer.total_written, built.instances))
        writer.commit()
    report(shard_index, 1.0)
    return writer.total_written


def _run_shard_task(task):
    """Entry point of a worker process (spawned; see _run_shards)."""
    shard_index, shard, options, seed, output_files = task
    last = [0.0]

    def report(index, fraction):
        # Throttled: a message per percent of the shard at most.
        if fraction >= 1.0 or fraction - last[0] >= 0.01:
            last[0] = fraction
            _WORKER_QUEUE.put((index, fraction))

    return shard_index, _write_shard(shard_index, shard, _WORKER_TOKENIZER,
                                     options, seed, output_files, report)


def _run_shards(tasks, num_workers, progress, vocab_file, do_lower_case):
    """Runs the shard tasks in `num_workers` spawned processes, each with
    its own FullTokenizer(vocab_file, do_lower_case)."""
    # Spawn, not fork: the parent has TensorFlow's threads running.
    context = multiprocessing.get_context("spawn")
    progress_queue = context.Queue()
    counts = {}
    with concurrent.futures.ProcessPoolExecutor(
            max_workers=num_workers, mp_context=context,
            initializer=worker_start.start_worker,
            initargs=(os.getpid(), __name__ + ":_init_worker", progress_queue,
                      vocab_file, do_lower_case)) as executor:
        pending = {executor.submit(_run_shard_task, task) for task in tasks}
        try:
            while pending:
                done, pending = concurrent.futures.wait(
                    pending, timeout=0.2,
                    return_when=concurrent.futures.FIRST_COMPLETED)
                _drain(progress_queue, progress)
                for future in done:
                    shard_index, count = future.result()
                    counts[shard_index] = count
                    progress.shard_done(shard_index, count)
        except BaseException:
            for future in pending:
                future.cancel()
            raise
    return counts


def _drain(progress_queue, progress):
    while True:
        try:
            shard_index, fraction = progress_queue.get_nowait()
        except queue_lib.Empty:
            return
        progress.set(shard_index, fraction)


def check_run(input_files, output_files, vocab_file, do_lower_case=True,
              options=None, num_workers=1):
    """Every check of a run (local pool and Beam), before any work; removes
    temp files of killed runs.

    Returns:
      (PretrainingOptions with defaults filled in, FullTokenizer).

    Raises:
      UserError: bad options or num_workers, no output file, a vocab
        without [CLS]/[SEP]/[MASK].
      MissingFileError: the vocab or an input file does not exist.
    """
    options = options or PretrainingOptions()
    options.validate()
    if num_workers < 1:
        raise UserError("num_workers must be at least 1, got %d"
                        % num_workers)
    if not output_files:
        raise UserError("no output file given")
    for path in input_files:
        if not tf.io.gfile.exists(path):
            raise MissingFileError("input file not found: %s" % path)
    tokenizer = FullTokenizer(vocab_file, do_lower_case)
    missing = [token for token in (pretraining_instances.CLS_TOKEN,
                                   pretraining_instances.SEP_TOKEN,
                                   pretraining_instances.MASK_TOKEN)
               if token not in tokenizer.vocab]
    if missing:
        raise UserError("vocab file %s lacks %s, which pre-training data "
                        "needs" % (vocab_file, ", ".join(missing)))
    for path in output_files:
        for removed in atomic.remove_stale_temp_files(path):
            logging.info("Removed a temp file of an unfinished run: %s",
                         removed)
    return options, tokenizer


def plan_and_log_shards(input_files, output_files, shard_size_bytes):
    """plan_shards, with the original's log lines of inputs and outputs."""
    shards = pretraining_corpus.plan_shards(input_files, shard_size_bytes)
    logging.info("*** Reading from %d input files in %d shard(s) ***",
                 len(input_files), len(shards))
    for path in input_files:
        logging.info("  %s", path)
    logging.info("*** Writing to output files ***")
    for path in output_files:
        logging.info("  %s", path)
    return shards


def create_pretraining_files(input_files, output_files, vocab_file,
                             do_lower_case=True, options=None,
                             random_seed=12345, num_workers=1,
                             shard_size_bytes=0, show_progress=True):
    """Writes pre-training TFRecords for a text corpus; returns the count.

    Args:
      input_files: list of str, UTF-8 text, one sentence per line, a blank
        line between documents.
      output_files: list of str; records go round-robin over them
        (atomically).
      vocab_file, do_lower_case: the tokenizer's.
      options: PretrainingOptions (defaults: the original's).
      random_seed: int.
      num_workers: int >= 1, processes for the shards.
      shard_size_bytes: int; 0 keeps the whole corpus in one shard.
      show_progress: bool, a progress bar on stdout.

    Returns:
      int, the number of instances written.

    Raises:
      UserError: bad options, a vocab without [CLS]/[SEP]/[MASK], input
        that is not UTF-8 (names file and line), no output file.
      MissingFileError: the vocab or an input file does not exist.

    Source: create_pretraining_data.py, main.
    """
    options, tokenizer = check_run(input_files, output_files, vocab_file,
                                   do_lower_case, options, num_workers)
    shards = plan_and_log_shards(input_files, output_files, shard_size_bytes)
    sizes = [pretraining_corpus.shard_size(shard) for shard in shards]

    progress = _Progress(sizes, show_progress)
    if len(shards) == 1:
        # The original's path: one rng for everything, written directly.
        total = _write_shard(0, shards[0], tokenizer, options, random_seed,
                             output_files, progress.set)
    else:
        total = _create_sharded(shards, tokenizer, vocab_file, do_lower_case,
                                options, random_seed, num_workers,
                                output_files, progress)
    progress.finish()
    pretraining_records.log_written(output_files, total, tokenizer.inv_vocab)
    return total


def _create_sharded(shards, tokenizer, vocab_file, do_lower_case, options,
                    random_seed, num_workers, output_files, progress):
    # One work folder of this run holds every shard's file.
    work_dir = atomic.temp_path_for(output_files[0])
    tf.io.gfile.makedirs(work_dir)
    shard_files = [os.path.join(work_dir, "shard-%05d.tfrecord" % index)
                   for index in range(len(shards))]
    try:
        tasks = [(index, shard, options, shard_seed(random_seed, index),
                  [shard_files[index]]) for index, shard in enumerate(shards)]
        if num_workers > 1:
            counts = _run_shards(tasks, min(num_workers, len(shards)),
                                 progress, vocab_file, do_lower_case)
        else:
            counts = {}
            for index, shard, _, seed, paths in tasks:
                counts[index] = _write_shard(index, shard, tokenizer,
                                             options, seed, paths,
                                             progress.set)
                progress.shard_done(index, counts[index])
        logging.info("Interleaving %d shards into %d output file(s)",
                     len(shards), len(output_files))
        # tf.data's interleave(cycle_length=min(shards, 64), block_length=1)
        # order, computed from the counts so the Beam pipeline reproduces it.
        plan = pretraining_interleave.InterleavePlan.from_counts(
            [counts[index] for index in range(len(shards))])
        return shard_records.write_records(
            output_files,
            shard_records.output_records(plan, 0, 1, shard_files.__getitem__))
    finally:
        atomic.remove_temp_family(work_dir)
        atomic.release_temp(work_dir)
        atomic.remove_empty_temp_dir(os.path.dirname(work_dir))
