"""One shard's work: its seed, its instances and its serialized records.

Every runner (the local pool, Beam) builds a shard with `build_shard_records`
and `shard_seed(random_seed, shard_index)`, so a shard's records are the same
bytes whichever runner made them; one shard is the original's whole run.
"""
import dataclasses
import hashlib
import random

from bert_tf1.data.pretraining import corpus as pretraining_corpus
from bert_tf1.data.pretraining import instances as pretraining_instances
from bert_tf1.data.pretraining import records as pretraining_records

# Shares of a shard's work (reading, building) for the progress bar.
READ_SHARE = 0.6
BUILD_SHARE = 0.3


def write_progress(written, total):
    """The shard's progress fraction after `written` of `total` records."""
    return READ_SHARE + BUILD_SHARE + (
        1 - READ_SHARE - BUILD_SHARE) * written / max(total, 1)


def shard_seed(random_seed, shard_index):
    """random_seed for shard 0, else 63 bits of
    sha256("<random_seed>:<shard_index>")."""
    if shard_index == 0:
        return random_seed
    digest = hashlib.sha256(
        ("%d:%d" % (random_seed, shard_index)).encode("ascii")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclasses.dataclass
class ShardRecords:
    """One shard's serialized records, with its counts.

    Attributes:
      documents: int, non-empty documents read.
      instances: int, instances built (= records).
      records: iterator of bytes, serialized tf.train.Examples in order.
    """
    documents: int
    instances: int
    records: object


def build_shard_records(shard, tokenizer, options, seed, progress=None):
    """ShardRecords of one shard (a list of TextRange), built with
    PretrainingOptions `options` and `random.Random(seed)`; `progress` is
    an optional callable(fraction).

    Raises:
      TextFileError: a line of the shard is not UTF-8 (names file and line).

    Source: create_pretraining_data.py, create_training_instances and
    write_instance_to_example_files (the features of each instance).
    """
    lines = pretraining_corpus.iter_shard_lines(shard)
    if progress is not None:
        lines = _count_progress(lines, pretraining_corpus.shard_size(shard),
                                progress)
    documents = pretraining_instances.read_documents(lines, tokenizer)

    def build_progress(done, total):
        if progress is not None:
            progress(READ_SHARE + BUILD_SHARE * done / max(total, 1))

    instances = pretraining_instances.create_training_instances(
        documents, list(tokenizer.vocab.keys()), random.Random(seed),
        max_seq_length=options.max_seq_length,
        dupe_factor=options.dupe_factor,
        short_seq_prob=options.short_seq_prob,
        masked_lm_prob=options.masked_lm_prob,
        max_predictions_per_seq=options.max_predictions_per_seq,
        do_whole_word_mask=options.do_whole_word_mask,
        progress=build_progress)
    return ShardRecords(len(documents), len(instances),
                        serialized_records(instances, tokenizer, options))


def _count_progress(lines, total_bytes, progress):
    # Characters approximate bytes closely enough for a progress bar.
    seen = 0
    for line in lines:
        seen += len(line)
        if total_bytes:
            progress(READ_SHARE * min(seen / total_bytes, 1.0))
        yield line


def serialized_records(instances, tokenizer, options):
    """Yields each instance as a serialized tf.train.Example (bytes).

    Source: create_pretraining_data.py, write_instance_to_example_files.
    """
    for instance in instances:
        features = pretraining_records.instance_to_features(
            instance, tokenizer, options.max_seq_length,
            options.max_predictions_per_seq)
        yield pretraining_records.serialize_features(features)
