"""create_pretraining_data as an Apache Beam pipeline, byte-identical to the
local pool's `create_pretraining_files` (its four stages: docs/pretraining.md,
"On Apache Beam"). Every stage writes under names that depend only on the
shard and output index, so a retried bundle writes the same bytes.

Unfinished files live in a temp folder per output folder,
`<folder>/.bert-tmp/tmp<random>.<host>.partial/` (bert_tf1.data.io.atomic
naming): `shards/`, `split/` and `plan.json` under the first output's folder,
each output's `output-<index>.tfrecord` under its own. The driver removes
them when the pipeline ends; the outputs are renamed into place only once
all are complete.
"""
import dataclasses
import json
import os

from absl import logging
import apache_beam as beam
from apache_beam.metrics import Metrics
import tensorflow as tf

from bert_tf1.data.io import atomic, beam_runners
from bert_tf1.data.pretraining import corpus as pretraining_corpus
from bert_tf1.data.pretraining import pipeline as local_pipeline
from bert_tf1.data.pretraining import records as pretraining_records
from bert_tf1.data.pretraining import shard_build
from bert_tf1.data.pretraining import shard_records
from bert_tf1.data.pretraining.interleave import InterleavePlan

_NAMESPACE = "create_pretraining_data"


@dataclasses.dataclass(frozen=True)
class RunFiles:
    """Where one run keeps its unfinished files: `run_name` is its folder
    in the `.bert-tmp` beside each of `output_files`."""
    output_files: tuple
    run_name: str

    @classmethod
    def create(cls, output_files):
        """Makes the work folders of a new run (held until `remove()`)."""
        output_files = tuple(output_files)
        run_name = os.path.basename(atomic.temp_path_for(output_files[0]))
        files = cls(output_files, run_name)
        for folder in files.work_dirs():
            tf.io.gfile.makedirs(folder)
        for name in ("shards", "split"):
            tf.io.gfile.makedirs(os.path.join(files.main_dir, name))
        return files

    @property
    def num_outputs(self):
        return len(self.output_files)

    def work_dir_for(self, path):
        """The run's work folder beside `path`."""
        return os.path.join(os.path.dirname(path), atomic.TEMP_DIR_NAME,
                            self.run_name)

    def work_dirs(self):
        """Every work folder of the run (one per output folder)."""
        return sorted({self.work_dir_for(p) for p in self.output_files})

    @property
    def main_dir(self):
        return self.work_dir_for(self.output_files[0])

    def shard_file(self, shard):
        return os.path.join(self.main_dir, "shards",
                            "shard-%05d.tfrecord" % shard)

    def split_file(self, shard, output):
        return os.path.join(self.main_dir, "split",
                            "shard-%05d.output-%05d.tfrecord"
                            % (shard, output))

    def source_file(self, shard, output):
        """The file holding shard `shard`'s records for output `output`."""
        if self.num_outputs == 1:
            return self.shard_file(shard)
        return self.split_file(shard, output)

    def output_work_file(self, output):
        """Output `output`'s records until they are renamed into place."""
        return os.path.join(self.work_dir_for(self.output_files[output]),
                            "output-%05d.tfrecord" % output)

    @property
    def plan_file(self):
        return os.path.join(self.main_dir, "plan.json")

    def remove(self):
        """Deletes the work folders (and `.bert-tmp` when left empty)."""
        for folder in self.work_dirs():
            if tf.io.gfile.exists(folder):
                tf.io.gfile.rmtree(folder)
            atomic.release_temp(folder)
            atomic.remove_empty_temp_dir(os.path.dirname(folder))


def build_shard(element, tokenizer, options, random_seed, files):
    """(shard index, shard) -> (shard index, (documents, records)).

    Writes the shard's records to RunFiles.shard_file(index); shard i uses
    shard_seed(random_seed, i).
    """
    index, shard = element
    built = shard_build.build_shard_records(
        shard, tokenizer, options,
        shard_build.shard_seed(random_seed, index))
    count = shard_records.write_records(files.shard_file(index),
                                        built.records)
    # Counted once the file is in place: a failed attempt adds nothing.
    Metrics.counter(_NAMESPACE, "documents").inc(built.documents)
    Metrics.counter(_NAMESPACE, "instances").inc(count)
    return index, (built.documents, count)


def split_shard(element, plan, files):
    """(shard index, _) -> shard index, after splitting its file by output."""
    index = element[0]
    shard_records.split_shard_file(
        plan, index, files.shard_file(index),
        [files.split_file(index, output)
         for output in range(files.num_outputs)])
    return index


def make_plan(results, num_shards, files):
    """All shards' (documents, records) -> InterleavePlan, and plan.json.

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
    atomic.write_text_atomically(files.plan_file, text)
    return InterleavePlan.from_counts(counts)


def build_pipeline(root, shards, tokenizer, options, random_seed, files):
    """Adds the stages to a beam.Pipeline `root`; returns the PCollection of
    output files written. `shards` come from plan_shards."""
    num_outputs = files.num_outputs
    built = (root
             | "PlanShards" >> beam.Create(list(enumerate(shards)))
             | "SpreadShards" >> beam.Reshuffle()
             | "BuildShards" >> beam.Map(build_shard, tokenizer, options,
                                         random_seed, files))
    plan = (built
            | "CollectCounts" >> beam.combiners.ToList()
            | "PlanInterleave" >> beam.Map(make_plan, len(shards), files))
    after = []
    if num_outputs > 1:
        split_done = (built
                      | "SplitByOutput" >> beam.Map(
                          split_shard, beam.pvalue.AsSingleton(plan), files)
                      | "AllSplit" >> beam.combiners.Count.Globally())
        # The writers start once every shard is split.
        after = [beam.pvalue.AsSingleton(split_done)]

    writes = (plan
              | "PerOutputFile" >> beam.FlatMap(
                  lambda element, *_: [(output, element)
                                       for output in range(num_outputs)],
                  *after)
              | "SpreadOutputs" >> beam.Reshuffle()
              | "WriteOutputFiles" >> beam.Map(write_output, files))
    return (writes
            | "AllWritten" >> beam.combiners.ToList()
            | "RenameIntoPlace" >> beam.FlatMap(rename_outputs, files))


def write_output(element, files):
    """(output index, InterleavePlan) -> output index, once that output's
    records are in `files.output_work_file(output)`.

    Raises:
      RuntimeError: another number of records than planned (a bug).
    """
    output, plan = element
    path = files.output_work_file(output)
    count = shard_records.write_records(path, shard_records.output_records(
        plan, output, files.num_outputs,
        lambda shard: files.source_file(shard, output)))
    expected = len(range(output, plan.total, files.num_outputs))
    if count != expected:
        raise RuntimeError("%s: wrote %d records, %d planned"
                           % (path, count, expected))
    Metrics.counter(_NAMESPACE, "records").inc(count)
    return output


def rename_outputs(written, files):
    """Renames every output's work file onto its output file; yields them.

    Raises:
      RuntimeError: an output written by no writer (a bug), or its work
        file gone before it was renamed.
    """
    missing = sorted(set(range(files.num_outputs)) - set(written))
    if missing:
        raise RuntimeError("no writer produced output file(s) %s"
                           % [files.output_files[i] for i in missing])
    for output, final in enumerate(files.output_files):
        temp = files.output_work_file(output)
        if tf.io.gfile.exists(temp):  # Else a retry that renamed it already.
            tf.io.gfile.rename(temp, final, overwrite=True)
        elif not tf.io.gfile.exists(final):
            raise RuntimeError("%s vanished before it was renamed to %s"
                               % (temp, final))
    yield from files.output_files


def _absolute(path):
    return path if "://" in path else os.path.abspath(path)


def create_pretraining_files_beam(input_files, output_files, vocab_file,
                                  do_lower_case=True, options=None,
                                  random_seed=12345, shard_size_bytes=0,
                                  runner="DirectRunner",
                                  beam_pipeline_options="", num_workers=1):
    """`create_pretraining_files` on Apache Beam; returns the record count.

    Same arguments as create_pretraining_files (paths may be gs://), plus
    `runner` (a Beam runner name, `bert_tf1.data.io.beam_runners`) and
    `beam_pipeline_options` (a command line or list of str). Byte-identical
    output for any runner and number of workers.

    Raises:
      UserError: as create_pretraining_files, before the pipeline starts;
        a bad runner or options.
      RuntimeError: the pipeline did not finish.
    """
    options, tokenizer = local_pipeline.check_run(
        input_files, output_files, vocab_file, do_lower_case, options,
        num_workers)
    args = beam_runners.beam_args(runner, beam_pipeline_options, num_workers)
    pipeline_options = beam_runners.pipeline_options(args)
    pretraining_corpus.check_utf8(input_files)
    shards = local_pipeline.plan_and_log_shards(input_files, output_files,
                                                shard_size_bytes)
    # Workers may run in another folder: they get absolute local paths.
    shards = [[dataclasses.replace(text_range, path=_absolute(text_range.path))
               for text_range in shard] for shard in shards]
    output_files = [_absolute(path) for path in output_files]
    logging.info("Running %d shard(s) on Beam (%s)", len(shards),
                 " ".join(args))
    files = RunFiles.create(output_files)
    try:
        result = beam_runners.run_pipeline(
            runner, pipeline_options, lambda root: build_pipeline(
                root, shards, tokenizer, options, random_seed, files))
        with tf.io.gfile.GFile(files.plan_file) as reader:
            plan = json.load(reader)
    finally:
        files.remove()
    total = sum(plan["records"])
    beam_runners.log_counters(result, _NAMESPACE,
                              ("documents", "instances", "records"))
    pretraining_records.log_written(output_files, total, tokenizer.inv_vocab)
    return total
