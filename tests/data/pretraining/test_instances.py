"""The pre-training instance algorithm piece by piece (truncation, masking
draws, whole-word groups, documents, short inputs) and writing instances to
TFRecords, against the rules of shared/reference/original_bert.md section 5.
"""
import random

import pytest
import tensorflow as tf

from bert_tf1.data.pretraining import instances as instances_lib
from bert_tf1.data.pretraining import records as pretraining_records
from bert_tf1.data.tokenization import FullTokenizer
from tests.helpers.pretraining_data import write_instances


# ---- the algorithm's pieces ---------------------------------------------------------

class ScriptedRng:
    """Returns scripted random() values (and fails on other calls)."""

    def __init__(self, values):
        self.values = list(values)

    def random(self):
        return self.values.pop(0)


def test_truncate_seq_pair_trims_longer_side_front_or_back():
    a, b = [1, 2, 3], [4, 5, 6, 7, 8]
    # Longer B, front; B (4 > 3), back; tie goes to B, front.
    rng = ScriptedRng([0.1, 0.9, 0.2])
    instances_lib.truncate_seq_pair(a, b, 5, rng)
    assert (a, b) == ([1, 2, 3], [6, 7])
    assert rng.values == []
    a, b = [1, 2, 3, 4], [5]
    instances_lib.truncate_seq_pair(a, b, 3, ScriptedRng([0.7, 0.3]))
    assert (a, b) == ([2, 3], [5])


@pytest.mark.parametrize("num_tokens,expected", [
    (3, 1),     # 0.45 -> 0, then at least 1
    (10, 2),    # 1.5 -> 2 (half to even)
    (30, 4),    # 4.5 -> 4 (half to even; half-up would give 5)
    (50, 8),    # 7.5 -> 8
    (97, 15),   # 14.55
    (128, 19),  # 19.2
    (200, 20),  # capped at max_predictions_per_seq
])
def test_num_masked_lm_predictions_uses_bankers_rounding(num_tokens,
                                                         expected):
    assert instances_lib.num_masked_lm_predictions(
        num_tokens, 0.15, 20) == expected


def test_masking_decisions_follow_scripted_draws():
    # shuffle() leaves the order; the first position draws 0.9 then 0.3
    # (keep), the second 0.1 ([MASK]), the third 0.95, 0.7 then randint
    # (random word).
    class Rng(ScriptedRng):
        def shuffle(self, items):
            pass

        def randint(self, low, high):
            assert (low, high) == (0, 5)
            return 4

    tokens = ["[CLS]", "a", "b", "[SEP]", "c", "[SEP]"]
    vocab_words = ["v0", "v1", "v2", "v3", "v4", "v5"]
    rng = Rng([0.9, 0.3, 0.1, 0.95, 0.7])
    output, positions, labels = instances_lib.create_masked_lm_predictions(
        tokens, 0.5, 20, vocab_words, rng)
    assert positions == [1, 2, 4] and labels == ["a", "b", "c"]
    assert output == ["[CLS]", "a", "[MASK]", "[SEP]", "v4", "[SEP]"]
    assert rng.values == []


def test_whole_word_groups_and_skip_when_group_does_not_fit():
    tokens = ["[CLS]", "un", "##seen", "##s", "cat", "[SEP]", "##s", "[SEP]"]
    # Groups: [1, 2, 3], [4, 6] (the "##s" after [SEP] joins "cat", as in
    # the original). Count: round(8 * 0.25) = 2, so the 3-piece word can
    # never fit and "cat ... ##s" is masked whole.
    for seed in range(20):
        _, positions, _ = instances_lib.create_masked_lm_predictions(
            tokens, 0.25, 20, ["x"], random.Random(seed),
            do_whole_word_mask=True)
        assert positions == [4, 6]


def test_read_documents_blank_lines_and_empty_tokenizations(tiny_vocab):
    tokenizer = FullTokenizer(tiny_vocab, True)
    lines = ["\n", "The cat sat.\n", "  \t\n", "\n", "a dog ran\n",
             "\u0e38\n",        # combining mark only: tokenizes to nothing
             "\x00\ufffd\n",    # removed characters only
             "big\n", "\n", "\u0e38\n", "\n"]
    documents = instances_lib.read_documents(lines, tokenizer)
    assert documents == [[["the", "cat", "sat", "."]],
                         [["a", "dog", "ran"], ["big"]]]


def test_one_sentence_documents_are_all_random_next(tiny_vocab):
    tokenizer = FullTokenizer(tiny_vocab, True)
    documents = instances_lib.read_documents(
        ["the cat\n", "\n", "a dog ran\n", "\n", "big mat\n"], tokenizer)
    instances = instances_lib.create_training_instances(
        documents, list(tokenizer.vocab.keys()), random.Random(3),
        max_seq_length=16, dupe_factor=5, max_predictions_per_seq=3)
    assert len(instances) == 15
    assert all(instance.is_random_next for instance in instances)


def test_single_document_corpus_works(tiny_vocab):
    tokenizer = FullTokenizer(tiny_vocab, True)
    documents = instances_lib.read_documents(
        ["the cat sat on the mat .\n", "a dog ran .\n", "big dog\n"],
        tokenizer)
    instances = instances_lib.create_training_instances(
        documents, list(tokenizer.vocab.keys()), random.Random(5),
        max_seq_length=12, dupe_factor=20, max_predictions_per_seq=4)
    assert instances
    for instance in instances:
        assert len(instance.tokens) <= 12
        assert instance.tokens.count("[SEP]") >= 2


def test_too_short_max_seq_length_is_rejected(tiny_vocab):
    with pytest.raises(ValueError, match="max_seq_length"):
        instances_lib.create_training_instances(
            [[["a"]]], ["a"], random.Random(0), max_seq_length=4)


# ---- writing --------------------------------------------------------------------------

def test_round_robin_over_output_files(tmp_path, sample_documents,
                                       uncased_tokenizer):
    instances = instances_lib.create_training_instances(
        sample_documents, list(uncased_tokenizer.vocab.keys()),
        random.Random(1), dupe_factor=2)
    single = str(tmp_path / "all.tfrecord")
    write_instances(instances, uncased_tokenizer, [single], 128, 20)
    parts = [str(tmp_path / ("part%d.tfrecord" % i)) for i in range(3)]
    write_instances(instances, uncased_tokenizer, parts, 128, 20)
    everything = list(tf.data.TFRecordDataset(single).as_numpy_iterator())
    for i, part in enumerate(parts):
        assert list(tf.data.TFRecordDataset(part).as_numpy_iterator()) == (
            everything[i::3])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "all.tfrecord", "part0.tfrecord", "part1.tfrecord", "part2.tfrecord"]


def test_failed_write_leaves_no_file(tmp_path, uncased_tokenizer):
    bad = instances_lib.TrainingInstance(
        tokens=["[CLS]", "not-a-vocab-token", "[SEP]"], segment_ids=[0, 0, 0],
        masked_lm_positions=[], masked_lm_labels=[], is_random_next=False)
    out = tmp_path / "out.tfrecord"
    with pytest.raises(KeyError, match="not-a-vocab-token"):
        write_instances([bad], uncased_tokenizer, [str(out)], 128, 20)
    assert list(tmp_path.iterdir()) == []


def test_too_long_instance_is_rejected(uncased_tokenizer):
    instance = instances_lib.TrainingInstance(
        tokens=["[CLS]"] + ["the"] * 10 + ["[SEP]"], segment_ids=[0] * 12,
        masked_lm_positions=[1], masked_lm_labels=["the"],
        is_random_next=True)
    with pytest.raises(ValueError, match="max_seq_length is 8"):
        pretraining_records.instance_to_features(instance, uncased_tokenizer,
                                                 8, 2)

