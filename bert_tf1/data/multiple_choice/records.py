"""Multiple-choice TFRecord files: writing features, reading `tf.data` batches
(bert_tf1.data.io.record_specs.multiple_choice_record_spec).

Source: run_classifier.py file_based_convert_examples_to_features and
file_based_input_fn_builder, with one row per choice.
"""
from absl import logging

from bert_tf1.data.io.record_specs import multiple_choice_record_spec
from bert_tf1.data.io.tfrecord import write_records
from bert_tf1.data.multiple_choice.features import (FEATURE_KEYS,
                                                    convert_example_to_features)
from bert_tf1.data.io.dynamic_padding import PaddingInputExample


def _record_values(feature):
    values = {key: getattr(feature, key) for key in FEATURE_KEYS}
    values["label_ids"] = [int(feature.label_ids)]
    values["is_real_example"] = [int(feature.is_real_example)]
    return values


def write_feature_records(features, output_file, num_choices, max_seq_length):
    """Writes MultipleChoiceFeatures to one TFRecord file, atomically.

    Returns:
      int, the number of records written.

    Raises:
      RecordFormatError: a feature of another shape (no file is left).
    """
    spec = multiple_choice_record_spec(num_choices, max_seq_length)
    return write_records(output_file, spec, map(_record_values, features))


def file_based_convert_examples_to_features(examples, max_seq_length,
                                            tokenizer, output_file,
                                            num_choices=None):
    """Packs examples and writes them to a TFRecord file, one at a time.

    `num_choices` defaults to the first real example's count.

    Returns:
      int, the number of records written.

    Raises:
      ValueError: see features.convert_example_to_features (no file left).
    """
    examples = list(examples)
    if num_choices is None:
        real = [e for e in examples
                if not isinstance(e, PaddingInputExample)]
        if not real:
            raise ValueError("no real example to take num_choices from; "
                             "pass num_choices")
        num_choices = len(real[0].endings)

    def features():
        for index, example in enumerate(examples):
            if index % 10000 == 0:
                logging.info("Writing example %d of %d", index, len(examples))
            yield convert_example_to_features(example, max_seq_length,
                                              tokenizer, num_choices)

    return write_feature_records(features(), output_file, num_choices,
                                 max_seq_length)


def multiple_choice_dataset(input_file, num_choices, seq_length, is_training,
                            batch_size, seed=None,
                            include_is_real_example=False):
    """Reads multiple-choice TFRecords into batches for Keras.

    As RecordSpec.batched_dataset (run_classifier.py's
    file_based_input_fn_builder).

    Args:
      input_file: a TFRecord path or list of paths.
      num_choices, seq_length: int, the sizes of the records.
      is_training: bool.
      batch_size: int.
      seed: optional int, the shuffle seed.
      include_is_real_example: also yield is_real_example.

    Returns:
      tf.data.Dataset of `(features, label_ids)`, or `(features, label_ids,
      is_real_example)`: `features` a dict of int32 [batch, num_choices,
      seq_length] `input_ids`, `input_mask`, `segment_ids`; `label_ids` int32
      [batch]; `is_real_example` float32 [batch].

    Raises:
      RecordFormatError: records of other sizes (names file and sizes), a
        missing feature, or not a TFRecord file.
    """
    spec = multiple_choice_record_spec(num_choices, seq_length)
    return spec.labelled_dataset(input_file, is_training, batch_size,
                                 FEATURE_KEYS, include_is_real_example, seed)
