"""The order in which shards' records are interleaved into the output files.

The local pipeline's order is tf.data's `interleave(TFRecordDataset,
cycle_length=min(num_shards, 64), block_length=1)` over the shard files; a
distributed run computes it from the record counts alone. tf.data visits
`cycle_length` slots in turn, once per round: an open shard gives its next
record, an exhausted one is closed (emitting nothing), an empty slot opens
the next shard and takes its first record. So a shard of n records opened in
round R on slot i emits in rounds R..R+n-1 and frees slot i for round R+n+1;
the next shard takes the slot free first (lowest index on ties). Records come
out sorted by (round, slot); record p goes to output file p % num_outputs.
"""
import dataclasses
import heapq

import numpy as np

# The pipeline's cycle_length cap (open files).
MAX_OPEN_SHARDS = 64

# Rounds per block of the order (about _BLOCK_ROUNDS * cycle_length * 4 B).
_BLOCK_ROUNDS = 1 << 14


@dataclasses.dataclass(frozen=True, eq=False)
class InterleavePlan:
    """Where each shard's records fall in the interleaved order (build with
    `from_counts`).

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
        """The plan for shards with `counts` (ints >= 0) records.

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

    def block_order(self, first_round, end_round):
        """int32 [n]: the shard of each record emitted in rounds
        [first_round, end_round), in order."""
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
        """Yields the merged order block by block.

        Yields:
          (block_end_round, position, order): one past the block's last
          round; the merged-order position of the block's first record;
          int32 [n], the shard of each record of the block, in order.
        """
        end_round = self.num_rounds if end_round is None else end_round
        # The records emitted in the rounds before first_round.
        position = int(np.clip(first_round - self.start_rounds, 0,
                               self.counts).sum())
        for start in range(first_round, end_round, _BLOCK_ROUNDS):
            block_end = min(start + _BLOCK_ROUNDS, end_round)
            order = self.block_order(start, block_end)
            yield block_end, position, order
            position += order.size

    def shard_positions(self, shard):
        """int64 [counts[shard]]: merged-order position of each record."""
        begin = int(self.start_rounds[shard])
        end = int(self.end_rounds[shard])
        parts = [np.zeros(0, np.int64)]
        for _, position, order in self.iter_blocks(begin, end):
            parts.append(position + np.nonzero(order == shard)[0])
        return np.concatenate(parts)

    def output_order(self, output_index, num_outputs):
        """Yields, block by block, (shards, finished): int32 [n], the shard of
        each record of output `output_index` (merged positions
        output_index + k * num_outputs); the shards newly finished."""
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
