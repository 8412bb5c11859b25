"""Pre-training input: corpus shards and line reading, the tf.data
pipeline over the records (eval and train, file patterns, sequence length),
and dynamic masking.
"""
import collections

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.pretraining.corpus import TextRange, iter_lines, plan_shards
from bert_tf1.data.pretraining.dataset import (expand_input_files,
                                               parse_pretraining_example,
                                               pretraining_dataset)
from bert_tf1.data.pretraining.dynamic_masking import DynamicMasking, restore_masked_tokens
from tests.helpers.pretraining_data import FIXTURES, read_records


# ---- corpus shards -----------------------------------------------------------------

def test_plan_shards_cuts_after_blank_lines(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"aaaa\nbbbb\n\ncccc\n\ndddd\neeee\n")
    shards = plan_shards([str(path)], shard_size_bytes=6)
    texts = [[line for r in shard for line in iter_lines(r)]
             for shard in shards]
    assert texts == [["aaaa\n", "bbbb\n", "\n"], ["cccc\n", "\n"],
                     ["dddd\n", "eeee\n"]]
    assert shards[1][0].first_line == 4
    assert plan_shards([str(path)], 0) == [[TextRange(str(path))]]


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine\nalso fine\nbad \xff byte\n")
    with pytest.raises(ValueError, match=r"bad\.txt:3: .*UTF-8"):
        list(iter_lines(TextRange(str(path))))


def test_lines_end_only_at_newline(tmp_path):
    path = tmp_path / "crlf.txt"
    path.write_bytes(b"a\r\nb\rc\n\xe2\x80\xa8d\n")
    assert list(iter_lines(TextRange(str(path)))) == [
        "a\r\n", "b\rc\n", "\u2028d\n"]


# ---- reading for training ------------------------------------------------------------

def test_pretraining_dataset_eval_and_train(fixtures_dir):
    path = str(fixtures_dir / "pretraining_data" / FIXTURES[0][0])
    records = read_records(path)
    eval_batches = pretraining_dataset(path, 128, 20, batch_size=50,
                                       is_training=False)
    batches = list(eval_batches.take(3))
    # 118 records, repeated: the third batch wraps around to the start.
    assert batches[0]["input_ids"].dtype == tf.int32
    assert batches[0]["masked_lm_weights"].dtype == tf.float32
    assert batches[0]["next_sentence_labels"].shape == (50, 1)
    np.testing.assert_array_equal(batches[0]["input_ids"][0],
                                  records[0]["input_ids"])
    np.testing.assert_array_equal(batches[2]["segment_ids"][18],
                                  records[0]["segment_ids"])
    train = pretraining_dataset([path, path], 128, 20, batch_size=7,
                                is_training=True)
    for batch in train.take(40):  # more than one pass: drops no shapes
        assert batch["input_ids"].shape == (7, 128)
        assert batch["masked_lm_positions"].dtype == tf.int32


def test_expand_input_files_errors(tmp_path):
    (tmp_path / "a.tfrecord").write_bytes(b"")
    assert expand_input_files(str(tmp_path / "*.tfrecord")) == [
        str(tmp_path / "a.tfrecord")]
    with pytest.raises(ValueError, match="matches no file"):
        expand_input_files(str(tmp_path / "a.tfrecord") + ","
                           + str(tmp_path / "missing*"))


def test_wrong_max_seq_length_fails_to_parse(fixtures_dir):
    path = str(fixtures_dir / "pretraining_data" / FIXTURES[0][0])
    raw = next(iter(tf.data.TFRecordDataset(path)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        parse_pretraining_example(raw, 512, 20)


# ---- dynamic masking --------------------------------------------------------------------

def test_restore_masked_tokens(fixtures_dir, sample_documents):
    path = str(fixtures_dir / "pretraining_data" / FIXTURES[0][0])
    batch = next(iter(pretraining_dataset(path, 128, 20, 16, False)))
    restored = restore_masked_tokens(
        batch["input_ids"], batch["masked_lm_positions"],
        batch["masked_lm_ids"], batch["masked_lm_weights"]).numpy()
    records = read_records(path)[:16]
    for row, record in zip(restored, records):
        k = int(sum(record["masked_lm_weights"]))
        expected = list(record["input_ids"])
        for p, label in zip(record["masked_lm_positions"][:k],
                            record["masked_lm_ids"][:k]):
            expected[p] = label
        assert list(row) == expected
        assert 103 not in expected  # no [MASK] left


def test_dynamic_masking_redraws_masks(fixtures_dir):
    path = str(fixtures_dir / "pretraining_data" / FIXTURES[0][0])
    masking = DynamicMasking(vocab_size=30522, mask_token_id=103,
                             cls_token_id=101, sep_token_id=102,
                             max_predictions_per_seq=20, masked_lm_prob=0.15)
    batch = next(iter(pretraining_dataset(path, 128, 20, 118, False)))
    original = restore_masked_tokens(
        batch["input_ids"], batch["masked_lm_positions"],
        batch["masked_lm_ids"], batch["masked_lm_weights"]).numpy()
    kinds = collections.Counter()
    first = masking(batch)
    second = masking(batch)
    assert not np.array_equal(first["masked_lm_positions"],
                              second["masked_lm_positions"])
    for key in batch:
        assert first[key].dtype == batch[key].dtype
        assert first[key].shape == batch[key].shape
    for i in range(118):
        n = int(batch["input_mask"][i].numpy().sum())
        k = int(first["masked_lm_weights"][i].numpy().sum())
        # tf_text's count: ceil(rate * maskable tokens) computed in float32
        # (so 100 maskable tokens give 16), capped.
        assert k == min(20, int(np.ceil(np.float32(n - 3)
                                        * np.float32(0.15))))
        positions = first["masked_lm_positions"][i].numpy()[:k]
        assert list(positions) == sorted(set(positions))
        assert all(0 < p < n - 1 and original[i][p] not in (101, 102)
                   for p in positions)
        np.testing.assert_array_equal(first["masked_lm_ids"][i][:k],
                                      original[i][positions])
        ids = first["input_ids"][i].numpy()
        unmasked = np.ones(128, bool)
        unmasked[positions] = False
        np.testing.assert_array_equal(ids[unmasked], original[i][unmasked])
        for p in positions:
            kinds["mask" if ids[p] == 103 else
                  "keep" if ids[p] == original[i][p] else "random"] += 1
    total = sum(kinds.values())
    assert kinds["mask"] / total == pytest.approx(0.8, abs=0.05)
    assert kinds["keep"] / total == pytest.approx(0.1, abs=0.04)
    # The segment and label features pass through unchanged.
    np.testing.assert_array_equal(first["segment_ids"], batch["segment_ids"])