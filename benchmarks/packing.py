"""In-graph packing, ours beside keras-hub's: trace cost and throughput.

`[CLS] A [SEP] B [SEP]` of MRPC's train pairs (3,668, the original's
FullTokenizer ids of the uncased BERT-Base vocab) by
`bert_tf1.data.tokenization.packing.InGraphPacker` (core TensorFlow ops) and
by `keras_hub.layers.MultiSegmentPacker(truncate="round_robin")` (what
InGraphPacker used before). For each: the graph ops and CPU seconds of one
tf.function trace (a fresh function each time, the best of --repeats), then
pairs per second packing batches of --batch_size in that function and in a
tf.data map. Checks first that both give the same ids (they differ only
where truncation empties B, not at these lengths).

Usage (from the repository root):
  python benchmarks/packing.py [--max_seq_length=128] [--batch_size=256]
      [--repeats=5]
"""
import os
import pathlib
import sys
import time

from absl import app
from absl import flags

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from bert_tf1.data.glue.processors import MrpcProcessor  # noqa: E402
from bert_tf1.data.tokenization import full_tokenizer  # noqa: E402
from bert_tf1.data.tokenization.packing import InGraphPacker  # noqa: E402

_SHARED = REPO_ROOT.parent / "shared" / "data"

FLAGS = flags.FLAGS
flags.DEFINE_string("data_dir", str(_SHARED / "glue" / "MRPC"),
                    "The MRPC folder; its train.tsv's pairs are packed.")
flags.DEFINE_string("vocab_file", str(_SHARED / "bert_models" /
                                      "uncased_L-12_H-768_A-12" / "vocab.txt"),
                    "Uncased BERT vocab.")
flags.DEFINE_integer("max_seq_length", 128, "Packed length.")
flags.DEFINE_integer("batch_size", 256, "Pairs per packing call.")
flags.DEFINE_integer("repeats", 5, "Traces and timed passes; the best is kept.")

RAGGED = tf.RaggedTensorSpec([None, None], tf.int32, 1)


def read_pairs(data_dir, tokenizer):
    """Ragged int32 ids (A, B) of MRPC's training pairs."""
    examples = MrpcProcessor().get_train_examples(data_dir)

    def ids(text):
        return tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))

    return (tf.ragged.constant([ids(e.text_a) for e in examples], tf.int32),
            tf.ragged.constant([ids(e.text_b) for e in examples], tf.int32))


class KerasHubPacker:
    """keras-hub's packer with InGraphPacker's outputs (pad -1 -> 0)."""

    def __init__(self, max_seq_length, cls_id, sep_id):
        self.packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length=max_seq_length, start_value=cls_id,
            end_value=sep_id, pad_value=-1, truncate="round_robin",
            dtype="int32")

    def __call__(self, ids_a, ids_b):
        token_ids, segment_ids = self.packer((ids_a, ids_b))
        real = tf.not_equal(token_ids, -1)
        return {"input_ids": tf.where(real, token_ids, 0),
                "input_mask": tf.cast(real, tf.int32),
                "segment_ids": tf.where(real, tf.cast(segment_ids, tf.int32),
                                        0)}


def trace_cost(packer, repeats):
    """(graph ops, best CPU seconds) of tracing packer on ragged pairs."""
    best, ops = None, None
    for _ in range(repeats):
        function = tf.function(lambda a, b: packer(a, b), autograph=False)
        start = time.process_time()
        concrete = function.get_concrete_function(RAGGED, RAGGED)
        elapsed = time.process_time() - start
        ops = len(concrete.graph.get_operations())
        best = elapsed if best is None else min(best, elapsed)
    return ops, best


def throughput(packer, ids_a, ids_b, batch_size, repeats):
    """(pairs/s in a tf.function, pairs/s in a tf.data map), best pass."""
    function = tf.function(lambda a, b: packer(a, b), autograph=False,
                           input_signature=[RAGGED, RAGGED])
    count = int(ids_a.nrows())
    batches = [(ids_a[i:i + batch_size], ids_b[i:i + batch_size])
               for i in range(0, count, batch_size)]
    dataset = tf.data.Dataset.from_tensor_slices((ids_a, ids_b)).batch(
        batch_size).map(packer)
    rates = []
    for run in (lambda: [function(a, b) for a, b in batches],
                lambda: list(dataset)):
        run()  # warm-up: tracing and the first execution
        best = None
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        rates.append(count / best)
    return rates


def main(_):
    tokenizer = full_tokenizer.FullTokenizer(FLAGS.vocab_file)
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    ids_a, ids_b = read_pairs(FLAGS.data_dir, tokenizer)
    packers = {
        "ours (InGraphPacker)": InGraphPacker(FLAGS.max_seq_length, cls_id,
                                              sep_id),
        "keras-hub MultiSegmentPacker": KerasHubPacker(
            FLAGS.max_seq_length, cls_id, sep_id)}
    outputs = [packer(ids_a, ids_b) for packer in packers.values()]
    for key in ("input_ids", "input_mask", "segment_ids"):
        np.testing.assert_array_equal(outputs[0][key].numpy(),
                                      outputs[1][key].numpy(), err_msg=key)
    print(f"{int(ids_a.nrows())} MRPC pairs, max_seq_length "
          f"{FLAGS.max_seq_length}, batches of {FLAGS.batch_size}: same ids")
    print("| packer | graph ops | trace CPU s | pairs/s (tf.function) | "
          "pairs/s (tf.data map) |")
    print("|---|---|---|---|---|")
    for name, packer in packers.items():
        ops, seconds = trace_cost(packer, FLAGS.repeats)
        in_function, in_map = throughput(packer, ids_a, ids_b,
                                         FLAGS.batch_size, FLAGS.repeats)
        print(f"| {name} | {ops} | {seconds:.3f} | {in_function:,.0f} | "
              f"{in_map:,.0f} |")


if __name__ == "__main__":
    app.run(main)
