"""The TFRecord feature spec of each task, in one place.

Each function returns a data.io.tfrecord.RecordSpec from which both the
writer and the reader of that task are built. Keys, dtypes, lengths and key
order are the original's, so files go both ways between google-research/bert
and this project. Every writer sorts the feature-map keys (see
RecordSpec.serialize_example), so a rerun writes the same bytes.
"""
from data.io.tfrecord import RecordField, RecordSpec

__all__ = ["classifier_record_spec", "squad_record_spec",
           "pretraining_record_spec", "tagging_record_spec"]

SEQ = "max_seq_length"
PREDS = "max_predictions_per_seq"


def classifier_record_spec(max_seq_length, is_regression=False):
    """Sentence(-pair) classification records.

    input_ids, input_mask, segment_ids: int64 [max_seq_length]; label_ids:
    int64 [1] (float [1] for regression, e.g. STS-B), parsed as a scalar;
    is_real_example: int64 [1], parsed as a scalar.

    Source: run_classifier.py, file_based_convert_examples_to_features and
    file_based_input_fn_builder.
    """
    return RecordSpec("classifier", (
        RecordField("input_ids", "int64", SEQ),
        RecordField("input_mask", "int64", SEQ),
        RecordField("segment_ids", "int64", SEQ),
        RecordField("label_ids", "float32" if is_regression else "int64",
                    scalar=True),
        RecordField("is_real_example", "int64", scalar=True),
    ), {SEQ: max_seq_length})


def squad_record_spec(max_seq_length, is_training):
    """SQuAD records (all int64).

    unique_ids: [1] parsed as a scalar; input_ids, input_mask, segment_ids:
    [max_seq_length]; training adds start_positions, end_positions (scalars)
    and is_impossible (written, not parsed, as the original).

    Source: run_squad.py, FeatureWriter.process_feature and
    input_fn_builder.
    """
    fields = [
        RecordField("unique_ids", "int64", scalar=True),
        RecordField("input_ids", "int64", SEQ),
        RecordField("input_mask", "int64", SEQ),
        RecordField("segment_ids", "int64", SEQ),
    ]
    if is_training:
        fields += [
            RecordField("start_positions", "int64", scalar=True),
            RecordField("end_positions", "int64", scalar=True),
            RecordField("is_impossible", "int64", parsed=False),
        ]
    return RecordSpec("SQuAD", fields, {SEQ: max_seq_length})


def pretraining_record_spec(max_seq_length, max_predictions_per_seq):
    """Pre-training records.

    input_ids, input_mask, segment_ids: int64 [max_seq_length];
    masked_lm_positions, masked_lm_ids: int64 [max_predictions_per_seq];
    masked_lm_weights: float [max_predictions_per_seq];
    next_sentence_labels: int64 [1].

    Source: create_pretraining_data.py, write_instance_to_example_files;
    run_pretraining.py, input_fn_builder.
    """
    return RecordSpec("pre-training", (
        RecordField("input_ids", "int64", SEQ),
        RecordField("input_mask", "int64", SEQ),
        RecordField("segment_ids", "int64", SEQ),
        RecordField("masked_lm_positions", "int64", PREDS),
        RecordField("masked_lm_ids", "int64", PREDS),
        RecordField("masked_lm_weights", "float32", PREDS),
        RecordField("next_sentence_labels", "int64", 1),
    ), {SEQ: max_seq_length, PREDS: max_predictions_per_seq})


def tagging_record_spec(max_seq_length):
    """Sequence-tagging (NER) records, one per window of a document.

    input_ids, input_mask, segment_ids, label_ids: int64 [max_seq_length];
    label_weights: float [max_seq_length], 1.0 at the first word piece of
    each word scored in this window, else 0.0.

    Source: no original script (google-research/bert has no NER); the keys
    follow run_classifier.py's and the weights pre-training's
    masked_lm_weights. Built by data.tagging.features.
    """
    return RecordSpec("tagging", (
        RecordField("input_ids", "int64", SEQ),
        RecordField("input_mask", "int64", SEQ),
        RecordField("segment_ids", "int64", SEQ),
        RecordField("label_ids", "int64", SEQ),
        RecordField("label_weights", "float32", SEQ),
    ), {SEQ: max_seq_length})
