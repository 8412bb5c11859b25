"""Sentence-embedding TFRecord files: each text of a row packed alone
(`[CLS] text [SEP]`, truncated to max_seq_length), written once and read
as `tf.data` batches of [batch, num_texts, max_seq_length] inputs
(`bert_tf1.data.io.record_specs.embedding_record_spec`)."""
from absl import logging

from bert_tf1.data.io.record_specs import embedding_record_spec
from bert_tf1.data.io.tfrecord import write_records
from bert_tf1.data.tokenization.packing import pack_tokens

FEATURE_KEYS = ("input_ids", "input_mask", "segment_ids")


def example_values(example, num_texts, max_seq_length, tokenizer):
    """The record dict of one EmbeddingExample: [num_texts, max_seq_length]
    int lists per input, label_ids (score or 0.0), is_real_example 1.

    Raises:
      ValueError: the example has another number of texts.
    """
    if len(example.texts) != num_texts:
        raise ValueError(f"{example.line}: {len(example.texts)} texts, "
                         f"expected {num_texts}")
    packed = [pack_tokens(tokenizer.tokenize(text), None, max_seq_length,
                          tokenizer) for text in example.texts]
    values = {key: [getattr(p, key) for p in packed] for key in FEATURE_KEYS}
    values["label_ids"] = [float(example.score or 0.0)]
    values["is_real_example"] = [1]
    return values


def write_embedding_records(examples, output_file, num_texts, max_seq_length,
                            tokenizer):
    """Writes the examples to one TFRecord file, atomically; returns the
    number of records.

    Raises:
      RecordFormatError, ValueError: a row that does not fit (no file is
        left).
    """
    def values():
        for index, example in enumerate(examples):
            if index % 10000 == 0:
                logging.info("Writing example %d of %d", index, len(examples))
            yield example_values(example, num_texts, max_seq_length,
                                 tokenizer)

    spec = embedding_record_spec(num_texts, max_seq_length)
    return write_records(output_file, spec, values())


def embedding_dataset(input_file, num_texts, seq_length, is_training,
                      batch_size, seed=None, include_is_real_example=False):
    """Batches of sentence-embedding records for Keras (training repeats,
    shuffles and drops the last partial batch: `RecordSpec.batched_dataset`).

    Returns:
      tf.data.Dataset of `(features, label_ids[, is_real_example])`:
      features a dict of int32 [batch, num_texts, seq_length] `input_ids`,
      `input_mask`, `segment_ids`; label_ids float32 [batch];
      is_real_example float32 [batch].

    Raises:
      RecordFormatError: records of other sizes, or not TFRecords.
    """
    spec = embedding_record_spec(num_texts, seq_length)
    return spec.labelled_dataset(input_file, is_training, batch_size,
                                 FEATURE_KEYS, include_is_real_example, seed)
