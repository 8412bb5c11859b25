"""Batch inference over a corpus on Apache Beam: shards -> rows -> batches
of similar length -> RunInference -> one file per shard. The stages, why they
run fused one shard at a time: docs/batch_inference.md ("The pipeline and
what it writes"); the exactly-once rules of the files, which `WriteShardFn`
follows: `bert_tf1.data.io.shard_folder`.
"""
import dataclasses
import json
import logging
import os

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.ml.inference.base import ModelHandler, RunInference
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue
import numpy as np
import tensorflow as tf

from bert_tf1.data.io.text_files import iter_lines
from bert_tf1.data.tokenization import full_tokenizer
from bert_tf1.data.tokenization.packing import pack_ids

METRICS_NAMESPACE = "batch_inference"
# Lengths are rounded up to a multiple of this for grouping.
_BUCKET = 8


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """What a worker loads: `export_dir` (an export folder of any format)
    or the `bert_tf1.serving.load_served_model` arguments
    `serving_arguments`; `model_type`; `tokenizer` (vocab_file,
    do_lower_case) and `max_seq_length` for the `*_ids` path (a classifier
    or encoder whose model takes ids of any length), else None; an
    encoder's `pooling` and `l2_normalize`."""
    model_type: str
    export_dir: str = None
    serving_arguments: dict = None
    tokenizer: tuple = None
    max_seq_length: int = 128
    pooling: str = "mean"
    l2_normalize: bool = False

    @property
    def suffix(self):
        """Of the shard files: parquet (an encoder's embeddings) or jsonl."""
        return "parquet" if self.model_type == "encoder" else "jsonl"


@dataclasses.dataclass(frozen=True)
class Row:
    shard: int
    file: str
    line: int
    fields: tuple
    ids: tuple = None       # packed, unpadded; None: text signatures
    segment_ids: tuple = None


def read_rows(shard, parse_line):
    """Yields (line number, fields) of a shard; `parse_line(path, number,
    line)` gives a tuple of str, or None to skip the line."""
    if shard.tfrecord_features:
        dataset = tf.data.TFRecordDataset(shard.text_range.path)
        for number, record in enumerate(dataset.as_numpy_iterator(), 1):
            example = tf.train.Example.FromString(record)
            yield number, tuple(
                example.features.feature[name].bytes_list.value[0]
                .decode("utf-8") for name in shard.tfrecord_features)
        return
    number, path = shard.text_range.first_line, shard.text_range.path
    for line in iter_lines(shard.text_range):
        fields = parse_line(path, number, line.rstrip("\n").rstrip("\r"))
        if fields is not None:
            yield number, fields
        number += 1


class ReadShardFn(beam.DoFn):
    """Shard -> Row per example, with its packed ids on the `*_ids` path."""

    def __init__(self, spec, parse_line):
        self.spec = spec
        self.parse_line = parse_line
        self.lines = Metrics.counter(METRICS_NAMESPACE, "lines")

    def process(self, shard):
        for row in self._rows(self.spec, read_rows(shard, self.parse_line),
                              shard.index, shard.text_range.path):
            self.lines.inc()
            yield row

    @staticmethod
    def _rows(spec, numbered_fields, shard=0, path=""):
        tokenizer = None
        if spec.tokenizer:
            tokenizer = full_tokenizer.FullTokenizer(*spec.tokenizer)
            cls_sep = [tokenizer.vocab[t] for t in ("[CLS]", "[SEP]")]
        for number, fields in numbered_fields:
            ids = segments = None
            if tokenizer is not None:
                pieces = [tokenizer.convert_tokens_to_ids(
                    tokenizer.tokenize(text)) for text in fields]
                packed = pack_ids(pieces[0], pieces[1] if len(pieces) > 1
                                  else None, spec.max_seq_length, *cls_sep)
                length = sum(packed["input_mask"])
                ids = tuple(packed["input_ids"][:length])
                segments = tuple(packed["segment_ids"][:length])
            yield Row(shard, path, number, fields, ids, segments)


class TokenBoundedBatches(beam.DoFn):
    """Row -> list of Rows of similar length whose padded size (rows x the
    longest) stays within `max_tokens` (ours: Beam's BatchElements mixes
    lengths, or keeps keyed state). Buckets live per shard: a shard's last
    rows go out when the next shard's first row (or the bundle's end) comes.
    """

    def __init__(self, max_tokens, fixed_length):
        self.max_tokens = max_tokens
        self.fixed_length = fixed_length

    def start_bundle(self):
        self.buckets, self.shard = {}, None

    def process(self, row):
        if row.shard != self.shard:   # ReadShard yields shard after shard
            yield from self._take_all()
            self.shard = row.shard
        length = len(row.ids) if row.ids is not None else self.fixed_length
        bucket = -(-length // _BUCKET) * _BUCKET
        rows = self.buckets.setdefault(bucket, [])
        if rows and (len(rows) + 1) * bucket > self.max_tokens:
            yield self.buckets.pop(bucket)
            rows = self.buckets.setdefault(bucket, [])
        rows.append(row)

    def finish_bundle(self):
        for batch in self._take_all():
            yield WindowedValue(batch, 0, [GlobalWindow()])

    def _take_all(self):
        batches = [self.buckets[bucket] for bucket in sorted(self.buckets)]
        self.buckets = {}
        return batches


class _LoadedModel:
    """A loaded export (any format, `bert_tf1.serving.predictions.
    open_export`) or the model of a checkpoint, and what calls it."""

    def __init__(self, spec):
        from bert_tf1.serving.predictions import (open_export,
                                                  predictor_of_model)

        if spec.export_dir:
            self.predictor = open_export(spec.export_dir, spec.model_type)
        else:
            from bert_tf1.serving.export import load_served_model

            arguments = spec.serving_arguments
            model, preprocessor = load_served_model(**arguments)
            self.predictor = predictor_of_model(
                model, preprocessor, spec.model_type,
                arguments.get("label_list"), pooling=spec.pooling,
                l2_normalize=spec.l2_normalize)

    def __call__(self, rows):
        """Result dicts (as predict_text's) of `rows`, in order."""
        if rows[0].ids is None:
            return self.predictor.predict([row.fields for row in rows],
                                          batch_size=len(rows))
        return self.predictor.results_of_outputs(
            self.predictor.run(**ids_batch(rows)))


def ids_batch(rows):
    """int32 numpy [n, longest] input_ids, input_mask, segment_ids of Rows
    with packed ids, zero-padded to the longest."""
    longest = max(len(row.ids) for row in rows)
    arrays = np.zeros((3, len(rows), longest), np.int32)
    for index, row in enumerate(rows):
        arrays[0, index, :len(row.ids)] = row.ids
        arrays[1, index, :len(row.ids)] = 1
        arrays[2, index, :len(row.ids)] = row.segment_ids
    return dict(zip(("input_ids", "input_mask", "segment_ids"), arrays))


class _NoMemoryGaugeWarning(logging.Filter):
    """Drops Beam's "Resource module is not available" warning: Beam 2.77's
    RunInference logs it at every sample of its memory gauge when torch is
    absent (its model_manager imports torch, and the failed import drops the
    `resource` module too). Not ours to show."""

    def filter(self, record):
        return not record.getMessage().startswith(
            "Resource module is not available for current platform")

    @classmethod
    def install(cls):
        """Adds the filter to the root logger of this process, once."""
        root = logging.getLogger()
        if not any(isinstance(f, cls) for f in root.filters):
            root.addFilter(cls())


class ServedModelHandler(ModelHandler):
    """RunInference's handler for our exports: loads one per worker process
    (`tf.saved_model.load`, or the module built from a checkpoint), and
    runs each pre-formed batch (a list of Row) as one call."""

    def __init__(self, spec):
        super().__init__()
        _NoMemoryGaugeWarning.install()   # the process that builds the pipeline
        self.spec = spec
        self.batches = Metrics.counter(METRICS_NAMESPACE, "batches")
        self.padding = Metrics.counter(METRICS_NAMESPACE, "padding_tokens")
        self.tokens = Metrics.counter(METRICS_NAMESPACE, "tokens")

    def __setstate__(self, state):
        _NoMemoryGaugeWarning.install()   # a worker that unpickles it
        self.__dict__.update(state)

    def load_model(self):
        return _LoadedModel(self.spec)

    def run_inference(self, batch, model, inference_args=None):
        """batch: [list of Row] -> [[(Row, result dict)]]."""
        results = []
        for rows in batch:
            results.append(list(zip(rows, model(rows))))
            length = max(len(r.ids) if r.ids is not None else
                         self.spec.max_seq_length for r in rows)
            real = sum(len(r.ids) if r.ids is not None else length
                       for r in rows)
            self.batches.inc()
            self.tokens.inc(real)
            self.padding.inc(length * len(rows) - real)
        return results

    def get_num_bytes(self, batch):
        return sum(len(rows) for rows in batch)

    def batch_elements_kwargs(self):
        return {"min_batch_size": 1, "max_batch_size": 1}

    def get_metrics_namespace(self):
        return METRICS_NAMESPACE


class WriteShardFn(beam.DoFn):
    """[(Row, result)] of a batch -> the file of each shard whose results
    are all there (the plan's count), in line order, written by the
    `bert_tf1.data.io.shard_folder.ShardFolder` `folder`: JSON lines
    (`format_result(row, result)` -> dict), or for embeddings Parquet with
    columns `file`, `line`, `embedding`.

    Raises:
        RuntimeError: a shard with duplicate rows, or left incomplete at a
            bundle's end (a bug: TokenBoundedBatches ends batches with
            their shard).
    """

    def __init__(self, folder, format_result, embeddings):
        self.folder = folder
        self.shards = {shard.index: shard for shard in folder.shards}
        self.format_result = format_result
        self.embeddings = embeddings

    def start_bundle(self):
        self.pending = {}   # shard index -> [(Row, result)]

    def process(self, pairs):
        for row, result in pairs:
            results = self.pending.setdefault(row.shard, [])
            results.append((row, result))
            if len(results) == self.shards[row.shard].examples:
                yield self._write(row.shard, self.pending.pop(row.shard))

    def finish_bundle(self):
        if self.pending:
            raise RuntimeError("shard(s) %s incomplete at the end of a "
                               "bundle" % sorted(self.pending))

    def _write(self, index, results):
        shard = self.shards[index]
        results = sorted(results, key=lambda pair: pair[0].line)
        lines = [row.line for row, _ in results]
        if len(lines) != shard.examples or len(set(lines)) != len(lines):
            raise RuntimeError("shard %d: %d results (%d distinct), %d "
                               "examples planned" % (index, len(lines),
                                                     len(set(lines)),
                                                     shard.examples))

        def write(writer):
            if self.embeddings:
                _write_parquet(writer, results)
            else:
                writer.write("".join(
                    json.dumps(self.format_result(row, result),
                               ensure_ascii=False) + "\n"
                    for row, result in results).encode("utf-8"))

        return self.folder.write_shard(shard, write)


def _write_parquet(writer, results):
    import pyarrow as pa
    import pyarrow.parquet as pq

    vectors = np.stack([result["embedding"] for _, result in results])
    table = pa.table({
        "file": pa.array([row.file for row, _ in results], pa.string()),
        "line": pa.array([row.line for row, _ in results], pa.int64()),
        "embedding": pa.FixedSizeListArray.from_arrays(
            pa.array(vectors.astype(np.float32).ravel()), vectors.shape[1])})
    pq.write_table(table, writer)


def read_embeddings(path):
    """(files list of str, lines int64 [n], float32 [n, hidden]) of one
    Parquet shard (or a folder of them, in shard order)."""
    import pyarrow.parquet as pq

    paths = ([os.path.join(path, name) for name in sorted(os.listdir(path))
              if name.endswith(".parquet")] if os.path.isdir(path) else [path])
    files, lines, vectors = [], [], []
    for part in paths:
        table = pq.read_table(part)
        column = table["embedding"].combine_chunks()
        files += table["file"].to_pylist()
        lines.append(table["line"].to_numpy())
        vectors.append(column.flatten().to_numpy().reshape(
            len(table), column.type.list_size))
    return files, np.concatenate(lines), np.concatenate(vectors)


def build_pipeline(root, shards, spec, parse_line, format_result, folder,
                   max_tokens):
    """Adds the stages to the beam.Pipeline `root` for `shards` of the
    ShardFolder `folder`; returns the PCollection of shard files written."""
    embeddings = spec.model_type == "encoder"
    return (root
            | "Shards" >> beam.Create(shards)
            | "SpreadShards" >> beam.Reshuffle()
            | "ReadShard" >> beam.ParDo(ReadShardFn(spec, parse_line))
            | "Batch" >> beam.ParDo(TokenBoundedBatches(
                max_tokens, spec.max_seq_length))
            | "RunInference" >> RunInference(ServedModelHandler(spec))
            | "WriteShard" >> beam.ParDo(WriteShardFn(
                folder, format_result, embeddings)))
