"""Training and inference throughput of the classifier, printed as a table.

    python benchmarks/training_throughput.py [--bert_config_file=...] \
        [--seq_lengths=64,128] [--batch_size=32] [--steps=20] [--xla=false,true]

Measures `model.fit` steps (the original optimizer, clipping included) and
`model.predict`, after a warm-up that absorbs tracing and compilation, on
random ids. Numbers are examples per second on this machine.
"""
import os
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402

from bert_tf1.modeling import BertClassifier, BertConfig  # noqa: E402
from bert_tf1.modeling.optimization import create_optimizer  # noqa: E402

flags.DEFINE_string("bert_config_file", os.path.join(
    os.path.dirname(__file__), "..", "configs", "bert_tiny_from_scratch.json"),
    "Model to measure.")
flags.DEFINE_list("seq_lengths", ["64", "128"], "Sequence lengths.")
flags.DEFINE_integer("batch_size", 32, "Examples per step.")
flags.DEFINE_integer("steps", 20, "Measured steps per row.")
flags.DEFINE_list("xla", ["false"], "jit_compile settings to try.")
FLAGS = flags.FLAGS


def _data(config, seq_length, count):
    rng = np.random.default_rng(0)
    features = {
        "input_ids": rng.integers(1, config.vocab_size, (count, seq_length)).astype("int32"),
        "input_mask": np.ones((count, seq_length), "int32"),
        "segment_ids": np.zeros((count, seq_length), "int32"),
    }
    labels = rng.integers(0, 2, (count,)).astype("int32")
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(
        FLAGS.batch_size, drop_remainder=True).repeat()


def _measure(config, seq_length, xla):
    dataset = _data(config, seq_length, FLAGS.batch_size * 8)
    model = BertClassifier(config, num_labels=2)
    model.compile(optimizer=create_optimizer(1e-4, 10_000, 100), jit_compile=xla)
    model.fit(dataset, steps_per_epoch=3, epochs=1, verbose=0)
    start = time.perf_counter()
    model.fit(dataset, steps_per_epoch=FLAGS.steps, epochs=1, verbose=0)
    train = FLAGS.steps * FLAGS.batch_size / (time.perf_counter() - start)
    model.predict(dataset, steps=3, verbose=0)
    start = time.perf_counter()
    model.predict(dataset, steps=FLAGS.steps, verbose=0)
    infer = FLAGS.steps * FLAGS.batch_size / (time.perf_counter() - start)
    return train, infer


def main(_):
    config = BertConfig.from_json_file(FLAGS.bert_config_file)
    print(f"model: L={config.num_hidden_layers} H={config.hidden_size} "
          f"A={config.num_attention_heads} V={config.vocab_size}; "
          f"batch {FLAGS.batch_size}; devices: "
          f"{[d.name for d in tf.config.list_logical_devices()]}")
    print("| seq_length | xla | train examples/s | predict examples/s |")
    print("|---:|:---:|---:|---:|")
    for seq_length in map(int, FLAGS.seq_lengths):
        for xla in FLAGS.xla:
            xla = xla.lower() in ("1", "true", "yes")
            train, infer = _measure(config, seq_length, xla)
            print(f"| {seq_length} | {xla} | {train:.1f} | {infer:.1f} |", flush=True)


if __name__ == "__main__":
    app.run(main)
