"""TFRecord format of pre-training instances: features, spec and writer.

The keys, dtypes and lengths are those of google-research/bert
`create_pretraining_data.py` (write_instance_to_example_files) and
`run_pretraining.py` (input_fn_builder), so files go both ways between the
original and this project.
"""
import collections
import os
import uuid

from absl import logging
import tensorflow as tf

FEATURE_KEYS = ("input_ids", "input_mask", "segment_ids",
                "masked_lm_positions", "masked_lm_ids", "masked_lm_weights",
                "next_sentence_labels")


def pretraining_feature_spec(max_seq_length, max_predictions_per_seq):
    """The `tf.io.parse_single_example` spec of a pre-training record.

    Returns:
      dict key -> tf.io.FixedLenFeature: input_ids, input_mask, segment_ids
      int64 [max_seq_length]; masked_lm_positions, masked_lm_ids int64
      [max_predictions_per_seq]; masked_lm_weights float32
      [max_predictions_per_seq]; next_sentence_labels int64 [1].

    Source: run_pretraining.py, input_fn_builder (name_to_features).
    """
    seq = [max_seq_length]
    preds = [max_predictions_per_seq]
    return {
        "input_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "input_mask": tf.io.FixedLenFeature(seq, tf.int64),
        "segment_ids": tf.io.FixedLenFeature(seq, tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature(preds, tf.int64),
        "masked_lm_ids": tf.io.FixedLenFeature(preds, tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature(preds, tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }


def instance_to_features(instance, tokenizer, max_seq_length,
                         max_predictions_per_seq):
    """Converts a TrainingInstance to the original's feature lists.

    Args:
      instance: data.pretraining.instances.TrainingInstance.
      tokenizer: object with `convert_tokens_to_ids(list of str)`.
      max_seq_length, max_predictions_per_seq: padded lengths.

    Returns:
      OrderedDict key -> list (ints, or floats for masked_lm_weights), in the
      original's key order, zero-padded.

    Raises:
      ValueError: the instance is longer than max_seq_length or has more
        predictions than max_predictions_per_seq.
      KeyError: a token is not in the vocabulary (as the original).

    Source: create_pretraining_data.py, write_instance_to_example_files.
    """
    input_ids = list(tokenizer.convert_tokens_to_ids(instance.tokens))
    if len(input_ids) > max_seq_length:
        raise ValueError("instance has %d tokens, max_seq_length is %d"
                         % (len(input_ids), max_seq_length))
    num_predictions = len(instance.masked_lm_positions)
    if num_predictions > max_predictions_per_seq:
        raise ValueError(
            "instance has %d masked-LM predictions, max_predictions_per_seq "
            "is %d" % (num_predictions, max_predictions_per_seq))
    seq_pad = [0] * (max_seq_length - len(input_ids))
    pred_pad = [0] * (max_predictions_per_seq - num_predictions)
    features = collections.OrderedDict()
    features["input_ids"] = input_ids + seq_pad
    features["input_mask"] = [1] * len(input_ids) + seq_pad
    features["segment_ids"] = list(instance.segment_ids) + seq_pad
    features["masked_lm_positions"] = (
        list(instance.masked_lm_positions) + pred_pad)
    features["masked_lm_ids"] = list(tokenizer.convert_tokens_to_ids(
        instance.masked_lm_labels)) + pred_pad
    features["masked_lm_weights"] = [1.0] * num_predictions + [0.0] * len(
        pred_pad)
    features["next_sentence_labels"] = [1 if instance.is_random_next else 0]
    return features


def features_to_example(features):
    """Builds a `tf.train.Example` from instance_to_features' output."""
    feature = {}
    for key, values in features.items():
        if key == "masked_lm_weights":
            feature[key] = tf.train.Feature(
                float_list=tf.train.FloatList(value=values))
        else:
            feature[key] = tf.train.Feature(
                int64_list=tf.train.Int64List(value=values))
    return tf.train.Example(features=tf.train.Features(feature=feature))


def serialize_example(example):
    """Serializes with sorted map keys.

    The original's bytes order the feature map by a per-process hash, so its
    files differ from run to run; sorting makes ours the same on every run.
    """
    return example.SerializeToString(deterministic=True)


def log_example(example, inv_vocab):
    """Logs one record as the original logs its first 20 instances.

    Args:
      example: tf.train.Example with the pre-training keys.
      inv_vocab: dict id -> token, to print the tokens.

    Source: create_pretraining_data.py, write_instance_to_example_files.
    """
    feature = example.features.feature
    length = sum(feature["input_mask"].int64_list.value)
    ids = feature["input_ids"].int64_list.value[:length]
    logging.info("*** Example ***")
    logging.info("tokens: %s", " ".join(inv_vocab[i] for i in ids))
    for key in FEATURE_KEYS:
        values = (feature[key].int64_list.value
                  or feature[key].float_list.value)
        logging.info("%s: %s", key, " ".join(str(x) for x in values))


def _is_local(path):
    return "://" not in path


def temp_path_for(path):
    """A fresh temporary file name in the folder of `path`."""
    folder, name = os.path.split(path)
    return os.path.join(folder, ".%s.tmp-%s" % (name, uuid.uuid4().hex))


def replace_file(temp_path, path):
    """Moves a finished temp file onto `path` (atomic for local files)."""
    if _is_local(path):
        os.replace(temp_path, path)
    else:
        tf.io.gfile.rename(temp_path, path, overwrite=True)


def remove_quietly(path):
    """Deletes `path` if it exists (cleanup after a failure)."""
    try:
        tf.io.gfile.remove(path)
    except tf.errors.NotFoundError:
        pass


class RoundRobinRecordWriter:
    """Writes serialized records round-robin over several TFRecord files.

    Record k goes to output_files[k % len(output_files)], as the original.
    Records go to temporary files in the same folders; `commit()` moves them
    onto the final names (os.replace), and leaving the `with` block on an
    exception deletes them, so a user never sees a half-written file.

    Args:
      output_files: list of str, the final file names (not empty).
      inv_vocab: optional dict id -> token; when given, the first
        `num_logged` records are logged as the original does.

    Source: create_pretraining_data.py, write_instance_to_example_files.
    """

    def __init__(self, output_files, inv_vocab=None, num_logged=20):
        if not output_files:
            raise ValueError("no output files given")
        self.output_files = list(output_files)
        self.inv_vocab = inv_vocab
        self.num_logged = num_logged if inv_vocab is not None else 0
        self.total_written = 0
        self._temp_files = [temp_path_for(p) for p in self.output_files]
        self._writers = []
        self._committed = False

    def __enter__(self):
        for folder in {os.path.dirname(p) for p in self.output_files}:
            if folder:
                tf.io.gfile.makedirs(folder)
        self._writers = [tf.io.TFRecordWriter(p) for p in self._temp_files]
        return self

    def write(self, record):
        """Writes one serialized tf.train.Example (bytes)."""
        writer = self._writers[self.total_written % len(self._writers)]
        writer.write(record)
        if self.total_written < self.num_logged:
            log_example(tf.train.Example.FromString(record), self.inv_vocab)
        self.total_written += 1

    def commit(self):
        """Closes the files and moves them onto the final names."""
        self._close()
        for temp, final in zip(self._temp_files, self.output_files):
            replace_file(temp, final)
        self._committed = True

    def _close(self):
        for writer in self._writers:
            writer.close()
        self._writers = []

    def __exit__(self, exc_type, exc, tb):
        if not self._committed:
            self._close()
            for temp in self._temp_files:
                remove_quietly(temp)
        return False


def write_instances(instances, tokenizer, output_files, max_seq_length,
                    max_predictions_per_seq, log_first=20):
    """Writes TrainingInstances as the original does; returns the count.

    Args:
      instances: iterable of TrainingInstance.
      tokenizer: data.tokenization.FullTokenizer (convert_tokens_to_ids,
        inv_vocab).
      output_files: list of str; records are written round-robin.
      max_seq_length, max_predictions_per_seq: padded lengths.
      log_first: how many leading records to log.

    Source: create_pretraining_data.py, write_instance_to_example_files.
    """
    with RoundRobinRecordWriter(output_files, tokenizer.inv_vocab,
                                log_first) as writer:
        for instance in instances:
            features = instance_to_features(
                instance, tokenizer, max_seq_length, max_predictions_per_seq)
            writer.write(serialize_example(features_to_example(features)))
        writer.commit()
    logging.info("Wrote %d total instances", writer.total_written)
    return writer.total_written
