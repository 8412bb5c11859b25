"""The order in which shards' records are interleaved into the output files.

The local pipeline (data.pretraining.pipeline) merges the shards' records
with `tf.data.Dataset.from_tensor_slices(shard_files).interleave(
TFRecordDataset, cycle_length=min(num_shards, 64), block_length=1)`. A
distributed run (data.pretraining.beam_pipeline) cannot run that loop over
all records on one machine, so this module computes the same order from the
shards' record counts alone, without reading a record:

tf.data's interleave keeps `cycle_length` slots and visits them in turn, one
visit per slot per round. A visit to a slot with an open shard takes its
next record; if the shard is exhausted, the visit closes it and emits
nothing; a visit to an empty slot opens the next shard (in input order) and
takes its first record in the same visit. So a shard of n records that
opens in round R on slot i emits in rounds R .. R+n-1 and frees slot i for
round R+n+1; the next shard goes to the slot that is free first (lowest slot
index on ties, the order in which a round visits them). Records come out
sorted by (round, slot). tests/test_pretraining_beam.py checks this against
tf.data itself.

Record p of the merged order goes to output file p % num_outputs, at
position p // num_outputs (the original's round-robin writer).
"""
import dataclasses
import heapq

import numpy as np

# tf.data's interleave opens at most this many shards at once (file
# descriptors); data.pretraining.pipeline uses the same constant.
MAX_OPEN_SHARDS = 64

# Rounds per block when the order is computed block by block, so memory
# stays at about _BLOCK_ROUNDS * cycle_length * 4 bytes (<= 4 MiB).
_BLOCK_ROUNDS = 1 << 14


@dataclasses.dataclass(frozen=True, eq=False)
class InterleavePlan:
    """Where each shard's records fall in the interleaved order.

    Build with `InterleavePlan.from_counts`.

    Attributes:
      counts: int64 [num_shards], records per shard.
      cycle_length: int, the number of slots (min(num_shards, 64)).
      start_rounds: int64 [num_shards], the round in which each shard
        emits its first record (non-decreasing in the shard index).
      slots: int64 [num_shards], the slot each shard occupies.
    """
    counts: np.ndarray
    cycle_length: int
    start_rounds: np.ndarray
    slots: np.ndarray

    @classmethod
    def from_counts(cls, counts, max_open_shards=MAX_OPEN_SHARDS):
        """The plan for shards with `counts` records (in shard order).

        Args:
          counts: sequence of int >= 0, one per shard (at least one shard).
          max_open_shards: int, the interleave's cycle_length cap.

        Returns:
          InterleavePlan.

        Raises:
          ValueError: no shard, or a negative count.
        """
        counts = np.asarray(counts, dtype=np.int64)
        if counts.ndim != 1 or counts.size == 0:
            raise ValueError("an interleave needs at least one shard")
        if (counts < 0).any():
            raise ValueError("record counts must be >= 0, got %s"
                             % counts.tolist())
        cycle_length = int(min(counts.size, max_open_shards))
        # Heap of (round the slot is free from, slot index).
        free = [(0, slot) for slot in range(cycle_length)]
        start_rounds = np.empty_like(counts)
        slots = np.empty_like(counts)
        for shard, count in enumerate(counts.tolist()):
            start, slot = heapq.heappop(free)
            start_rounds[shard] = start
            slots[shard] = slot
            # Emits in `count` rounds, then one round to notice the end.
            heapq.heappush(free, (start + count + 1, slot))
        return cls(counts, cycle_length, start_rounds, slots)

    @property
    def num_shards(self):
        return int(self.counts.size)

    @property
    def total(self):
        """Number of records in all shards."""
        return int(self.counts.sum())

    @property
    def end_rounds(self):
        """int64 [num_shards], one past each shard's last emitting round."""
        return self.start_rounds + self.counts

    @property
    def num_rounds(self):
        """Rounds until the last record is emitted."""
        return int(self.end_rounds.max())

    def records_before_round(self, round_index):
        """Number of records emitted in rounds before `round_index`."""
        return int(np.clip(round_index - self.start_rounds, 0,
                           self.counts).sum())

    def block_order(self, first_round, end_round):
        """Shard of each record emitted in rounds [first_round, end_round).

        Returns:
          int32 [n], the shard index of each of those records, in order.
        """
        grid = np.full((end_round - first_round, self.cycle_length), -1,
                       np.int32)
        active = np.nonzero((self.start_rounds < end_round)
                            & (self.end_rounds > first_round))[0]
        for shard in active.tolist():
            begin = max(int(self.start_rounds[shard]), first_round)
            end = min(int(self.end_rounds[shard]), end_round)
            grid[begin - first_round:end - first_round,
                 self.slots[shard]] = shard
        flat = grid.ravel()
        return flat[flat >= 0]

    def iter_blocks(self, first_round=0, end_round=None):
        """Yields the merged order block by block (a few MiB at a time).

        Args:
          first_round, end_round: the rounds to cover (default: all).

        Yields:
          (block_end_round, position, order): one past the block's last
          round; the merged-order position of the block's first record;
          int32 [n], the shard of each record of the block, in order.
        """
        end_round = self.num_rounds if end_round is None else end_round
        position = self.records_before_round(first_round)
        for start in range(first_round, end_round, _BLOCK_ROUNDS):
            block_end = min(start + _BLOCK_ROUNDS, end_round)
            order = self.block_order(start, block_end)
            yield block_end, position, order
            position += order.size

    def shard_positions(self, shard):
        """Merged-order positions of a shard's records.

        Returns:
          int64 [counts[shard]], increasing: where record k of the shard
          lands in the merged order.
        """
        begin = int(self.start_rounds[shard])
        end = int(self.end_rounds[shard])
        parts = [np.zeros(0, np.int64)]
        for _, position, order in self.iter_blocks(begin, end):
            parts.append(position + np.nonzero(order == shard)[0])
        return np.concatenate(parts)

    def output_order(self, output_index, num_outputs):
        """Yields, block by block, the shard of each record of one output.

        Output file `output_index` of `num_outputs` receives the merged
        positions output_index, output_index + num_outputs, ...

        Yields:
          (shards, finished): int32 [n], the shard of each of the output's
          records in the block, in order; list of int, the shards whose
          last record lies in this block or before (not yielded before),
          so their readers can be closed.
        """
        ends = self.end_rounds
        by_end = np.argsort(ends, kind="stable")
        done = 0
        for block_end, position, order in self.iter_blocks():
            offset = (output_index - position) % num_outputs
            finished = []
            while done < by_end.size and ends[by_end[done]] <= block_end:
                finished.append(int(by_end[done]))
                done += 1
            yield order[offset::num_outputs], finished
