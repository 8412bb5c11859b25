"""tf.data input pipeline for pre-training TFRecords.

Reproduces the input_fn of google-research/bert `run_pretraining.py`
(input_fn_builder) with current tf.data calls: `interleave` replaces
`tf.contrib.data.parallel_interleave(sloppy=True)` and `map` + `batch`
replaces `map_and_batch`.
"""
from absl import logging
import tensorflow as tf

from data.io.errors import UserError
from data.io.record_specs import pretraining_record_spec
from data.io.tfrecord import usable_record_files


def expand_input_files(input_files):
    """Expands a comma-separated glob string (or list of globs) to files.

    Args:
      input_files: str like "a/*.tfrecord,b.tfrecord", or a list of str.

    Returns:
      list of str, the matches of each pattern in pattern order, without
      temp files of unfinished writes and folders (data.io.atomic), which
      are skipped with a warning.

    Raises:
      ValueError: a pattern matches no file (or only temp files).

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

    Raises:
      tf.errors.InvalidArgumentError (when run): a key is missing or a
        length differs from the spec (pretraining_dataset checks each
        file's first record beforehand, with a clearer error).

    Source: run_pretraining.py, _decode_record.
    """
    return pretraining_record_spec(
        max_seq_length, max_predictions_per_seq).decode(record)


def pretraining_dataset(input_files, max_seq_length, max_predictions_per_seq,
                        batch_size, is_training, num_cpu_threads=4, seed=None):
    """Batches of pre-training features, as run_pretraining's input_fn.

    Training: the file list is repeated and shuffled (buffer = number of
    files), files are read interleaved (cycle length min(num_cpu_threads,
    number of files), order not deterministic), records are shuffled with a
    buffer of 100. Evaluation: the files are read in order and repeated. Both
    repeat forever (the caller sets the number of steps) and drop the last
    partial batch, as the original.

    Args:
      input_files: comma-separated glob string or list of paths/globs.
      max_seq_length, max_predictions_per_seq: must match the data.
      batch_size: int.
      is_training: bool.
      num_cpu_threads: int, the original's default is 4.
      seed: optional int (`--seed`): both shuffles seeded and the files read
        in a fixed interleaved order, so a run can be repeated exactly.

    Returns:
      tf.data.Dataset of dicts as parse_pretraining_example, each with a
      leading batch dimension of `batch_size`.

    Raises:
      ValueError: a pattern matches no file.
      data.io.tfrecord.RecordFormatError (a ValueError): a file's records
        were written with another max_seq_length / max_predictions_per_seq
        (names the file, the feature and both lengths).

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
        lambda record: parse_pretraining_example(
            record, max_seq_length, max_predictions_per_seq),
        num_parallel_calls=tf.data.AUTOTUNE)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    return dataset.prefetch(tf.data.AUTOTUNE)


MODEL_INPUT_KEYS = ("input_ids", "input_mask", "segment_ids",
                    "masked_lm_positions")
LABEL_KEYS = ("masked_lm_ids", "masked_lm_weights", "next_sentence_labels")


def split_inputs_and_labels(features):
    """Splits parsed features into (model inputs, labels) for `model.fit`.

    Returns:
      (dict of MODEL_INPUT_KEYS for modeling.BertPretrainer, dict of
      LABEL_KEYS for its compute_loss).
    """
    return ({key: features[key] for key in MODEL_INPUT_KEYS},
            {key: features[key] for key in LABEL_KEYS})
