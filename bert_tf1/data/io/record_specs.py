"""The TFRecord feature spec of each task (a bert_tf1.data.io.tfrecord.RecordSpec for
its writer and reader): the original's keys, dtypes, lengths and order."""
import numpy as np
import tensorflow as tf

from bert_tf1.data.io.tfrecord import RecordField, RecordFormatError, RecordSpec

SEQ = "max_seq_length"
PREDS = "max_predictions_per_seq"
CHOICES = "num_choices"
CHOICE_SEQ = "num_choices*max_seq_length"


def _inputs(length):
    """The int64 input_ids, input_mask, segment_ids fields of `length`."""
    return [RecordField(name, "int64", length)
            for name in ("input_ids", "input_mask", "segment_ids")]


def classifier_record_spec(max_seq_length, is_regression=False):
    """Classification records: input_ids, input_mask, segment_ids int64
    [max_seq_length]; label_ids int64 (float for regression) and
    is_real_example int64, [1] parsed as scalars.

    Source: run_classifier.py, file_based_convert_examples_to_features and
    file_based_input_fn_builder.
    """
    return RecordSpec("classifier", (
        *_inputs(SEQ),
        RecordField("label_ids", "float32" if is_regression else "int64",
                    scalar=True),
        RecordField("is_real_example", "int64", scalar=True),
    ), {SEQ: max_seq_length})


def squad_record_spec(max_seq_length, is_training):
    """SQuAD records, int64: unique_ids (scalar); input_ids, input_mask,
    segment_ids [max_seq_length]; training adds start_positions,
    end_positions (scalars) and is_impossible (written, not parsed).

    Source: run_squad.py, FeatureWriter.process_feature and
    input_fn_builder.
    """
    fields = [
        RecordField("unique_ids", "int64", scalar=True),
        *_inputs(SEQ),
    ]
    if is_training:
        fields += [
            RecordField("start_positions", "int64", scalar=True),
            RecordField("end_positions", "int64", scalar=True),
            RecordField("is_impossible", "int64", parsed=False),
        ]
    return RecordSpec("SQuAD", fields, {SEQ: max_seq_length})


def pretraining_record_spec(max_seq_length, max_predictions_per_seq):
    """Pre-training records: input_ids, input_mask, segment_ids int64
    [max_seq_length]; masked_lm_positions, masked_lm_ids int64 and
    masked_lm_weights float [max_predictions_per_seq]; next_sentence_labels
    int64 [1].

    Source: create_pretraining_data.py, write_instance_to_example_files;
    run_pretraining.py, input_fn_builder.
    """
    return RecordSpec("pre-training", (
        *_inputs(SEQ),
        RecordField("masked_lm_positions", "int64", PREDS),
        RecordField("masked_lm_ids", "int64", PREDS),
        RecordField("masked_lm_weights", "float32", PREDS),
        RecordField("next_sentence_labels", "int64", 1),
    ), {SEQ: max_seq_length, PREDS: max_predictions_per_seq})


def tagging_record_spec(max_seq_length):
    """Tagging records, one per window: input_ids, input_mask, segment_ids,
    label_ids int64 and label_weights float (1.0 where scored), each
    [max_seq_length].

    Source: none (the original has no NER); keys as run_classifier.py's.
    """
    return RecordSpec("tagging", (
        *_inputs(SEQ),
        RecordField("label_ids", "int64", SEQ),
        RecordField("label_weights", "float32", SEQ),
    ), {SEQ: max_seq_length})


class _ChoiceRecordSpec(RecordSpec):
    """A RecordSpec whose [num_choices, max_seq_length] features are stored
    flat: `to_example` flattens them, `decode` reshapes them back, and a
    length mismatch names both sizes."""

    def _is_choice_field(self, field):
        return field.length == CHOICE_SEQ

    def to_example(self, values):
        values = dict(values)
        for field in self.fields:
            if self._is_choice_field(field) and field.name in values:
                value = np.asarray(values[field.name])
                expected = (self.sizes[CHOICES], self.sizes[SEQ])
                if value.shape != expected:
                    raise RecordFormatError(
                        "%s record: feature %r has shape %s, expected "
                        "[num_choices, max_seq_length] = %s" % (
                            self.task, field.name, list(value.shape),
                            list(expected)))
                values[field.name] = value.reshape(-1).tolist()
        return super().to_example(values)

    def decode(self, records, batched=False):
        parsed = super().decode(records, batched=batched)
        shape = [self.sizes[CHOICES], self.sizes[SEQ]]
        for field in self.fields:
            if self._is_choice_field(field) and field.name in parsed:
                parsed[field.name] = tf.reshape(
                    parsed[field.name], ([-1] + shape) if batched else shape)
        return parsed

    def check_example(self, example, path):
        stored = example.features.feature
        choices, seq = self.sizes[CHOICES], self.sizes[SEQ]
        for field in self.fields:
            if (not self._is_choice_field(field) or field.name not in stored
                    or stored[field.name].WhichOneof("kind") != "int64_list"):
                continue  # The base class names what is wrong.
            found = len(stored[field.name].int64_list.value)
            if found == choices * seq:
                continue
            guesses = []
            if found % seq == 0:
                guesses.append("num_choices=%d with max_seq_length=%d" % (
                    found // seq, seq))
            if found % choices == 0:
                guesses.append("max_seq_length=%d with num_choices=%d" % (
                    found // choices, choices))
            raise RecordFormatError(
                "%s: feature %r has %d values, but num_choices x "
                "max_seq_length is %d x %d = %d; the records were written "
                "with other sizes%s: pass those or write the records again"
                % (path, field.name, found, choices, seq, choices * seq,
                   " (e.g. " + " or ".join(guesses) + ")" if guesses else ""))
        super().check_example(example, path)


def multiple_choice_record_spec(num_choices, max_seq_length):
    """Multiple-choice records (SWAG and the like), all int64.

    input_ids, input_mask, segment_ids: flat [num_choices * max_seq_length]
    on disk, [num_choices, max_seq_length] to `serialize` and from `decode`
    (a leading [batch] when batched); label_ids, is_real_example: scalars.

    Source: run_classifier.py's records with one row per choice.
    """
    if int(num_choices) < 1 or int(max_seq_length) < 1:
        raise ValueError("num_choices and max_seq_length must be >= 1, got "
                         "%r and %r" % (num_choices, max_seq_length))
    return _ChoiceRecordSpec("multiple-choice", (
        *_inputs(CHOICE_SEQ),
        RecordField("label_ids", "int64", scalar=True),
        RecordField("is_real_example", "int64", scalar=True),
    ), {SEQ: int(max_seq_length), CHOICES: int(num_choices),
        CHOICE_SEQ: int(num_choices) * int(max_seq_length)})


def embedding_record_spec(num_texts, max_seq_length):
    """Sentence-embedding records (run_embeddings.py): input_ids,
    input_mask, segment_ids int64, flat [num_texts * max_seq_length] on disk,
    [num_texts, max_seq_length] to `serialize` and from `decode` (each text
    packed alone, `[CLS] text [SEP]`); label_ids float32 (the score, 0 for
    in-batch-negative rows) and is_real_example int64, scalars.

    Source: none (the original trains no embedder); the layout of
    `multiple_choice_record_spec`, texts in the place of choices.
    """
    if int(num_texts) < 1 or int(max_seq_length) < 1:
        raise ValueError("num_texts and max_seq_length must be >= 1, got "
                         "%r and %r" % (num_texts, max_seq_length))
    return _ChoiceRecordSpec("sentence-embedding", (
        *_inputs(CHOICE_SEQ),
        RecordField("label_ids", "float32", scalar=True),
        RecordField("is_real_example", "int64", scalar=True),
    ), {SEQ: int(max_seq_length), CHOICES: int(num_texts),
        CHOICE_SEQ: int(num_texts) * int(max_seq_length)})
