"""Tagging TFRecords: writing TaggingFeatures, reading them with tf.data.

The spec is data.io.record_specs.tagging_record_spec (input_ids,
input_mask, segment_ids, label_ids int64 and label_weights float, each
[max_seq_length]). Records hold no window id: evaluation and prediction
read the file once, in order, so record k is features[k] for decoding
(data.tagging.decoding).
"""
import os


from data.io.record_specs import tagging_record_spec
from data.io.tfrecord import RecordFileWriter

__all__ = ["write_tagging_records", "tagging_dataset"]

FEATURE_KEYS = ("input_ids", "input_mask", "segment_ids")


def write_tagging_records(features, output_file):
    """Writes TaggingFeatures as TFRecords, atomically.

    Records go to a temporary file under `.bert-tmp/` beside `output_file`
    (data.io.tfrecord.RecordFileWriter), which replaces `output_file` when
    all are written; on an error no file is left.

    Args:
      features: iterable of data.tagging.features.TaggingFeatures (all of
        one max_seq_length).
      output_file: str or os.PathLike (local or gs://).

    Returns:
      int, the number of records written.

    Raises:
      data.io.tfrecord.RecordFormatError: a feature list of another length.
    """
    spec = None
    with RecordFileWriter(os.fspath(output_file)) as writer:
        for feature in features:
            if spec is None:
                spec = tagging_record_spec(len(feature.input_ids))
            writer.write(spec.serialize(feature.values()))
        writer.commit()
        return writer.total_written


def tagging_dataset(input_file, seq_length, is_training, batch_size,
                    seed=None, drop_remainder=None):
    """Reads tagging TFRecords into batches for Keras.

    Training repeats forever, shuffles (buffer 100, as the original
    readers) and drops the last partial batch; evaluation / prediction reads
    the file once, in order, keeps every record (the last batch may be
    smaller) and has a known cardinality.

    Args:
      input_file: a path or list of paths written by write_tagging_records.
      seq_length: int, the max_seq_length they were written with.
      is_training: bool.
      batch_size: int.
      seed: optional int, the shuffle seed.
      drop_remainder: bool or None (None: is_training).

    Returns:
      tf.data.Dataset of (features, label_ids): features a dict of int32
      [B, seq_length] input_ids, input_mask, segment_ids and float32
      [B, seq_length] label_weights (1.0 at the scored positions, which the
      taggers' `compute_loss` reads from the inputs); label_ids int32
      [B, seq_length]. No Keras sample weight: `fit` leaves it per
      example.

    Raises:
      data.io.tfrecord.RecordFormatError (a ValueError): records of another
        max_seq_length or task (names the file, the feature, both lengths).
    """
    spec = tagging_record_spec(seq_length)

    def unpack(parsed):
        features = {name: parsed[name]
                    for name in FEATURE_KEYS + ("label_weights",)}
        return features, parsed["label_ids"]

    return spec.batched_dataset(input_file, is_training, batch_size, unpack,
                                seed=seed, drop_remainder=drop_remainder)
