"""BERT-Base and BERT-Large throughput on a GPU, next to NVIDIA's published numbers.

    python benchmarks/gpu.py                  # on a machine with a GPU
    python benchmarks/gpu.py --quick          # tiny model, a few steps (CPU too; CI)
    python benchmarks/gpu.py --models=large --tasks=squad --precisions=fp16 \
        --squad_batch_size=76

Rows: `infer` = encoder forward pass (`BertModel`, dropout off), seq 128,
batch 8; `squad` = one SQuAD fine-tuning step (`BertSquad`, seq 384, dropout
on, the original optimizer with clipping at 1.0), `--squad_batch_size`.
Precisions: `fp32` (TensorFlow's default, TF32 matmuls on Ampere and newer),
`bf16` (`mixed_bfloat16`) and `fp16` (`mixed_float16`; Keras adds the dynamic
loss scale for training), every one XLA-compiled (`jit_compile=True`).
Throughput is sequences per second over `--steps` timed calls after
`--warmup` calls (tracing and XLA compilation), random ids and weights.

Reference (NVIDIA's DeepLearningExamples, TensorFlow 2 BERT, one A100-80GB):
BERT-Large SQuAD fine-tuning, mixed precision, batch 76: 134.2 seq/s;
BERT-Base inference, seq 128, batch 8, FP16: 1,786 seq/s. Their inference
number is TensorRT-free TF2 with XLA and AMP; batch sizes and GPUs differ
from run to run, so the column is a landmark, not a like-for-like target.
"""
import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

from bert_tf1.modeling import BertConfig, BertModel, BertSquad  # noqa: E402
from bert_tf1.modeling.optimization import create_optimizer  # noqa: E402

MODELS = {  # the released checkpoints' shapes (bert_config.json)
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072),
    "large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                  intermediate_size=4096),
    "tiny": dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=512),
}
POLICIES = {"fp32": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}
# (model, task, precision) -> (NVIDIA's seq/s, what they measured).
NVIDIA = {
    ("large", "squad", "fp16"): (134.2, "A100-80GB, TF2, AMP, batch 76"),
    ("base", "infer", "fp16"): (1786.0, "A100-80GB, TF2, FP16, batch 8"),
}


def _config(name, num_hidden_layers=0):
    """The model's BertConfig; `num_hidden_layers` > 0 replaces its depth."""
    shape = dict(MODELS[name])
    if num_hidden_layers:
        shape["num_hidden_layers"] = num_hidden_layers
    return BertConfig(vocab_size=30522, hidden_act="gelu", hidden_dropout_prob=0.1,
                      attention_probs_dropout_prob=0.1, max_position_embeddings=512,
                      type_vocab_size=2, initializer_range=0.02, **shape)


def _features(config, batch_size, seq_length):
    rng = np.random.default_rng(0)
    return {
        "input_ids": tf.constant(rng.integers(
            1, config.vocab_size, (batch_size, seq_length)).astype("int32")),
        "input_mask": tf.ones((batch_size, seq_length), tf.int32),
        "segment_ids": tf.zeros((batch_size, seq_length), tf.int32),
    }


def _build(task, config, batch_size, seq_length):
    """A zero-argument callable running one step, and its batch size."""
    features = _features(config, batch_size, seq_length)
    if task == "infer":
        model = BertModel(config)

        @tf.function(jit_compile=True)
        def infer(inputs):
            outputs = model(inputs, training=False)
            return outputs["sequence_output"], outputs["pooled_output"]
        return lambda: infer(features)[1].numpy()
    model = BertSquad(config)
    model.compile(optimizer=create_optimizer(3e-5, 10_000, 1_000, model=model),
                  jit_compile=True)
    rng = np.random.default_rng(1)
    labels = {name: tf.constant(rng.integers(0, seq_length, (batch_size,)).astype("int32"))
              for name in ("start_positions", "end_positions")}
    return lambda: model.train_on_batch(features, labels)


def measure(model_name, task, precision, batch_size, seq_length, warmup, steps,
            num_hidden_layers=0):
    """Sequences per second of one row (`num_hidden_layers`: see `_config`)."""
    keras.mixed_precision.set_global_policy(POLICIES[precision])
    try:
        step = _build(task, _config(model_name, num_hidden_layers), batch_size,
                      seq_length)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    for _ in range(warmup):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps * batch_size / (time.perf_counter() - start)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="Tiny model, short sequences, 2 steps: checks it runs.")
    parser.add_argument("--models", default="base,large")
    parser.add_argument("--tasks", default="infer,squad")
    parser.add_argument("--precisions", default="fp32,bf16,fp16")
    parser.add_argument("--infer_batch_size", type=int, default=8)
    parser.add_argument("--squad_batch_size", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--num_hidden_layers", type=int, default=0,
                        help="Encoder layers instead of each model's own (0: its "
                             "own); fewer compile faster (the tests' --quick runs).")
    args = parser.parse_args(argv)
    lengths = {"infer": 128, "squad": 384}
    models = args.models.split(",")
    if args.quick:
        models, lengths = ["tiny"], {"infer": 32, "squad": 64}
        args.warmup, args.steps = 1, 2
        args.infer_batch_size, args.squad_batch_size = 2, 2
    if args.num_hidden_layers < 0:
        parser.error(f"--num_hidden_layers must be 0 or more, got {args.num_hidden_layers}")
    for name in models + args.precisions.split(","):
        if name not in MODELS and name not in POLICIES:
            parser.error(f"unknown model or precision {name!r}; expected "
                         f"{sorted(MODELS)} / {sorted(POLICIES)}")
    gpus = tf.config.list_physical_devices("GPU")
    device = ", ".join(tf.config.experimental.get_device_details(g).get(
        "device_name", g.name) for g in gpus) or "CPU only"
    print(f"device: {device}; tensorflow {tf.__version__}, keras {keras.__version__}; "
          f"XLA; {args.warmup} warm-up + {args.steps} timed steps"
          + (f"; {args.num_hidden_layers} encoder layers (--num_hidden_layers)"
             if args.num_hidden_layers else ""))
    print("| model | task | precision | seq | batch | seq/s | NVIDIA seq/s | NVIDIA setup |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for model_name in models:
        for task in args.tasks.split(","):
            batch = args.infer_batch_size if task == "infer" else args.squad_batch_size
            for precision in args.precisions.split(","):
                rate = measure(model_name, task, precision, batch, lengths[task],
                               args.warmup, args.steps, args.num_hidden_layers)
                reference, setup = NVIDIA.get((model_name, task, precision), (None, ""))
                print(f"| {model_name} | {task} | {precision} | {lengths[task]} | {batch} "
                      f"| {rate:.1f} | {'' if reference is None else f'{reference:,.1f}'} "
                      f"| {setup} |", flush=True)


if __name__ == "__main__":
    main()
