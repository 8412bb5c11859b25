"""Tagging TFRecords (bert_tf1.data.io.record_specs.tagging_record_spec): writing
TaggingFeatures, reading them with tf.data. Evaluation reads a file once, in
order, so record k is features[k] for decoding.
"""
from bert_tf1.data.io.record_specs import tagging_record_spec
from bert_tf1.data.io.tfrecord import write_records

FEATURE_KEYS = ("input_ids", "input_mask", "segment_ids")


def write_tagging_records(features, output_file):
    """Writes TaggingFeatures as TFRecords, atomically.

    Returns:
      int, the number of records written.

    Raises:
      RecordFormatError: a feature list of another length.
    """
    features = list(features)
    spec = tagging_record_spec(len(features[0].input_ids) if features else 0)
    return write_records(output_file, spec, (f.values() for f in features))


def tagging_dataset(input_file, seq_length, is_training, batch_size,
                    seed=None):
    """Reads tagging TFRecords into batches for Keras.

    As RecordSpec.batched_dataset.

    Args:
      input_file: a path or list of paths.
      seq_length: int, the records' max_seq_length.
      is_training: bool.
      batch_size: int.
      seed: optional int, the shuffle seed.

    Returns:
      tf.data.Dataset of (features, label_ids): int32 [B, seq_length]
      input_ids, input_mask, segment_ids, float32 [B, seq_length]
      label_weights (read by the taggers' `compute_loss`); label_ids int32
      [B, seq_length].

    Raises:
      RecordFormatError: records of another max_seq_length or task.
    """
    return tagging_record_spec(seq_length).labelled_dataset(
        input_file, is_training, batch_size,
        FEATURE_KEYS + ("label_weights",), seed=seed)
