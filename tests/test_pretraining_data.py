"""Tests of the pre-training data library against the original's output and rules.

Ground truth: shared/fixtures/pretraining_data (TFRecords written by the
original create_pretraining_data.py for sample_text.txt, seed 12345) and the
rules of shared/reference/original_bert.md section 5. Expected values below
come from those rules, computed in the test independently of the code under
test.
"""
import collections
import random

import numpy as np
import pytest
import tensorflow as tf

from data.pretraining import instances as instances_lib
from data.pretraining import records as pretraining_records
from data.pretraining.dynamic_masking import DynamicMasking, restore_masked_tokens
from data.pretraining.corpus import TextRange, iter_lines, plan_shards
from data.pretraining.dataset import (expand_input_files,
                                      parse_pretraining_example,
                                      pretraining_dataset)
from data.tokenization import FullTokenizer

MAX_SEQ_LENGTH = 128
MAX_PREDICTIONS = 20
MASKED_LM_PROB = 0.15

# The original run_pretraining.py spec, written out from the reference
# (section 5/6), not taken from the code under test.
ORIGINAL_SPEC = {
    "input_ids": tf.io.FixedLenFeature([128], tf.int64),
    "input_mask": tf.io.FixedLenFeature([128], tf.int64),
    "segment_ids": tf.io.FixedLenFeature([128], tf.int64),
    "masked_lm_positions": tf.io.FixedLenFeature([20], tf.int64),
    "masked_lm_ids": tf.io.FixedLenFeature([20], tf.int64),
    "masked_lm_weights": tf.io.FixedLenFeature([20], tf.float32),
    "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
}
INT_KEYS = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions",
            "masked_lm_ids", "next_sentence_labels")


# ---- helpers -----------------------------------------------------------------

def read_records(path):
    """Records of a TFRecord file as dicts key -> list (proto kinds checked)."""
    records = []
    for raw in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
        feature = tf.train.Example.FromString(raw).features.feature
        record = {}
        for key in INT_KEYS:
            assert feature[key].WhichOneof("kind") == "int64_list", key
            record[key] = list(feature[key].int64_list.value)
        assert feature["masked_lm_weights"].WhichOneof("kind") == "float_list"
        record["masked_lm_weights"] = list(
            feature["masked_lm_weights"].float_list.value)
        assert set(feature.keys()) == set(ORIGINAL_SPEC)
        records.append(record)
    return records


def expected_num_predictions(num_tokens):
    # The original's rule, Python 3 round (half to even), n counts specials.
    return min(MAX_PREDICTIONS, max(1, int(round(num_tokens * MASKED_LM_PROB))))


def sentence_index(documents):
    index = collections.defaultdict(list)
    for d, document in enumerate(documents):
        for s, sentence in enumerate(document):
            index[tuple(sentence)].append((d, s))
    return index


def whole_sentence_runs(tokens, documents, index, start=None):
    """End points (doc, next sentence) of runs of whole sentences == tokens."""
    starts = start if start is not None else [
        pos for sentence_len in range(1, len(tokens) + 1)
        for pos in index.get(tuple(tokens[:sentence_len]), [])]
    ends = []
    for d, s in starts:
        consumed = 0
        while consumed < len(tokens) and s < len(documents[d]):
            sentence = documents[d][s]
            if tokens[consumed:consumed + len(sentence)] != sentence:
                break
            consumed += len(sentence)
            s += 1
        if consumed == len(tokens):
            ends.append((d, s))
    return ends


def wwm_groups(tokens):
    # The original's candidate groups: a "##" piece joins the group before
    # it; [CLS]/[SEP] are never candidates.
    groups = []
    for i, token in enumerate(tokens):
        if token in ("[CLS]", "[SEP]"):
            continue
        if groups and token.startswith("##"):
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def check_records(records, inv_vocab, documents, whole_word_mask):
    """Checks every record against the original's rules; returns statistics."""
    vocab = {token: i for i, token in inv_vocab.items()}
    cls_id, sep_id, mask_id = vocab["[CLS]"], vocab["[SEP]"], vocab["[MASK]"]
    index = sentence_index(documents)
    kinds = collections.Counter()
    labels = []
    checked_pairs = collections.Counter()
    for record in records:
        n = sum(record["input_mask"])
        assert record["input_mask"] == [1] * n + [0] * (MAX_SEQ_LENGTH - n)
        ids = record["input_ids"]
        assert ids[n:] == [0] * (MAX_SEQ_LENGTH - n)
        k = int(sum(record["masked_lm_weights"]))
        assert record["masked_lm_weights"] == [1.0] * k + [0.0] * (
            MAX_PREDICTIONS - k)
        positions = record["masked_lm_positions"][:k]
        masked_ids = record["masked_lm_ids"][:k]
        assert record["masked_lm_positions"][k:] == [0] * (MAX_PREDICTIONS - k)
        assert record["masked_lm_ids"][k:] == [0] * (MAX_PREDICTIONS - k)
        assert positions == sorted(set(positions))

        original = list(ids[:n])
        for position, label in zip(positions, masked_ids):
            original[position] = label
        seps = [i for i, t in enumerate(original) if t == sep_id]
        assert original[0] == cls_id and original.count(cls_id) == 1
        assert len(seps) == 2 and seps[1] == n - 1
        assert record["segment_ids"] == ([0] * (seps[0] + 1)
                                         + [1] * (n - 1 - seps[0])
                                         + [0] * (MAX_SEQ_LENGTH - n))
        assert not set(positions) & {0, seps[0], n - 1}
        assert all(0 < p < n for p in positions)

        if whole_word_mask:
            assert k <= expected_num_predictions(n)
            tokens = [inv_vocab[t] for t in original]
            masked = set(positions)
            for group in wwm_groups(tokens):
                covered = masked & set(group)
                assert not covered or covered == set(group), (tokens, group)
        else:
            assert k == expected_num_predictions(n), (n, k)
        checked_pairs["masks"] += k / expected_num_predictions(n)

        for position, label in zip(positions, masked_ids):
            if ids[position] == mask_id:
                kinds["mask"] += 1
            elif ids[position] == label:
                kinds["keep"] += 1
            else:
                kinds["random"] += 1

        label = record["next_sentence_labels"][0]
        assert label in (0, 1)
        labels.append(label)
        # Untruncated pairs (fewer than max_seq_length - 3 text tokens) are
        # whole sentences; the actual-next B continues A in its document.
        if n - 3 < MAX_SEQ_LENGTH - 3:
            a = [inv_vocab[t] for t in original[1:seps[0]]]
            b = [inv_vocab[t] for t in original[seps[0] + 1:n - 1]]
            a_ends = whole_sentence_runs(a, documents, index)
            assert a_ends, "A is not a run of whole sentences: %s" % a
            assert whole_sentence_runs(b, documents, index), b
            continues = bool(whole_sentence_runs(b, documents, index,
                                                 start=a_ends))
            if label == 0:
                assert continues, (a, b)
                checked_pairs["actual_next"] += 1
            else:
                checked_pairs["random_next"] += 1
                checked_pairs["random_but_continues"] += continues
    total = sum(kinds.values())
    return {
        "mask": kinds["mask"] / total,
        "keep": kinds["keep"] / total,
        "random": kinds["random"] / total,
        "positions": total,
        "random_next_share": float(np.mean(labels)),
        "mean_mask_ratio": checked_pairs["masks"] / len(records),
        **checked_pairs,
    }


def features_of(instances, tokenizer):
    return [pretraining_records.instance_to_features(
        instance, tokenizer, MAX_SEQ_LENGTH, MAX_PREDICTIONS)
        for instance in instances]


# ---- fixtures ------------------------------------------------------------------

@pytest.fixture(scope="module")
def uncased_tokenizer(data_dir):
    return FullTokenizer(
        data_dir / "bert_models/uncased_L-12_H-768_A-12/vocab.txt", True)


@pytest.fixture(scope="module")
def sample_documents(data_dir, uncased_tokenizer):
    path = str(data_dir / "pretraining/sample_text.txt")
    return instances_lib.read_documents(iter_lines(TextRange(path)),
                                        uncased_tokenizer)


@pytest.fixture(scope="module")
def corpus_documents(data_dir, uncased_tokenizer):
    path = str(data_dir / "pretraining/corpus.txt")
    return instances_lib.read_documents(iter_lines(TextRange(path)),
                                        uncased_tokenizer)


@pytest.fixture
def tiny_vocab(tmp_path):
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat",
             "sat", "on", "mat", "a", "dog", "ran", ".", "un", "##seen",
             "##s", "big"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return path


FIXTURES = [("sample_text_seed12345.tfrecord", False),
            ("sample_text_seed12345_wwm.tfrecord", True)]


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
    count = pretraining_records.write_instances(
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
    pretraining_records.write_instances(instances, uncased_tokenizer, [out],
                                        128, 20)
    ours = pretraining_records.pretraining_feature_spec(128, 20)
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
    pretraining_records.write_instances(instances, uncased_tokenizer,
                                        [single], 128, 20)
    parts = [str(tmp_path / ("part%d.tfrecord" % i)) for i in range(3)]
    pretraining_records.write_instances(instances, uncased_tokenizer, parts,
                                        128, 20)
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
        pretraining_records.write_instances([bad], uncased_tokenizer,
                                            [str(out)], 128, 20)
    assert list(tmp_path.iterdir()) == []


def test_too_long_instance_is_rejected(uncased_tokenizer):
    instance = instances_lib.TrainingInstance(
        tokens=["[CLS]"] + ["the"] * 10 + ["[SEP]"], segment_ids=[0] * 12,
        masked_lm_positions=[1], masked_lm_labels=["the"],
        is_random_next=True)
    with pytest.raises(ValueError, match="max_seq_length is 8"):
        pretraining_records.instance_to_features(instance, uncased_tokenizer,
                                                 8, 2)


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
