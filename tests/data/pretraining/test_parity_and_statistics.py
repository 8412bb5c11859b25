"""Tests of the pre-training data library against the original's output and rules.

Ground truth: shared/fixtures/pretraining_data (TFRecords written by the
original create_pretraining_data.py for sample_text.txt, seed 12345) and the
rules of shared/reference/original_bert.md section 5. Expected values below
come from those rules, computed in the test independently of the code under
test.
"""
import random

import pytest
import tensorflow as tf

from bert_tf1.data.io.record_specs import pretraining_record_spec
from bert_tf1.data.pretraining import instances as instances_lib
from tests.helpers.pretraining_data import (
    FIXTURES, ORIGINAL_SPEC, check_records, features_of, read_records,
    write_instances)


# ---- parity with the original --------------------------------------------------

@pytest.mark.parametrize("name,whole_word_mask", FIXTURES)
def test_instances_equal_original_output(fixtures_dir, sample_documents,
                                         uncased_tokenizer, name,
                                         whole_word_mask):
    expected = read_records(fixtures_dir / "pretraining_data" / name)
    instances = instances_lib.create_training_instances(
        sample_documents, list(uncased_tokenizer.vocab.keys()),
        random.Random(12345), max_seq_length=128, dupe_factor=10,
        short_seq_prob=0.1, masked_lm_prob=0.15, max_predictions_per_seq=20,
        do_whole_word_mask=whole_word_mask)
    ours = features_of(instances, uncased_tokenizer)
    assert len(ours) == len(expected)  # 118 / 122
    for index, (mine, theirs) in enumerate(zip(ours, expected)):
        assert dict(mine) == theirs, "instance %d differs" % index


@pytest.mark.parametrize("name,whole_word_mask", FIXTURES)
def test_written_records_equal_fixture_content(
        tmp_path, fixtures_dir, sample_documents, uncased_tokenizer, name,
        whole_word_mask):
    # Byte equality with the fixture is impossible: the original's protobuf
    # writes the feature map in a per-process hash order (the two fixture
    # files use different key orders). Every record's content must be equal,
    # and re-serializing a fixture record with sorted keys gives our bytes.
    instances = instances_lib.create_training_instances(
        sample_documents, list(uncased_tokenizer.vocab.keys()),
        random.Random(12345), do_whole_word_mask=whole_word_mask)
    out = str(tmp_path / "ours.tfrecord")
    count = write_instances(
        instances, uncased_tokenizer, [out], 128, 20)
    ours = list(tf.data.TFRecordDataset(out).as_numpy_iterator())
    theirs = list(tf.data.TFRecordDataset(
        str(fixtures_dir / "pretraining_data" / name)).as_numpy_iterator())
    assert count == len(ours) == len(theirs)
    for mine, raw in zip(ours, theirs):
        example = tf.train.Example.FromString(raw)
        assert mine == example.SerializeToString(deterministic=True)


def test_our_records_parse_with_original_spec_and_fixture_with_ours(
        tmp_path, fixtures_dir, sample_documents, uncased_tokenizer):
    instances = instances_lib.create_training_instances(
        sample_documents, list(uncased_tokenizer.vocab.keys()),
        random.Random(7), dupe_factor=1)
    out = str(tmp_path / "ours.tfrecord")
    write_instances(instances, uncased_tokenizer, [out], 128, 20)
    ours = pretraining_record_spec(128, 20).parsing_spec()
    assert {k: (v.shape, v.dtype) for k, v in ours.items()} == {
        k: (v.shape, v.dtype) for k, v in ORIGINAL_SPEC.items()}
    fixture = str(fixtures_dir / "pretraining_data" / FIXTURES[0][0])
    for path, spec in ((out, ORIGINAL_SPEC), (fixture, ours)):
        for raw in tf.data.TFRecordDataset(path).take(5):
            parsed = tf.io.parse_single_example(raw, spec)
            assert parsed["input_ids"].shape == (128,)
            assert parsed["masked_lm_weights"].dtype == tf.float32


# ---- statistics over 10,000+ instances -------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("whole_word_mask", [False, True])
def test_corpus_statistics(corpus_documents, uncased_tokenizer,
                           whole_word_mask):
    # short_seq_prob=0: every chunk targets 125 tokens, so single-sentence
    # chunks (always random next) are rare and the share stays near 1/2.
    instances = instances_lib.create_training_instances(
        corpus_documents, list(uncased_tokenizer.vocab.keys()),
        random.Random(2024 + whole_word_mask), dupe_factor=3,
        short_seq_prob=0.0, do_whole_word_mask=whole_word_mask)
    assert len(instances) >= 10000
    stats = check_records(features_of(instances, uncased_tokenizer),
                          uncased_tokenizer.inv_vocab, corpus_documents,
                          whole_word_mask)
    # ~230k positions: one standard deviation is under 0.001.
    assert stats["mask"] == pytest.approx(0.8, abs=0.01)
    assert stats["keep"] == pytest.approx(0.1, abs=0.01)
    assert stats["random"] == pytest.approx(0.1, abs=0.01)
    # 1/2 for multi-sentence chunks, plus half the (few percent) of
    # single-sentence chunks; sd about 0.005.
    assert 0.49 <= stats["random_next_share"] <= 0.56
    assert stats["actual_next"] > 100 and stats["random_next"] > 100
    # 120 documents: a random B almost never is the true continuation.
    assert stats["random_but_continues"] <= 0.01 * stats["random_next"]
    if whole_word_mask:
        # Skipping groups that do not fit rarely leaves the count short.
        assert stats["mean_mask_ratio"] > 0.95


@pytest.mark.parametrize("name,whole_word_mask", FIXTURES)
def test_fixture_statistics(fixtures_dir, sample_documents, uncased_tokenizer,
                            name, whole_word_mask):
    records = read_records(fixtures_dir / "pretraining_data" / name)
    stats = check_records(records, uncased_tokenizer.inv_vocab,
                          sample_documents, whole_word_mask)
    # About 1,900 positions: one standard deviation is 0.009 (80%) and 0.007
    # (10%); the bounds are over 5 of them.
    assert stats["mask"] == pytest.approx(0.8, abs=0.05)
    assert stats["keep"] == pytest.approx(0.1, abs=0.04)
    assert stats["random"] == pytest.approx(0.1, abs=0.04)
    # ~120 instances from 3 documents: sd 0.046, plus single-sentence chunks.
    assert 0.35 <= stats["random_next_share"] <= 0.75
    assert stats["actual_next"] > 0

