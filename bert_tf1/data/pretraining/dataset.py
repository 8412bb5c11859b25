"""tf.data input pipeline for pre-training TFRecords.

Source: run_pretraining.py input_fn_builder (`interleave` for
`parallel_interleave(sloppy=True)`, `map` + `batch` for `map_and_batch`).
"""
from absl import logging
import tensorflow as tf

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.record_specs import pretraining_record_spec
from bert_tf1.data.io.tfrecord import usable_record_files


def expand_input_files(input_files):
    """Expands a comma-separated glob string (or list of globs) to files.

    Returns:
      list of str in pattern order; folders and temp files of unfinished
      writes are skipped with a warning.

    Raises:
      UserError: a pattern matches no file (or only temp files).

    Source: run_pretraining.py / create_pretraining_data.py, main
    (`input_file.split(",")` then `tf.gfile.Glob`).
    """
    if isinstance(input_files, str):
        patterns = [p for p in input_files.split(",") if p]
    else:
        patterns = list(input_files)
    files = []
    for pattern in patterns:
        matches, skipped = usable_record_files(tf.io.gfile.glob(pattern))
        if skipped:
            logging.warning(
                "Skipping %d path(s) matched by %r that are folders or temp "
                "files of an unfinished write: %s", len(skipped), pattern,
                ", ".join(skipped[:5]))
        if not matches:
            raise UserError("input file pattern %r matches no file%s"
                            % (pattern, " (only temp files or folders)"
                                if skipped else ""))
        files.extend(matches)
    if not files:
        raise UserError("no input files given")
    return files


def parse_pretraining_example(record, max_seq_length,
                              max_predictions_per_seq):
    """Parses one serialized record; int64 features become int32.

    Returns:
      dict: input_ids, input_mask, segment_ids int32 [max_seq_length];
      masked_lm_positions, masked_lm_ids int32 [max_predictions_per_seq];
      masked_lm_weights float32 [max_predictions_per_seq];
      next_sentence_labels int32 [1].

    Source: run_pretraining.py, _decode_record.
    """
    return pretraining_record_spec(
        max_seq_length, max_predictions_per_seq).decode(record)


def pretraining_dataset(input_files, max_seq_length, max_predictions_per_seq,
                        batch_size, is_training, num_cpu_threads=4, seed=None):
    """Batches of pre-training features, as run_pretraining's input_fn.

    Repeats forever and drops the last partial batch; training shuffles
    files and records (buffer 100) and interleaves files; `seed` makes the
    order repeatable.

    Args:
      input_files: comma-separated glob string or list of paths/globs.
      max_seq_length, max_predictions_per_seq: must match the data.
      batch_size: int.
      is_training: bool.
      num_cpu_threads: int, the original's default is 4.
      seed: optional int.

    Returns:
      tf.data.Dataset of dicts as parse_pretraining_example, batched.

    Raises:
      UserError: a pattern matches no file.
      RecordFormatError: records of another max_seq_length or
        max_predictions_per_seq (names file, feature and lengths).

    Source: run_pretraining.py, input_fn_builder.
    """
    files = expand_input_files(input_files)
    pretraining_record_spec(max_seq_length,
                            max_predictions_per_seq).check_files(files)
    if is_training:
        dataset = tf.data.Dataset.from_tensor_slices(tf.constant(files))
        dataset = dataset.repeat()
        dataset = dataset.shuffle(buffer_size=len(files), seed=seed)
        dataset = dataset.interleave(
            tf.data.TFRecordDataset,
            cycle_length=min(num_cpu_threads, len(files)),
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=seed is not None)
        dataset = dataset.shuffle(buffer_size=100, seed=seed)
    else:
        dataset = tf.data.TFRecordDataset(files)
        dataset = dataset.repeat()
    dataset = dataset.map(
        tf.autograph.experimental.do_not_convert(
            lambda record: parse_pretraining_example(
                record, max_seq_length, max_predictions_per_seq)),
        num_parallel_calls=tf.data.AUTOTUNE)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    return dataset.prefetch(tf.data.AUTOTUNE)


MODEL_INPUT_KEYS = ("input_ids", "input_mask", "segment_ids",
                    "masked_lm_positions")
LABEL_KEYS = ("masked_lm_ids", "masked_lm_weights", "next_sentence_labels")


@tf.autograph.experimental.do_not_convert  # no tensor control flow
def split_inputs_and_labels(features):
    """Splits parsed features into (model inputs, labels) for `model.fit`.

    Returns:
      (dict of MODEL_INPUT_KEYS for bert_tf1.modeling.BertPretrainer, dict of
      LABEL_KEYS for its compute_loss).
    """
    return ({key: features[key] for key in MODEL_INPUT_KEYS},
            {key: features[key] for key in LABEL_KEYS})
