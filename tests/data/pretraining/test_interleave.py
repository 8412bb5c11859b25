"""The merge order of sharded pre-training data, against tf.data itself.

bert_tf1.data.pretraining.interleave computes from record counts alone the order in
which `tf.data.Dataset.interleave(cycle_length=min(shards, 64),
block_length=1)` emits the shards' records (the local pipeline's merge
rule), so the Beam pipeline can reproduce it shard by shard. Expectations
come from running tf.data's interleave on datasets with those counts.
"""
import random

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.pretraining import interleave
from bert_tf1.data.pretraining.interleave import InterleavePlan


def tf_data_order(counts, cycle_length):
    """Shard index of each record, in tf.data's interleave order."""
    shards = tf.data.Dataset.from_tensor_slices(
        np.asarray(counts, np.int64)).enumerate()
    merged = shards.interleave(
        lambda index, count: tf.data.Dataset.from_tensors(index).repeat(
            count), cycle_length=cycle_length, block_length=1)
    return [int(x) for x in merged.as_numpy_iterator()]


def plan_order(plan):
    blocks = [order for _, _, order in plan.iter_blocks()]
    return np.concatenate(blocks).tolist() if blocks else []


CASES = [
    ([3], 64),
    ([0], 64),
    ([2, 5, 1], 64),                 # all open at once: round-robin
    ([4, 0, 0, 2, 7, 1, 3], 3),      # empty shards, slots reused
    ([1] * 9, 2),
    ([0, 0, 0], 2),
]


@pytest.mark.parametrize("counts,max_open", CASES)
def test_order_equals_tf_data_interleave(counts, max_open):
    plan = InterleavePlan.from_counts(counts, max_open)
    expected = tf_data_order(counts, min(len(counts), max_open))
    assert plan_order(plan) == expected
    assert plan.total == len(expected) == sum(counts)


def test_random_counts_with_small_blocks(monkeypatch):
    # Blocks of 2 rounds: every quantity crosses block boundaries.
    monkeypatch.setattr(interleave, "_BLOCK_ROUNDS", 2)
    rng = random.Random(3)
    for _ in range(25):
        counts = [rng.choice([0, 1, 2, 3, 6, 11]) for _ in
                  range(rng.randint(1, 10))]
        max_open = rng.randint(1, 5)
        plan = InterleavePlan.from_counts(counts, max_open)
        expected = tf_data_order(counts, min(len(counts), max_open))
        assert plan_order(plan) == expected, (counts, max_open)
        for shard in range(len(counts)):
            assert plan.shard_positions(shard).tolist() == [
                p for p, s in enumerate(expected) if s == shard]
        for num_outputs in (1, 2, 3):
            for output in range(num_outputs):
                got = [s for shards, _ in plan.output_order(output,
                                                            num_outputs)
                       for s in shards.tolist()]
                assert got == expected[output::num_outputs]


def test_more_shards_than_open_files():
    # 70 shards: the local path opens 64 at once, the rest wait for a slot.
    rng = random.Random(0)
    counts = [rng.randint(0, 9) for _ in range(70)]
    plan = InterleavePlan.from_counts(counts)
    assert plan.cycle_length == 64
    assert plan_order(plan) == tf_data_order(counts, 64)


def test_finished_shards_are_reported_once_after_their_last_record(
        monkeypatch):
    monkeypatch.setattr(interleave, "_BLOCK_ROUNDS", 1)
    counts = [2, 0, 3, 1]
    plan = InterleavePlan.from_counts(counts, 2)
    order = tf_data_order(counts, 2)
    seen, finished = [], []
    for shards, done in plan.output_order(0, 1):
        seen.extend(shards.tolist())
        for shard in done:
            # Nothing of a finished shard comes later.
            assert shard not in order[len(seen):]
        finished.extend(done)
    assert sorted(finished) == [0, 1, 2, 3]


def test_bad_counts_are_rejected():
    with pytest.raises(ValueError, match="at least one shard"):
        InterleavePlan.from_counts([])
    with pytest.raises(ValueError, match=">= 0"):
        InterleavePlan.from_counts([1, -1])
