"""Per-shard record files and their merge into the output files.

Each shard's records go to a file of their own, merged into the outputs in
the order of bert_tf1.data.pretraining.interleave. The Beam pipeline first splits each
shard file by output (`split_shard_file`), then writes each output on its own
(`output_records`). TensorFlow's record reader/writer: local and gs:// alike;
files appear only once complete (bert_tf1.data.io.tfrecord.RecordFileWriter).
"""
import tensorflow as tf

from bert_tf1.data.io.tfrecord import RecordFileWriter

# TF's deprecated C++ record reader opens thousands of small shard files
# far faster than tf.data (measured need); undecorated: no deprecation log.
_RECORD_ITERATOR = tf.compat.v1.io.tf_record_iterator.__wrapped__


def read_records(path):
    """Yields the serialized records of a TFRecord file (bytes).

    Raises:
      tf.errors.DataLossError: a truncated or corrupt file.
      tf.errors.NotFoundError: no such file.
    """
    yield from _RECORD_ITERATOR(path)


def write_records(paths, records):
    """Writes records (bytes) round-robin to `paths` (a path or a list),
    which appear only once complete; returns their number."""
    with RecordFileWriter(paths) as writer:
        for record in records:
            writer.write(record)
        writer.commit()
    return writer.total_written


def split_shard_file(plan, shard, source_path, output_paths):
    """Splits one shard's record file by the output file of each record.

    Args:
      plan: the run's InterleavePlan.
      shard: int, the shard index.
      source_path: str, the shard's records.
      output_paths: list of str, one per output file (each is written,
        empty for an output without records of this shard).

    Returns:
      int, the number of records split.

    Raises:
      ValueError: the shard file does not hold plan.counts[shard] records.
    """
    targets = (plan.shard_positions(shard) % len(output_paths)).tolist()
    records = read_records(source_path)
    with RecordFileWriter(output_paths) as writer:
        for output, record in zip(targets, records):
            writer.write(record, output)
        if next(records, None) is not None:
            raise ValueError("%s holds more than the %d records "
                             "planned" % (source_path, len(targets)))
        if writer.total_written != len(targets):
            raise ValueError("%s holds %d records, %d planned"
                             % (source_path, writer.total_written,
                                len(targets)))
        writer.commit()
    return writer.total_written


def output_records(plan, output_index, num_outputs, source_path):
    """Yields the records of one output file, in order.

    Args:
      plan: the run's InterleavePlan.
      output_index, num_outputs: which output file, of how many.
      source_path: callable(shard) -> str, the shard's records for this
        output (the shard file, or its split_shard_file output).

    Yields:
      bytes: merged positions output_index + k * num_outputs.

    Raises:
      ValueError: a source file ends before the plan says it should.
    """
    readers = {}
    for shards, finished in plan.output_order(output_index, num_outputs):
        for shard in shards.tolist():
            reader = readers.get(shard)
            if reader is None:
                reader = readers[shard] = read_records(source_path(shard))
            record = next(reader, None)
            if record is None:
                raise ValueError("%s ends before the %d records planned"
                                 % (source_path(shard),
                                    plan.counts[shard]))
            yield record
        for shard in finished:
            reader = readers.pop(shard, None)
            if reader is not None:
                reader.close()
