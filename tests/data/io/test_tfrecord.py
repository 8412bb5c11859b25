"""bert_tf1.data.io.tfrecord + record_specs: one spec per task for writer and reader."""
import collections
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.io import atomic
from bert_tf1.data.io.record_specs import (classifier_record_spec,
                                           pretraining_record_spec, squad_record_spec)
from bert_tf1.data.io.tfrecord import (RecordFileWriter, RecordFormatError,
                                       usable_record_files)
from bert_tf1.data.pretraining.dataset import expand_input_files, pretraining_dataset
from bert_tf1.data.squad.features import squad_dataset


def _int(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _as_written(original):
    # The original serializes with protobuf's default map order, seeded per
    # process (its bytes differ between runs); ours sorts the keys, so the
    # same Example always gives the same bytes.
    example = tf.train.Example(features=tf.train.Features(feature=original))
    reversed_keys = collections.OrderedDict(reversed(list(original.items())))
    assert tf.train.Example(features=tf.train.Features(
        feature=reversed_keys)).SerializeToString(deterministic=True) == (
            example.SerializeToString(deterministic=True))
    return example.SerializeToString(deterministic=True)


def test_classifier_bytes_equal_the_originals_encoding():
    # run_classifier.py file_based_convert_examples_to_features: an
    # OrderedDict in this key order.
    original = collections.OrderedDict()
    original["input_ids"] = _int([101, 7, 102, 0])
    original["input_mask"] = _int([1, 1, 1, 0])
    original["segment_ids"] = _int([0, 0, 0, 0])
    original["label_ids"] = _int([1])
    original["is_real_example"] = _int([1])
    expected = _as_written(original)
    ours = classifier_record_spec(4).serialize({
        "input_ids": [101, 7, 102, 0], "input_mask": [1, 1, 1, 0],
        "segment_ids": [0, 0, 0, 0], "label_ids": [1],
        "is_real_example": [1]})
    assert ours == expected


def test_squad_training_bytes_equal_the_originals_encoding():
    # run_squad.py FeatureWriter.process_feature.
    original = collections.OrderedDict()
    original["unique_ids"] = _int([1000000000])
    original["input_ids"] = _int([101, 5, 102])
    original["input_mask"] = _int([1, 1, 1])
    original["segment_ids"] = _int([0, 1, 1])
    original["start_positions"] = _int([1])
    original["end_positions"] = _int([2])
    original["is_impossible"] = _int([0])
    expected = _as_written(original)
    ours = squad_record_spec(3, is_training=True).serialize({
        "unique_ids": [1000000000], "input_ids": [101, 5, 102],
        "input_mask": [1, 1, 1], "segment_ids": [0, 1, 1],
        "start_positions": [1], "end_positions": [2], "is_impossible": [0]})
    assert ours == expected


def _pretraining_values(seq, preds):
    return {"input_ids": list(range(1, seq + 1)), "input_mask": [1] * seq,
            "segment_ids": [0] * seq, "masked_lm_positions": [1] * preds,
            "masked_lm_ids": [5] * preds, "masked_lm_weights": [1.0] * preds,
            "next_sentence_labels": [1]}


def test_reader_decodes_what_writer_wrote(tmp_path):
    spec = pretraining_record_spec(6, 2)
    path = tmp_path / "a.tfrecord"
    with RecordFileWriter(str(path)) as writer:
        writer.write(spec.serialize(_pretraining_values(6, 2)))
        writer.commit()
    record = next(iter(tf.data.TFRecordDataset(str(path))))
    parsed = spec.decode(record)
    assert parsed["input_ids"].dtype == tf.int32
    np.testing.assert_array_equal(parsed["input_ids"], [1, 2, 3, 4, 5, 6])
    np.testing.assert_allclose(parsed["masked_lm_weights"], [1.0, 1.0])
    assert parsed["next_sentence_labels"].shape == [1]
    assert os.listdir(tmp_path) == ["a.tfrecord"]


def test_writer_refuses_wrong_length():
    with pytest.raises(RecordFormatError, match="'input_ids' has 5 values, "
                       r"expected 6 \(max_seq_length=6\)"):
        values = _pretraining_values(6, 2)
        values["input_ids"] = values["input_ids"][:5]
        pretraining_record_spec(6, 2).serialize(values)


def test_reader_at_other_max_seq_length_names_file_feature_and_lengths(
        tmp_path):
    path = str(tmp_path / "train.tfrecord")
    with RecordFileWriter(path) as writer:
        writer.write(pretraining_record_spec(8, 2).serialize(
            _pretraining_values(8, 2)))
        writer.commit()
    with pytest.raises(RecordFormatError) as info:
        pretraining_dataset(path, 4, 2, batch_size=1, is_training=False)
    message = str(info.value)
    assert path in message and "'input_ids'" in message
    assert "length 8" in message and "max_seq_length is 4" in message
    assert "--max_seq_length=8" in message


def test_squad_prediction_reader_given_training_file_works_but_not_reverse(
        tmp_path):
    path = str(tmp_path / "eval.tf_record")
    spec = squad_record_spec(3, is_training=False)
    with RecordFileWriter(path) as writer:
        writer.write(spec.serialize({
            "unique_ids": [7], "input_ids": [1, 2, 3],
            "input_mask": [1, 1, 1], "segment_ids": [0, 0, 0]}))
        writer.commit()
    with pytest.raises(RecordFormatError, match="no feature 'start_positions'"):
        squad_dataset(path, 3, is_training=True, batch_size=1)
    with pytest.raises(RecordFormatError, match="length 3, but max_seq_length is 5"):
        squad_dataset(path, 5, is_training=False, batch_size=1)
    batch = next(iter(squad_dataset(path, 3, is_training=False, batch_size=1)))
    assert batch["unique_ids"].numpy().tolist() == [7]


def test_not_a_tfrecord_file_is_named(tmp_path):
    path = tmp_path / "x.tfrecord"
    path.write_bytes(b"this is not a tfrecord file at all, just text")
    with pytest.raises(RecordFormatError, match="x.tfrecord: not a readable"):
        pretraining_record_spec(4, 2).check_files(str(path))


def test_globs_skip_temp_files_and_folders(tmp_path):
    good = tmp_path / "a.tfrecord"
    good.write_bytes(b"")
    temp = atomic.temp_path_for(tmp_path / "b.tfrecord")
    open(temp, "wb").close()
    pattern = str(tmp_path / "*")
    assert expand_input_files(pattern) == [str(good)]
    kept, skipped = usable_record_files(tf.io.gfile.glob(pattern))
    assert kept == [str(good)] and skipped == [str(tmp_path / atomic.TEMP_DIR_NAME)]
    good.unlink()
    with pytest.raises(ValueError, match="only temp files or folders"):
        expand_input_files(pattern)
