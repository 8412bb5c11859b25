"""Tests for bert_tf1/data/tokenization/packing.py: the original's truncation and packing rules
(run_classifier.py _truncate_seq_pair / convert_single_example), in Python
and in-graph."""
import itertools

import pytest
import tensorflow as tf

from bert_tf1.data.tokenization import packing as packing
from bert_tf1.data.tokenization import full_tokenizer as tokenization

CLS, SEP = 101, 102


def _truncated(len_a, len_b, max_length):
    a = list(range(len_a))
    b = list(range(100, 100 + len_b))
    packing.truncate_seq_pair(a, b, max_length)
    return a, b


@pytest.mark.parametrize("len_a,len_b,max_length,kept_a,kept_b", [
    # Worked by hand from the original's rule: pop the last token of the
    # longer list; on a tie pop from B.
    (10, 10, 5, 3, 2),
    (10, 10, 6, 3, 3),
    (3, 10, 5, 3, 2),
    (10, 3, 5, 3, 2),
    (10, 2, 5, 3, 2),
    (10, 1, 5, 4, 1),
    (4, 4, 7, 4, 3),
    (5, 4, 7, 4, 3),
    (4, 5, 7, 4, 3),
    (2, 2, 10, 2, 2),
    (0, 5, 3, 0, 3),
    (5, 0, 3, 3, 0),
    (7, 7, 0, 0, 0),
    (1, 1, 1, 1, 0),
    (3, 1, 1, 1, 0),
])
def test_truncate_seq_pair_rule(len_a, len_b, max_length, kept_a, kept_b):
    a, b = _truncated(len_a, len_b, max_length)
    # Prefixes are kept (tokens come off the end).
    assert a == list(range(kept_a))
    assert b == list(range(100, 100 + kept_b))


def test_truncate_seq_pair_in_place_and_errors():
    a, b = [1, 2, 3], [4, 5]
    same_a, same_b = a, b
    packing.truncate_seq_pair(a, b, 2)
    assert same_a is a and same_b is b and a == [1] and b == [4]
    with pytest.raises(ValueError, match="max_length"):
        packing.truncate_seq_pair([1], [2], -1)


@pytest.fixture(scope="module")
def tokenizer(data_dir):
    return tokenization.FullTokenizer(
        data_dir / "bert_models" / "uncased_L-12_H-768_A-12" / "vocab.txt")


def test_pack_tokens_pair(tokenizer):
    tokens_a = tokenizer.tokenize("The cat sat.")
    tokens_b = tokenizer.tokenize("Dogs run")
    assert tokens_a == ["the", "cat", "sat", "."]
    assert tokens_b == ["dogs", "run"]
    packed = packing.pack_tokens(tokens_a, tokens_b, 12, tokenizer)
    assert packed.tokens == ["[CLS]", "the", "cat", "sat", ".", "[SEP]",
                             "dogs", "run", "[SEP]"]
    assert packed.input_ids == tokenizer.convert_tokens_to_ids(
        packed.tokens) + [0, 0, 0]
    assert packed.input_ids[0] == CLS and packed.input_ids[5] == SEP
    assert packed.input_mask == [1] * 9 + [0] * 3
    assert packed.segment_ids == [0] * 6 + [1] * 3 + [0] * 3
    # The caller's lists are not modified.
    assert tokens_a == ["the", "cat", "sat", "."]


def test_pack_tokens_truncation_and_single(tokenizer):
    tokens_a = ["a", "b", "c", "d", "e"]
    tokens_b = ["f", "g", "h"]
    packed = packing.pack_tokens(tokens_a, tokens_b, 8, tokenizer)
    # Budget 5: A 5,B 3 -> pop A, A, then tie pops B -> A 3, B 2.
    assert packed.tokens == ["[CLS]", "a", "b", "c", "[SEP]", "f", "g",
                             "[SEP]"]
    single = packing.pack_tokens(tokens_a, None, 4, tokenizer)
    assert single.tokens == ["[CLS]", "a", "b", "[SEP]"]
    assert single.segment_ids == [0, 0, 0, 0]


def test_empty_b_is_single_segment(tokenizer):
    # `if tokens_b:` in the original: [] counts as no B at all.
    packed = packing.pack_tokens(["a", "b", "c"], [], 4, tokenizer)
    assert packed.tokens == ["[CLS]", "a", "b", "[SEP]"]
    # Truncation that empties B drops B's [SEP] too.
    packed = packing.pack_tokens(["a", "b"], ["c"], 4, tokenizer)
    assert packed.tokens == ["[CLS]", "a", "[SEP]"]
    assert packed.input_mask == [1, 1, 1, 0]
    assert packed.segment_ids == [0, 0, 0, 0]


def test_max_seq_length_too_small(tokenizer):
    with pytest.raises(ValueError, match="at least 3"):
        packing.pack_tokens(["a"], ["b"], 2, tokenizer)
    with pytest.raises(ValueError, match="at least 2"):
        packing.pack_tokens(["a"], None, 1, tokenizer)
    with pytest.raises(ValueError, match="at least 3"):
        packing.InGraphPacker(2, CLS, SEP)(
            tf.ragged.constant([[1]]), tf.ragged.constant([[2]]))


def _ragged(rows):
    return tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1) if any(
        rows) else tf.RaggedTensor.from_row_lengths(
            tf.zeros([0], tf.int32), [0] * len(rows))


def _check_against_python(packer, rows_a, rows_b):
    got = packer(_ragged(rows_a), None if rows_b is None else _ragged(rows_b))
    got = {k: v.numpy().tolist() for k, v in got.items()}
    for i, a in enumerate(rows_a):
        b = None if rows_b is None else rows_b[i]
        want = packing.pack_ids(a, b, packer.max_seq_length, CLS, SEP)
        for key in ("input_ids", "input_mask", "segment_ids"):
            assert got[key][i] == want[key], (key, len(a), b and len(b))


@pytest.mark.parametrize("max_seq_length", list(range(3, 21)) + [128])
def test_in_graph_pairs_match_original_rule(max_seq_length):
    lengths = list(range(0, 14)) + [60, 125, 126, 200]
    rows_a, rows_b = [], []
    for len_a, len_b in itertools.product(lengths, lengths):
        rows_a.append(list(range(1000, 1000 + len_a)))
        rows_b.append(list(range(5000, 5000 + len_b)))
    packer = packing.InGraphPacker(max_seq_length, CLS, SEP)
    _check_against_python(packer, rows_a, rows_b)


@pytest.mark.parametrize("max_seq_length", [2, 3, 5, 16, 128])
def test_in_graph_single_matches_original_rule(max_seq_length):
    rows = [list(range(1000, 1000 + n)) for n in list(range(20)) + [200]]
    packer = packing.InGraphPacker(max_seq_length, CLS, SEP)
    _check_against_python(packer, rows, None)


def test_in_graph_dense_input_and_tf_data():
    packer = packing.InGraphPacker(6, CLS, SEP)
    dense = packer(tf.constant([[7, 8, 9, 10, 11]]))
    assert dense["input_ids"].numpy().tolist() == [[CLS, 7, 8, 9, 10, SEP]]
    assert all(v.dtype == tf.int32 for v in dense.values())
    a = tf.ragged.constant([[1, 2, 3], [4]], dtype=tf.int32)
    b = tf.ragged.constant([[5], [6, 7, 8, 9]], dtype=tf.int32)
    dataset = tf.data.Dataset.from_tensor_slices((a, b)).batch(2).map(packer)
    batch = next(iter(dataset))
    assert sorted(batch) == ["input_ids", "input_mask", "segment_ids"]
    assert batch["input_ids"].numpy().tolist() == [
        [CLS, 1, 2, SEP, 5, SEP], [CLS, 4, SEP, 6, 7, SEP]]
    assert batch["segment_ids"].numpy().tolist() == [
        [0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1]]
    assert batch["input_mask"].shape == (2, 6)
