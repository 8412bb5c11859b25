"""Per-shard record files and their merge into the output files.

Each shard's records go to a file of their own, merged into the outputs in
the order of bert_tf1.data.pretraining.interleave. The Beam pipeline first splits each
shard file by output (`split_shard_file`), then writes each output on its own
(`output_records`). TensorFlow's record reader/writer: local and gs:// alike.
"""
import contextlib
import uuid

import tensorflow as tf

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


def _attempt_path(path):
    # Beside the final name, unique per (retried, speculative) attempt.
    return "%s.attempt-%s" % (path, uuid.uuid4().hex)


@contextlib.contextmanager
def _renamed_into_place(path):
    """Yields a temp name for `path`, renamed onto it when the block ends
    (removed if it raises)."""
    temp = _attempt_path(path)
    try:
        yield temp
        tf.io.gfile.rename(temp, path, overwrite=True)
    except BaseException:
        _remove_quietly(temp)
        raise


def write_records(path, records):
    """Writes records (bytes) to `path`, which appears only once complete;
    returns their number."""
    count = 0
    with _renamed_into_place(path) as temp, \
            tf.io.TFRecordWriter(temp) as writer:
        for record in records:
            writer.write(record)
            count += 1
    return count


def write_text(path, text):
    """Writes a small text file that appears only once complete."""
    with _renamed_into_place(path) as temp, \
            tf.io.gfile.GFile(temp, "w") as writer:
        writer.write(text)


def _remove_quietly(path):
    try:
        tf.io.gfile.remove(path)
    except Exception:  # Gone already, or never created.
        pass


def split_shard_file(plan, shard, source_path, output_paths):
    """Splits one shard's record file by the output file of each record.

    Args:
      plan: the run's InterleavePlan.
      shard: int, the shard index.
      source_path: str, the shard's records.
      output_paths: list of str, one per output file (none is written for
        an output without records of this shard).

    Returns:
      list of int, records written per output file.

    Raises:
      ValueError: the shard file does not hold plan.counts[shard] records.
    """
    num_outputs = len(output_paths)
    targets = (plan.shard_positions(shard) % num_outputs).tolist()
    temps = {}
    writers = {}
    counts = [0] * num_outputs
    try:
        seen = 0
        for record in read_records(source_path):
            if seen >= len(targets):
                raise ValueError("%s holds more than the %d records "
                                 "planned" % (source_path, len(targets)))
            output = targets[seen]
            if output not in writers:
                temps[output] = _attempt_path(output_paths[output])
                writers[output] = tf.io.TFRecordWriter(temps[output])
            writers[output].write(record)
            counts[output] += 1
            seen += 1
        if seen != len(targets):
            raise ValueError("%s holds %d records, %d planned"
                             % (source_path, seen, len(targets)))
        for writer in writers.values():
            writer.close()
        for output, temp in temps.items():
            tf.io.gfile.rename(temp, output_paths[output], overwrite=True)
    except BaseException:
        for writer in writers.values():
            writer.close()
        for temp in temps.values():
            _remove_quietly(temp)
        raise
    return counts


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
