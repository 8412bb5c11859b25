"""TFRecord format of pre-training instances: features and their log.

Source: create_pretraining_data.py write_instance_to_example_files and
run_pretraining.py input_fn_builder (same keys, dtypes and lengths).
"""
import collections

from absl import logging
import tensorflow as tf

from bert_tf1.data.io.record_specs import pretraining_record_spec
from bert_tf1.data.pretraining.shard_records import read_records

FEATURE_KEYS = ("input_ids", "input_mask", "segment_ids",
                "masked_lm_positions", "masked_lm_ids", "masked_lm_weights",
                "next_sentence_labels")
# The original logs its first 20 instances.
NUM_LOGGED = 20


def instance_to_features(instance, tokenizer, max_seq_length,
                         max_predictions_per_seq):
    """Converts a TrainingInstance to the original's feature lists.

    Returns:
      OrderedDict key -> zero-padded list (floats for masked_lm_weights).

    Raises:
      ValueError: the instance exceeds max_seq_length or
        max_predictions_per_seq.
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


def serialize_features(features):
    """instance_to_features' output as a serialized tf.train.Example."""
    return pretraining_record_spec(
        len(features["input_ids"]),
        len(features["masked_lm_ids"])).serialize(features)


def log_example(example, inv_vocab):
    """Logs one record as the original logs its first 20 instances.

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


def log_written(output_files, total, inv_vocab):
    """Logs the first NUM_LOGGED of `total` records written round-robin to
    `output_files` (read back: record p is the next of file p % n), as the
    original logs its first instances, then the total.

    Source: create_pretraining_data.py, write_instance_to_example_files.
    """
    readers = [read_records(path) for path in output_files]
    for position in range(min(total, NUM_LOGGED)):
        record = next(readers[position % len(readers)])
        log_example(tf.train.Example.FromString(record), inv_vocab)
    for reader in readers:
        reader.close()
    logging.info("Wrote %d total instances", total)
    if total == 0:
        logging.warning("The corpus gave no instances (no non-empty line "
                        "after tokenization); the output files are empty.")
