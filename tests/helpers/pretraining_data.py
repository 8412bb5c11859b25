"""Shared helpers and fixtures of the pre-training data tests: the
original's record spec written out from the reference, record readers and
checks of the original's rules (shared/reference/original_bert.md section 5),
; the tokenizer, documents and vocab fixtures are in
tests/data/pretraining/conftest.py.
"""
import collections

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.io.tfrecord import RecordFileWriter
from bert_tf1.data.pretraining import instances as instances_lib
from bert_tf1.data.pretraining import records as pretraining_records
from bert_tf1.data.pretraining.corpus import TextRange, iter_lines
from bert_tf1.data.tokenization import FullTokenizer

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

def write_instances(instances, tokenizer, output_files, max_seq_length,
                    max_predictions_per_seq):
    """Writes TrainingInstances as the original's
    write_instance_to_example_files does (round robin); returns the count."""
    with RecordFileWriter(output_files) as writer:
        for instance in instances:
            features = pretraining_records.instance_to_features(
                instance, tokenizer, max_seq_length, max_predictions_per_seq)
            writer.write(pretraining_records.serialize_features(features))
        writer.commit()
    return writer.total_written


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





# The original's records for sample_text.txt (../shared/fixtures), and
# whether each was written with whole word masking.
FIXTURES = [("sample_text_seed12345.tfrecord", False),
            ("sample_text_seed12345_wwm.tfrecord", True)]
