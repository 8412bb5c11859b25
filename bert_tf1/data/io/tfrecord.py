"""TFRecord files from one feature spec: the writer and the reader of a task.

A `RecordSpec` lists a task's `tf.train.Example` features (the per-task specs
are in bert_tf1.data.io.record_specs); `RecordFileWriter` writes atomically.
"""
import dataclasses
import os

import tensorflow as tf

from bert_tf1.data.io import atomic
from bert_tf1.data.io.errors import UserError

_DTYPES = {"int64": tf.int64, "float32": tf.float32}


class RecordFormatError(UserError):
    """A TFRecord file does not hold the records a reader expects."""


@dataclasses.dataclass(frozen=True)
class RecordField:
    """One feature of a record.

    Attributes:
      name: the tf.train.Example key.
      dtype: "int64" (Int64List) or "float32" (FloatList).
      length: an int, or the name of a size given to the spec (e.g.
        "max_seq_length", named in errors).
      scalar: parsed with shape [] (length 1).
      parsed: read back (SQuAD's `is_impossible` is not, as the original).
    """
    name: str
    dtype: str
    length: object = 1
    scalar: bool = False
    parsed: bool = True


class RecordSpec:
    """The features of one task's records, with concrete sizes.

    Args:
      task: str, for error messages ("classifier", "SQuAD", ...).
      fields: sequence of RecordField, in the order they are written.
      sizes: dict size name -> int (e.g. {"max_seq_length": 128}).
    """

    def __init__(self, task, fields, sizes=None):
        self.task = task
        self.fields = tuple(fields)
        self.sizes = dict(sizes or {})
        for field in self.fields:
            if field.dtype not in _DTYPES:
                raise ValueError("field %s: dtype %r not in %s" % (
                    field.name, field.dtype, sorted(_DTYPES)))
            self.length(field)  # Fails early on an unknown size name.

    @property
    def keys(self):
        """The written keys, in order."""
        return tuple(field.name for field in self.fields)

    def length(self, field):
        """The number of values of `field` (a RecordField)."""
        if isinstance(field.length, int):
            return field.length
        if field.length not in self.sizes:
            raise ValueError("%s record spec: field %s needs size %r" % (
                self.task, field.name, field.length))
        return int(self.sizes[field.length])

    def to_example(self, values):
        """A tf.train.Example of `values` (dict name -> list of numbers).

        Raises:
          RecordFormatError: a key is missing or a list has the wrong
            length (names the feature and both lengths).
        """
        feature = {}
        for field in self.fields:
            if field.name not in values:
                raise RecordFormatError("%s record: no value for feature %r"
                                        % (self.task, field.name))
            value = values[field.name]
            value = list(value) if hasattr(value, "__iter__") else [value]
            if len(value) != self.length(field):
                note = (" (%s=%d)" % (field.length, self.length(field))
                        if isinstance(field.length, str) else "")
                raise RecordFormatError(
                    "%s record: feature %r has %d values, expected %d%s" % (
                        self.task, field.name, len(value),
                        self.length(field), note))
            if field.dtype == "float32":
                feature[field.name] = tf.train.Feature(
                    float_list=tf.train.FloatList(value=value))
            else:
                feature[field.name] = tf.train.Feature(
                    int64_list=tf.train.Int64List(value=value))
        return tf.train.Example(features=tf.train.Features(feature=feature))

    def serialize(self, values):
        """The bytes of `to_example(values)`, map keys sorted (the same bytes
        on every run)."""
        return self.to_example(values).SerializeToString(deterministic=True)


    def parsing_spec(self):
        """dict name -> tf.io.FixedLenFeature of the parsed fields."""
        spec = {}
        for field in self.fields:
            if not field.parsed:
                continue
            shape = [] if field.scalar else [self.length(field)]
            spec[field.name] = tf.io.FixedLenFeature(shape, _DTYPES[field.dtype])
        return spec

    def decode(self, records, batched=False):
        """Parses serialized records; int64 features become int32.

        Args:
          records: a string tensor, one record (batched=False) or [B].
          batched: parse a batch with tf.io.parse_example.

        Returns:
          dict name -> tensor ([length] or [] per record; a leading [B] when
          batched); int32 for int64 fields, float32 otherwise.
        """
        parse = tf.io.parse_example if batched else tf.io.parse_single_example
        parsed = parse(records, self.parsing_spec())
        # tf.train.Example only stores int64; the model takes int32.
        return {name: tf.cast(value, tf.int32) if value.dtype == tf.int64
                else value for name, value in parsed.items()}

    def batched_dataset(self, input_files, is_training, batch_size, unpack,
                        seed=None):
        """The fine-tuning scripts' reader (`input_fn_builder`): training
        repeats, shuffles and drops the last partial batch; evaluation reads
        every record once, in order, with a known cardinality.

        Args:
          input_files: a path or list of paths (`check_files` first).
          is_training: bool.
          batch_size: int.
          unpack: function from the parsed dict to the element, e.g.
            `(features, label_ids, weights)`.
          seed: optional shuffle seed (buffer 100, as the original).

        Returns:
          tf.data.Dataset of `unpack`'s elements, prefetched.

        Raises:
          RecordFormatError: see `check_files`.
        """
        if isinstance(input_files, (str, bytes, os.PathLike)):
            input_files = [input_files]
        input_files = [os.fspath(path) for path in input_files]
        self.check_files(input_files)
        dataset = tf.data.TFRecordDataset(input_files)
        if is_training:
            dataset = dataset.repeat().shuffle(buffer_size=100, seed=seed)
        else:
            count = dataset.reduce(
                tf.constant(0, tf.int64),
                tf.autograph.experimental.do_not_convert(lambda n, _: n + 1))
            dataset = dataset.apply(
                tf.data.experimental.assert_cardinality(count))
        dataset = dataset.batch(batch_size, drop_remainder=is_training)
        # No AutoGraph for the input functions (here and in the tasks):
        # they hold no Python control flow over tensors, and converting them
        # costs ~0.7 CPU seconds at each process's first run (measured).
        dataset = dataset.map(
            tf.autograph.experimental.do_not_convert(
                lambda records: unpack(self.decode(records, batched=True))),
            num_parallel_calls=tf.data.AUTOTUNE)
        return dataset.prefetch(tf.data.AUTOTUNE)

    def labelled_dataset(self, input_files, is_training, batch_size,
                         feature_keys, weights=False, seed=None):
        """`batched_dataset` of `(features, label_ids)` or, with `weights`,
        `(features, label_ids, is_real_example)`: features the dict of
        `feature_keys`, is_real_example float32 [B] (the sample weight)."""
        def unpack(parsed):
            features = {key: parsed[key] for key in feature_keys}
            if not weights:
                return features, parsed["label_ids"]
            return (features, parsed["label_ids"],
                    tf.cast(parsed["is_real_example"], tf.float32))

        return self.batched_dataset(input_files, is_training, batch_size,
                                    unpack, seed=seed)

    def check_example(self, example, path):
        """Raises RecordFormatError unless `example` fits the parsed fields."""
        stored = example.features.feature
        for field in self.fields:
            if not field.parsed:
                continue
            if field.name not in stored:
                raise RecordFormatError(
                    "%s: the records have no feature %r; expected %s records "
                    "with %s" % (path, field.name, self.task,
                                 ", ".join(self.keys)))
            kind = stored[field.name].WhichOneof("kind")
            expected_kind = ("float_list" if field.dtype == "float32"
                             else "int64_list")
            if kind != expected_kind:
                raise RecordFormatError(
                    "%s: feature %r holds %s, expected %s" % (
                        path, field.name, kind, expected_kind))
            found = len(getattr(stored[field.name], kind).value)
            if found == self.length(field):
                continue
            size, hint = "the expected length", ""
            if isinstance(field.length, str):
                size = field.length
                hint = ("; the records were written with %s=%d: pass --%s=%d"
                        " or write the records again" % (size, found, size,
                                                         found))
            raise RecordFormatError(
                "%s: feature %r has length %d, but %s is %d%s" % (
                    path, field.name, found, size, self.length(field), hint))

    def check_files(self, paths):
        """Checks the first record of each file (a path or list) against this
        spec.

        Raises:
          RecordFormatError: another length (names file, feature, lengths
            and flag), a missing feature, another dtype, or not a TFRecord
            file.
        """
        if isinstance(paths, (str, bytes, os.PathLike)):
            paths = [paths]
        for path in paths:
            path = os.fspath(path)
            try:
                first = next(iter(tf.data.TFRecordDataset(path).take(1)), None)
            except tf.errors.DataLossError as error:
                raise RecordFormatError(
                    "%s: not a readable TFRecord file (%s)" % (
                        path, error.message.splitlines()[0])) from None
            if first is None:
                continue
            try:
                example = tf.train.Example.FromString(first.numpy())
            except Exception:  # protobuf's DecodeError
                raise RecordFormatError(
                    "%s: the records are not tf.train.Example protos" % path
                ) from None
            self.check_example(example, path)


def usable_record_files(paths):
    """Drops temp files and folders a glob (e.g. `out/*`) may have matched.

    Returns:
      (kept, skipped): two lists of str.
    """
    kept, skipped = [], []
    for path in paths:
        name = os.path.basename(os.fspath(path).rstrip("/"))
        # Folders: checked locally only (a stat per gs:// file is slow).
        if (atomic.is_temp_path(path) or name == atomic.TEMP_DIR_NAME
                or ("://" not in path and os.path.isdir(path))):
            skipped.append(path)
        else:
            kept.append(path)
    return kept, skipped


class RecordFileWriter:
    """Writes record k to output_files[k % len(output_files)] (the original
    pre-training writer's rule) or to the file `write` names, into temp
    files that `commit()` moves into place; leaving the `with` block
    without commit deletes them.

    Args:
      output_files: a path or a list of paths (not empty).

    Attributes:
      total_written: number of records written so far.
    """

    def __init__(self, output_files):
        if isinstance(output_files, (str, bytes, os.PathLike)):
            output_files = [output_files]
        self.output_files = [os.fspath(p) for p in output_files]
        if not self.output_files:
            raise ValueError("no output files given")
        self.total_written = 0
        self._temp_files = []
        self._writers = []
        self._committed = False

    def __enter__(self):
        try:
            # One cleanup per folder (a shard's split writes many files).
            folders = {os.path.dirname(p): p for p in self.output_files}
            for path in folders.values():
                atomic.remove_stale_temp_files(path)
            self._temp_files = [atomic.temp_path_for(p)
                                for p in self.output_files]
            self._writers = [tf.io.TFRecordWriter(p) for p in self._temp_files]
        except Exception as error:  # noqa: BLE001 (translated or re-raised)
            self._failed(error, self.output_files[0])
        return self

    def _failed(self, error, path):
        self._discard()
        atomic.raise_write_error(path, error)
        raise error

    def write(self, record, index=None):
        """Writes one serialized record (bytes) to output_files[index]
        (default: the round-robin rule).

        Raises:
          bert_tf1.data.io.errors.OutputWriteError: disk full or another OS error
            (names the output file); the temp files are removed.
        """
        if index is None:
            index = self.total_written % len(self._writers)
        try:
            self._writers[index].write(record)
        except Exception as error:  # noqa: BLE001 (translated or re-raised)
            self._failed(error, self.output_files[index])
        self.total_written += 1

    def commit(self):
        """Closes the files and moves them onto the final names."""
        writers, self._writers = self._writers, []
        try:
            for writer in writers:
                writer.close()
            for temp, final in zip(self._temp_files, self.output_files):
                atomic.replace_file(temp, final)
        except Exception as error:  # noqa: BLE001 (translated or re-raised)
            self._failed(error, self.output_files[0])
        self._committed = True
        self._remove_temp_dirs()

    def _discard(self):
        writers, self._writers = self._writers, []
        for writer in writers:
            try:
                writer.close()
            except Exception:  # noqa: BLE001 (a full disk fails the flush too)
                pass
        for temp in self._temp_files:
            atomic.remove_quietly(temp)
        self._remove_temp_dirs()

    def _remove_temp_dirs(self):
        for folder in {os.path.dirname(t) for t in self._temp_files}:
            atomic.remove_empty_temp_dir(folder)

    def __exit__(self, exc_type, exc, tb):
        if not self._committed:
            self._discard()
        return False


def write_records(output_file, spec, values):
    """Writes `spec.serialize(v)` (a RecordSpec) for each dict `v` of
    `values` to one TFRecord file, atomically; returns the number written.

    Raises:
      RecordFormatError: a dict that does not fit `spec` (no file is left).
      OutputWriteError: see `RecordFileWriter.write`.
    """
    with RecordFileWriter(output_file) as writer:
        for value in values:
            writer.write(spec.serialize(value))
        writer.commit()
    return writer.total_written
