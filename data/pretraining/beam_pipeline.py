"""create_pretraining_data as an Apache Beam pipeline (local or on a cluster).

The same shards, seeds and records as the local pool of
data.pretraining.pipeline, so for the same input, shard size and seed the
output files are byte-identical to `create_pretraining_files`' (with one
shard: the original's instances). Stages:

  driver    checks (the local path's, plus UTF-8 of every input, so bad
            input fails before the pipeline starts); plan_shards
  1 Build   per shard (Reshuffle spreads them over workers):
            shard_build.build_shard_records with shard_seed(seed, index);
            the records go to the shard's file (renamed into place when
            complete); counters documents, instances
  2 Plan    all record counts -> InterleavePlan (the merge order of the
            local path) -> plan.json
  3 Split   per shard, only with several output files: its records by
            output file (record p of the merged order goes to file p % n)
  4 Write   per output file, OutputFilesSink: its records in merged order
            into a temp file; counter records; finalize renames all files
            into place once all are complete
  driver    logs the first 20 records (as the original), the counters and
            "Wrote N total instances"; removes the work folders

Memory: one shard's instances per worker in stage 1 (as one worker of the
local pool), the record positions of one shard in stage 3, a few MiB per
open file in stage 4; never the corpus. Every stage is deterministic and
writes under names that depend only on the shard and output index, so a
retried bundle writes the same bytes and a failed one leaves no partial
file under a final name.
"""
import dataclasses
import json
import os

from absl import logging
import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.runners.runner import PipelineState
import tensorflow as tf

from data.pretraining import beam_files
from data.pretraining import runners
from data.pretraining import corpus as pretraining_corpus
from data.pretraining import pipeline as local_pipeline
from data.pretraining import records as pretraining_records
from data.pretraining import shard_build
from data.pretraining import shard_records
from data.pretraining.interleave import InterleavePlan

_NAMESPACE = beam_files.METRICS_NAMESPACE
_NUM_LOGGED = 20


class BuildShardFn(beam.DoFn):
    """(shard index, shard) -> (shard index, (documents, records)).

    Writes the shard's records to RunFiles.shard_file(index).

    Args:
      tokenizer: FullTokenizer (shipped to the workers with the DoFn, so
        they need no vocab file).
      options: PretrainingOptions.
      random_seed: int; shard i uses shard_seed(random_seed, i).
      files: RunFiles.
    """

    def __init__(self, tokenizer, options, random_seed, files):
        self.tokenizer = tokenizer
        self.options = options
        self.random_seed = random_seed
        self.files = files
        self.documents = Metrics.counter(_NAMESPACE, "documents")
        self.instances = Metrics.counter(_NAMESPACE, "instances")

    def process(self, element):
        index, shard = element
        built = shard_build.build_shard_records(
            shard, self.tokenizer, self.options,
            shard_build.shard_seed(self.random_seed, index))
        count = shard_records.write_records(self.files.shard_file(index),
                                            built.records)
        # Counted once the file is in place: a failed attempt adds nothing.
        self.documents.inc(built.documents)
        self.instances.inc(count)
        yield index, (built.documents, count)


class SplitShardFn(beam.DoFn):
    """(shard index, _) -> shard index, after splitting its file by output."""

    def __init__(self, files):
        self.files = files

    def process(self, element, plan):
        index = element[0]
        shard_records.split_shard_file(
            plan, index, self.files.shard_file(index),
            [self.files.split_file(index, output)
             for output in range(self.files.num_outputs)])
        yield index


def make_plan(results, num_shards, files):
    """All shards' (documents, records) -> InterleavePlan; writes plan.json.

    Raises:
      RuntimeError: a shard is missing (a bug).
    """
    results = dict(results)
    missing = sorted(set(range(num_shards)) - set(results))
    if missing:
        raise RuntimeError("no result for shard(s) %s" % missing[:10])
    documents = [results[i][0] for i in range(num_shards)]
    counts = [results[i][1] for i in range(num_shards)]
    text = json.dumps({"documents": documents, "records": counts})
    shard_records.write_text(files.plan_file, text)
    return InterleavePlan.from_counts(counts)


def build_pipeline(root, shards, tokenizer, options, random_seed, files):
    """Adds the stages to a beam.Pipeline `root`.

    Args:
      root: beam.Pipeline.
      shards: list of shards (lists of corpus.TextRange), from plan_shards.
      tokenizer, options, random_seed: as create_pretraining_files.
      files: beam_files.RunFiles of the run.

    Returns:
      PCollection of str, the output files once written.
    """
    num_outputs = files.num_outputs
    built = (root
             | "PlanShards" >> beam.Create(list(enumerate(shards)))
             | "SpreadShards" >> beam.Reshuffle()
             | "BuildShards" >> beam.ParDo(
                 BuildShardFn(tokenizer, options, random_seed, files)))
    plan = (built
            | "CollectCounts" >> beam.combiners.ToList()
            | "PlanInterleave" >> beam.Map(make_plan, len(shards), files))
    after = []
    if num_outputs > 1:
        split_done = (built
                      | "SplitByOutput" >> beam.ParDo(
                          SplitShardFn(files), beam.pvalue.AsSingleton(plan))
                      | "AllSplit" >> beam.combiners.Count.Globally())
        # The writers start once every shard is split.
        after = [beam.pvalue.AsSingleton(split_done)]

    writes = plan | "PerOutputFile" >> beam.FlatMap(_per_output, num_outputs,
                                                     *after)
    return writes | "WriteOutputFiles" >> beam.io.Write(
        beam_files.OutputFilesSink(files))


def _per_output(plan, num_outputs, *unused_ready):
    return [(output, plan) for output in range(num_outputs)]


def _absolute(path):
    return path if "://" in path else os.path.abspath(path)


def create_pretraining_files_beam(input_files, output_files, vocab_file,
                                  do_lower_case=True, options=None,
                                  random_seed=12345, shard_size_bytes=0,
                                  runner="DirectRunner",
                                  beam_pipeline_options="", num_workers=1):
    """`create_pretraining_files` on Apache Beam; returns the record count.

    The output files are byte-identical to create_pretraining_files' for
    the same input_files, output_files, vocab, options, random_seed and
    shard_size_bytes, on any runner and any number of workers.

    Args:
      input_files, output_files, vocab_file, do_lower_case, options,
      random_seed, shard_size_bytes: as create_pretraining_files (files may
        be on any file system that TensorFlow and Beam read, e.g. gs://;
        the vocab is read here and shipped to the workers).
      runner: str, a Beam runner (data.pretraining.runners).
      beam_pipeline_options: str (a command line) or list of str, more
        Beam options, e.g. "--project=p --region=r" for Dataflow.
      num_workers: int, workers for local runners (see runners).

    Returns:
      int, the number of instances written.

    Raises:
      ValueError: as create_pretraining_files (same messages), raised
        before the pipeline starts; UserError for a bad runner or options.
      FileNotFoundError: as create_pretraining_files.
      RuntimeError: the pipeline did not finish.
    """
    options, tokenizer = local_pipeline.check_run(
        input_files, output_files, vocab_file, do_lower_case, options,
        num_workers)
    args = runners.beam_args(runner, beam_pipeline_options, num_workers)
    pipeline_options = runners.pipeline_options(args)
    pretraining_corpus.check_utf8(input_files)
    shards = local_pipeline.plan_and_log_shards(input_files, output_files,
                                                shard_size_bytes)
    # Workers may run in another folder: they get absolute local paths.
    shards = [[dataclasses.replace(text_range, path=_absolute(text_range.path))
               for text_range in shard] for shard in shards]
    output_files = [_absolute(path) for path in output_files]
    for removed in beam_files.remove_stale_runs(output_files):
        logging.info("Removed what a killed run left: %s", removed)
    runners.make_workers_find_project(pipeline_options)
    logging.info("Running %d shard(s) on Beam (%s)", len(shards),
                 " ".join(args))
    files = beam_files.RunFiles.create(output_files)
    try:
        with runners.quiet_local_runner(runner):
            root = beam.Pipeline(options=pipeline_options)
            build_pipeline(root, shards, tokenizer, options, random_seed,
                           files)
            result = root.run()
            state = result.wait_until_finish()
        if state != PipelineState.DONE:
            raise RuntimeError("the Beam pipeline ended in state %s" % state)
        with tf.io.gfile.GFile(files.plan_file) as reader:
            plan = json.load(reader)
    finally:
        files.remove()
    total = sum(plan["records"])
    _log_first_records(output_files, total, tokenizer.inv_vocab)
    _log_counters(result)
    logging.info("Wrote %d total instances", total)
    if total == 0:
        logging.warning("The corpus gave no instances (no non-empty line "
                        "after tokenization); the output files are empty.")
    return total


def _log_first_records(output_files, total, inv_vocab):
    # The original logs its first 20 instances as it writes them; here
    # they are read back: record p is record p // n of file p % n.
    wanted = min(total, _NUM_LOGGED)
    heads = []
    for output, path in enumerate(output_files):
        count = len(range(output, wanted, len(output_files)))
        records = shard_records.read_records(path)
        heads.append([next(records) for _ in range(count)])
        records.close()
    for position in range(wanted):
        record = heads[position % len(output_files)][
            position // len(output_files)]
        pretraining_records.log_example(tf.train.Example.FromString(record),
                                        inv_vocab)


def _log_counters(result):
    try:
        counters = result.metrics().query(
            MetricsFilter().with_namespace(_NAMESPACE))["counters"]
    except Exception as error:  # Runners differ in metrics support.
        logging.info("The runner reports no counters (%s)", error)
        return
    values = {}
    for counter in counters:
        value = counter.committed
        if value is None:
            value = counter.attempted
        values[counter.key.metric.name] = (
            values.get(counter.key.metric.name, 0) + (value or 0))
    logging.info("Beam counters: %s", ", ".join(
        "%s=%d" % (name, values[name]) for name in
        ("documents", "instances", "records") if name in values))
