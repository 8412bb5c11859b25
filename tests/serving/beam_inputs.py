"""The inputs and Beam options the batch-inference tests share
(test_batch_inference.py, test_batch_inference_real_model.py): the first
SST-2 train sentences and MRPC pairs from ../shared/data, written one per
line, and DirectRunner options (in the test's process unless a test asks for
worker processes: each loads TensorFlow and the model, ~10 CPU seconds)."""
import csv

from bert_tf1.tasks.batch_inference import BatchOptions


def _tsv(path):
    with open(path, encoding="utf-8") as reader:
        return list(csv.reader(reader, delimiter="\t", quotechar=None))[1:]


def sst2_sentences(data_dir, count=1000):
    """The first `count` sentences of glue/SST-2/train.tsv."""
    return [row[0] for row in _tsv(data_dir / "glue/SST-2/train.tsv")[:count]]


def mrpc_pairs(data_dir, count=None):
    """The first `count` MRPC pairs of train, dev and test (all 5,801 when
    None), as (sentence 1, sentence 2)."""
    return [(row[3], row[4]) for name in ("train", "dev", "test")
            for row in _tsv(data_dir / f"glue/MRPC/{name}.tsv")][:count]


def write_lines(path, lines):
    """Writes `lines` to `path`, one per line; returns the path as text."""
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def beam_options(output_dir, **changes):
    """DirectRunner, 1 worker (in this process), 250-line shards, unless
    `changes` say."""
    return BatchOptions(**dict(dict(
        runner="DirectRunner", num_workers=1, output_dir=str(output_dir),
        lines_per_shard=250), **changes))
