"""Classifier features: examples -> ids/mask/segments, TFRecords, tf.data.

Source: run_classifier.py `InputFeatures`, `convert_single_example`,
`convert_examples_to_features`, `file_based_convert_examples_to_features`,
`file_based_input_fn_builder` (here `classifier_dataset`). Regression tasks
(STS-B) pass `label_list=None` and store float labels.
"""
import dataclasses

from absl import logging

from bert_tf1.data.glue.processors import PaddingInputExample
from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.record_specs import classifier_record_spec
from bert_tf1.data.io.tfrecord import write_records
from bert_tf1.data.tokenization.packing import pack_tokens

#: The TFRecord keys written, in the original's order.
FEATURE_KEYS = ("input_ids", "input_mask", "segment_ids", "label_ids",
                "is_real_example")


@dataclasses.dataclass
class InputFeatures:
    """The model inputs of one example.

    Source: run_classifier.py `InputFeatures`.

    Attributes:
      input_ids, input_mask, segment_ids: lists of `max_seq_length` ints.
      label_id: int (index in the label list) or float (regression).
      is_real_example: False for `PaddingInputExample` rows.
    """

    input_ids: list
    input_mask: list
    segment_ids: list
    label_id: object
    is_real_example: bool = True


def _label_id(example, label_list):
    """The label index (classification) or float label (regression)."""
    if label_list is None:
        try:
            return float(example.label)
        except (TypeError, ValueError):
            raise UserError(
                "example %s: label %r is not a number (regression task, "
                "label_list=None)" % (example.guid, example.label)) from None
    label_map = {label: i for i, label in enumerate(label_list)}
    if example.label not in label_map:
        raise UserError("example %s: label %r is not in the label list %r" % (
            example.guid, example.label, list(label_list)))
    return label_map[example.label]


def convert_single_example(ex_index, example, label_list, max_seq_length,
                           tokenizer):
    """Converts one `InputExample` into an `InputFeatures`.

    Source: run_classifier.py `convert_single_example` (packing:
    `pack_tokens`; a `PaddingInputExample` gives zeros and
    `is_real_example=False`; examples with `ex_index < 5` are logged).

    Returns:
      `InputFeatures` with int lists of length `max_seq_length`; `label_id`
      an int, or a float when `label_list` is None (regression).

    Raises:
      UserError: `max_seq_length` too small for [CLS]/[SEP], or a label
        not in `label_list` (not a number for regression).
    """
    if isinstance(example, PaddingInputExample):
        return InputFeatures(
            input_ids=[0] * max_seq_length,
            input_mask=[0] * max_seq_length,
            segment_ids=[0] * max_seq_length,
            label_id=0.0 if label_list is None else 0,
            is_real_example=False)

    # An empty text_b (or one with no tokens) means a single sequence.
    tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
    tokens, input_ids, input_mask, segment_ids = pack_tokens(
        tokenizer.tokenize(example.text_a), tokens_b, max_seq_length,
        tokenizer)

    label_id = _label_id(example, label_list)
    if ex_index < 5:
        logging.info("*** Example ***")
        logging.info("guid: %s", example.guid)
        logging.info("tokens: %s", " ".join(tokens))
        logging.info("input_ids: %s", " ".join(str(x) for x in input_ids))
        logging.info("input_mask: %s", " ".join(str(x) for x in input_mask))
        logging.info("segment_ids: %s",
                     " ".join(str(x) for x in segment_ids))
        if label_list is None:
            logging.info("label: %s (value = %r)", example.label, label_id)
        else:
            logging.info("label: %s (id = %d)", example.label, label_id)

    return InputFeatures(input_ids=input_ids, input_mask=input_mask,
                         segment_ids=segment_ids, label_id=label_id,
                         is_real_example=True)


def convert_examples_to_features(examples, label_list, max_seq_length,
                                 tokenizer):
    """Converts a list of examples into a list of `InputFeatures`.

    Source: run_classifier.py `convert_examples_to_features` (in memory).
    Same arguments and errors as `convert_single_example`.
    """
    return list(_each_feature(examples, label_list, max_seq_length,
                              tokenizer))


def _each_feature(examples, label_list, max_seq_length, tokenizer):
    for ex_index, example in enumerate(examples):
        if ex_index % 10000 == 0:
            logging.info("Writing example %d of %d", ex_index, len(examples))
        yield convert_single_example(ex_index, example, label_list,
                                     max_seq_length, tokenizer)


def _feature_values(feature):
    """`InputFeatures` as the record spec's dict of value lists."""
    return {"input_ids": feature.input_ids,
            "input_mask": feature.input_mask,
            "segment_ids": feature.segment_ids,
            "label_ids": [feature.label_id],
            "is_real_example": [int(feature.is_real_example)]}


def file_based_convert_examples_to_features(examples, label_list,
                                            max_seq_length, tokenizer,
                                            output_file):
    """Converts examples and writes them to a TFRecord file.

    Source: run_classifier.py `file_based_convert_examples_to_features`.
    Records: bert_tf1.data.io.record_specs.classifier_record_spec (`label_ids` float
    when `label_list` is None); written atomically (`write_records`).

    Returns:
      The number of records written.

    Raises:
      UserError: see `convert_single_example` (no file is left behind).
    """
    spec = classifier_record_spec(max_seq_length,
                                  is_regression=label_list is None)
    features = _each_feature(examples, label_list, max_seq_length,
                             tokenizer)
    return write_records(output_file, spec, map(_feature_values, features))


def classifier_dataset(input_file, seq_length, is_training, batch_size,
                       is_regression=False, seed=None):
    """Reads a classifier TFRecord file into batches for Keras.

    Source: run_classifier.py `file_based_input_fn_builder` (see
    `RecordSpec.batched_dataset`; evaluation keeps the last partial batch).

    Args:
      input_file: a TFRecord path or list of paths.
      seq_length: int, the records' `max_seq_length`.
      is_training: bool.
      batch_size: int.
      is_regression: bool, True for float `label_ids`.
      seed: optional int, the shuffle seed.

    Raises:
      RecordFormatError: records of another max_seq_length (names file,
        feature and lengths) or of another task.

    Returns:
      tf.data.Dataset of `(features, label_ids, is_real_example)`: dict of
      int32 [B, seq_length] `input_ids`, `input_mask`, `segment_ids`; int32
      [B] (float32 for regression); float32 [B] (the sample weight).
    """
    spec = classifier_record_spec(seq_length, is_regression=is_regression)
    return spec.labelled_dataset(input_file, is_training, batch_size,
                                 FEATURE_KEYS[:3], weights=True, seed=seed)
