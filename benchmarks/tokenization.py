"""Throughput of the pure-Python and the in-graph BERT tokenizers.

Tokenizes every context of SQuAD v1.1 dev (2067 paragraphs, 1.6 MB) to ids
with `bert_tf1.data.tokenization.FullTokenizer` and with
`bert_tf1.data.tokenization.in_graph.InGraphFullTokenizer` (called on batches, and inside a
tf.data pipeline), checks that both give the same ids, and prints sentences
(contexts) per second and MB/s (UTF-8 input bytes) as a table.

Usage (from the repository root):
  python benchmarks/tokenization.py [--vocab_dir=...] [--squad_zip=...]
      [--batch_size=256] [--repeats=3]
"""
import json
import os
import pathlib
import sys
import time
import zipfile

from absl import app
from absl import flags

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

from bert_tf1.data.tokenization import in_graph as tf_tokenization  # noqa: E402
from bert_tf1.data.tokenization import full_tokenizer as tokenization  # noqa: E402

_SHARED = REPO_ROOT.parent / "shared" / "data"

FLAGS = flags.FLAGS
flags.DEFINE_string("squad_zip", str(_SHARED / "squad" / "dev-v1.1.json.zip"),
                    "SQuAD v1.1 dev set (zip holding dev-v1.1.json).")
flags.DEFINE_string("vocab_dir", str(_SHARED / "bert_models"),
                    "Folder holding uncased_L-12_H-768_A-12/ and "
                    "cased_L-12_H-768_A-12/ with vocab.txt.")
flags.DEFINE_integer("batch_size", 256, "Texts per in-graph call.")
flags.DEFINE_integer("repeats", 3,
                     "Timed passes per tokenizer; the best one is reported.")

_MODES = (("uncased_L-12_H-768_A-12", True), ("cased_L-12_H-768_A-12", False))


def read_contexts(path):
    """Returns the list of paragraph contexts (str) of a SQuAD zip."""
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist()
                 if n.endswith(".json") and not n.startswith("__MACOSX")]
        if len(names) != 1:
            raise ValueError("%s: expected one .json member, found %s"
                             % (path, names))
        data = json.loads(archive.read(names[0]))["data"]
    return [p["context"] for article in data for p in article["paragraphs"]]


def best_time(fn, repeats):
    """Smallest wall time of `repeats` runs of fn(); returns (secs, result)."""
    best, result = None, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def run_python(tokenizer, texts):
    return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t))
            for t in texts]


def run_in_graph(tokenizer, batches):
    """Ragged id tensors, one per batch (timed without list conversion)."""
    return [tokenizer(batch) for batch in batches]


def make_dataset(tokenizer, texts, batch_size):
    """Texts -> batches -> ids; built once, so its map function is traced
    once and each timed pass only iterates."""
    return (tf.data.Dataset.from_tensor_slices(texts).batch(batch_size)
            .map(tokenizer).prefetch(tf.data.AUTOTUNE))


def as_lists(ragged_batches):
    return [row for batch in ragged_batches for row in batch.to_list()]


def main(argv):
    del argv
    texts = read_contexts(FLAGS.squad_zip)
    encoded = [t.encode("utf-8") for t in texts]
    megabytes = sum(len(t) for t in encoded) / 1e6
    batches = [tf.constant(encoded[i:i + FLAGS.batch_size])
               for i in range(0, len(encoded), FLAGS.batch_size)]
    print("SQuAD v1.1 dev contexts: %d texts, %.2f MB; batch %d; best of %d; "
          "%d CPU threads available" % (len(texts), megabytes,
                                        FLAGS.batch_size, FLAGS.repeats,
                                        os.cpu_count()))
    rows = []
    for model, do_lower_case in _MODES:
        vocab = os.path.join(FLAGS.vocab_dir, model, "vocab.txt")
        python = tokenization.FullTokenizer(vocab, do_lower_case)
        graph = tf_tokenization.InGraphFullTokenizer(vocab, do_lower_case)
        graph(batches[0])  # trace once before timing
        py_secs, expected = best_time(lambda: run_python(python, texts),
                                      FLAGS.repeats)
        graph_secs, got = best_time(lambda: run_in_graph(graph, batches),
                                    FLAGS.repeats)
        dataset = make_dataset(graph, encoded, FLAGS.batch_size)
        data_secs, got_data = best_time(lambda: list(dataset),
                                        FLAGS.repeats)
        if as_lists(got) != expected or as_lists(got_data) != expected:
            raise SystemExit("in-graph ids differ from FullTokenizer's (%s)"
                             % model)
        case = "lower" if do_lower_case else "cased"
        for name, secs in (("FullTokenizer (Python)", py_secs),
                           ("InGraphFullTokenizer, batched calls",
                            graph_secs),
                           ("InGraphFullTokenizer in tf.data", data_secs)):
            rows.append((case, name, len(texts) / secs, megabytes / secs,
                         py_secs / secs))
    header = ("mode", "tokenizer", "texts/s", "MB/s", "vs Python")
    print("| %s | %s | %s | %s | %s |" % header)
    print("|---|---|---:|---:|---:|")
    for case, name, rate, mb_rate, speedup in rows:
        print("| %s | %s | %.0f | %.2f | %.1fx |"
              % (case, name, rate, mb_rate, speedup))


if __name__ == "__main__":
    app.run(main)
