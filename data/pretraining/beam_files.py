"""The files of a Beam run: its work folders and its output-file sink.

Unfinished files live in a temp folder per output folder,
`<folder>/.bert-tmp/tmp<random>.<host>.partial/` (bert_tf1.data.io.atomic naming):
`shards/`, `split/` and `plan.json` under the first output's folder, each
output's `sink-<hex>/` files under its own. The driver removes them when the
pipeline ends. `OutputFilesSink` (an apache_beam.io.iobase.Sink) renames the
output files into place only in finalize, once all are complete.
"""
import dataclasses
import os
import uuid

from apache_beam.io import iobase
from apache_beam.metrics import Metrics
import tensorflow as tf

from bert_tf1.data.io import atomic
from bert_tf1.data.pretraining import shard_records

METRICS_NAMESPACE = "create_pretraining_data"


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


class OutputFilesSink(iobase.Sink):
    """Writes one complete output file per (output index, InterleavePlan)
    element (shard_records.output_records)."""

    def __init__(self, files):
        super().__init__()
        self.files = files
        self.num_shards = files.num_outputs

    def initialize_write(self):
        # Unique per attempt: a retried initialization never collides.
        name = "sink-" + uuid.uuid4().hex
        for folder in self.files.work_dirs():
            tf.io.gfile.makedirs(os.path.join(folder, name))
        return name

    def open_writer(self, init_result, uid):
        return _OutputFilesWriter(self.files, init_result, uid)

    def pre_finalize(self, init_result, writer_results):
        return None

    def finalize_write(self, init_result, writer_results,
                       pre_finalize_results):
        """Renames every finished temp file onto its output; yields them.

        Raises:
          RuntimeError: an output written by no writer, or twice (a bug).
        """
        temps = {}
        for result in writer_results:
            for output, temp in result:
                if output in temps:
                    raise RuntimeError("output %d written twice: %s, %s"
                                       % (output, temps[output], temp))
                temps[output] = temp
        missing = sorted(set(range(self.files.num_outputs)) - set(temps))
        if missing:
            raise RuntimeError("no writer produced output file(s) %s"
                               % [self.files.output_files[i]
                                  for i in missing])
        for output, final in enumerate(self.files.output_files):
            temp = temps[output]
            if tf.io.gfile.exists(temp):
                tf.io.gfile.rename(temp, final, overwrite=True)
            elif not tf.io.gfile.exists(final):
                raise RuntimeError("%s vanished before it was renamed to %s"
                                   % (temp, final))
        for folder in self.files.work_dirs():
            sink_dir = os.path.join(folder, init_result)
            if tf.io.gfile.exists(sink_dir):
                tf.io.gfile.rmtree(sink_dir)
        yield from self.files.output_files


class _OutputFilesWriter(iobase.Writer):
    """Writes each (output index, plan) element to a temp file of its own."""

    def __init__(self, files, init_result, uid):
        self.files = files
        self.init_result = init_result
        self.uid = uid
        self.results = []
        self.records = Metrics.counter(METRICS_NAMESPACE, "records")

    def write(self, value):
        output, plan = value
        final = self.files.output_files[output]
        temp = os.path.join(self.files.work_dir_for(final), self.init_result,
                            "%s.output-%05d.tfrecord" % (self.uid, output))
        records = shard_records.output_records(
            plan, output, self.files.num_outputs,
            lambda shard: self.files.source_file(shard, output))
        count = 0
        with tf.io.TFRecordWriter(temp) as writer:
            for record in records:
                writer.write(record)
                count += 1
        expected = len(range(output, plan.total, self.files.num_outputs))
        if count != expected:
            raise RuntimeError("%s: wrote %d records, %d planned"
                               % (temp, count, expected))
        self.records.inc(count)
        self.results.append((output, temp))

    def close(self):
        return list(self.results)
