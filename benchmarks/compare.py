"""Our BERT against keras-hub and PyTorch/transformers, printed as a table.

    python benchmarks/compare.py [--quick] [--only=infer_8x128,bf16] \
        [--bert_config_file=../shared/data/bert_models/uncased_L-12_H-768_A-12/bert_config.json]

Rows (BERT-Base shapes by default, random weights and ids, no padding):
- `infer_8x128`, `infer_1x512`: the encoder forward pass (sequence and pooled
  outputs), dropout off: ours (`BertModel`), keras-hub `BertBackbone`,
  transformers `BertModel` (PyTorch eager, `inference_mode`).
- `train_8x128`: one fine-tuning step of a 2-class classifier (dropout on,
  forward, backward, global-norm clipping at 1.0, AdamW update): ours
  (`BertClassifier` + the original optimizer), keras-hub `BertTextClassifier`
  (+ the same optimizer), transformers `BertForSequenceClassification`
  (+ `torch.optim.AdamW`, `clip_grad_norm_`).
Each in `fp32` and `bf16`. bf16 means mixed precision: float32 weights,
bfloat16 compute (Keras policy `mixed_bfloat16`; `torch.autocast` in PyTorch).
`bf16w` (opt-in via --precisions) keeps the weights themselves in bfloat16
(Keras policy `bfloat16`; `model.to(torch.bfloat16)`), inference only.

Keras models run as `tf.function` graphs (as `predict`/`fit` run them, no XLA);
PyTorch runs eagerly, in a child process (benchmarks/torch_bert.py) that
never loads TensorFlow. PyTorch is optional: without `torch` and
`transformers` installed its columns are empty (they are never dependencies of
this project).

Method: all variants of a row are built and warmed up first, then timed in
round-robin repetitions (each repetition runs every variant once, in turn), so
load changes from other processes hit all alike; the table gives medians.
"vs" columns are speedups: the other's median time / ours (>1: ours faster).
"% limit" is model FLOPs / time / the FLOP rate of a plain matmul chain of
BERT's own feed-forward shapes ([1024, hidden] x [hidden, intermediate] x
[intermediate, hidden], each + bias, TensorFlow, same precision) with about
the same FLOPs, timed in the same round robin. Training counts 3x the forward FLOPs.
"load" is the 1-minute load average when the row finished: on a shared
machine above its core count, PyTorch's OpenMP threads lose more than
TensorFlow's work-stealing pool, so compare rows measured at low load.
"""
import gc
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from absl import app, flags  # noqa: E402

from keras_hub import models as keras_hub_models  # noqa: E402

from modeling import BertClassifier, BertConfig  # noqa: E402
from modeling.interop.keras_hub import backbone_for_config  # noqa: E402
from modeling.optimization import create_optimizer  # noqa: E402

_BASE_CONFIG = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
    "bert_models", "uncased_L-12_H-768_A-12", "bert_config.json")
CASES = {  # name -> (mode, batch_size, seq_length)
    "infer_8x128": ("infer", 8, 128),
    "infer_1x512": ("infer", 1, 512),
    "train_8x128": ("train", 8, 128),
}
POLICIES = {"fp32": "float32", "bf16": "mixed_bfloat16", "bf16w": "bfloat16"}
FRAMEWORKS = ("ours", "keras_hub", "torch")

flags.DEFINE_string("bert_config_file", _BASE_CONFIG, "Model shapes to measure.")
flags.DEFINE_list("cases", list(CASES), f"Rows, of {sorted(CASES)}.")
flags.DEFINE_list("precisions", ["fp32", "bf16"], f"Of {sorted(POLICIES)}.")
flags.DEFINE_list("frameworks", list(FRAMEWORKS), f"Of {FRAMEWORKS}.")
flags.DEFINE_list(
    "only", [], "Run only rows whose `case_precision` label (e.g. "
    "`infer_8x128_bf16`) contains one of these strings.")
flags.DEFINE_bool("quick", False, "3 repetitions instead of --reps.")
flags.DEFINE_integer("reps", 10, "Timed round-robin repetitions per row.")
flags.DEFINE_integer("warmup", 2, "Untimed calls per variant before timing.")
flags.DEFINE_integer(
    "threads", 0, "Threads per framework (TensorFlow intra- and inter-op, "
    "PyTorch intra-op); 0 keeps each framework's default. 1 compares work per "
    "core and is robust on a loaded machine, where multi-threaded PyTorch "
    "waits at OpenMP barriers for descheduled threads.")
FLAGS = flags.FLAGS


def forward_flops(config, batch_size, seq_length):
    """Multiply-adds x 2 of the encoder and pooler matmuls (embeddings omitted)."""
    hidden, inner = config.hidden_size, config.intermediate_size
    per_token = (8 * hidden * hidden + 4 * hidden * inner  # q,k,v,out + FFN
                 + 4 * seq_length * hidden)  # scores and context
    return (batch_size * seq_length * config.num_hidden_layers * per_token
            + batch_size * 2 * hidden * hidden)


def random_inputs(config, batch_size, seq_length):
    rng = np.random.default_rng(0)
    segment_ids = np.zeros((batch_size, seq_length), "int32")
    segment_ids[:, seq_length // 2:] = 1
    return {
        "input_ids": rng.integers(1, config.vocab_size,
                                  (batch_size, seq_length)).astype("int32"),
        "input_mask": np.ones((batch_size, seq_length), "int32"),
        "segment_ids": segment_ids,
        "label_ids": rng.integers(0, 2, (batch_size,)).astype("int32"),
    }


def _with_policy(policy, build):
    """Builds Keras layers under a global dtype policy, then restores float32."""
    keras.mixed_precision.set_global_policy(policy)
    try:
        return build()
    finally:
        keras.mixed_precision.set_global_policy("float32")


def _optimizer(model):
    return create_optimizer(2e-5, 10_000, 1_000, model=model)


def ours(config, mode, precision, data):
    """A zero-argument callable running our model once."""
    features = {k: tf.constant(data[k])
                for k in ("input_ids", "input_mask", "segment_ids")}
    model = _with_policy(POLICIES[precision],
                         lambda: BertClassifier(config, num_labels=2))
    if mode == "infer":
        encoder = model.bert

        @tf.function
        def infer(inputs):
            outputs = encoder(inputs, training=False)
            return outputs["sequence_output"], outputs["pooled_output"]
        return lambda: infer(features)
    model.compile(optimizer=_optimizer(model))
    labels = tf.constant(data["label_ids"])
    return lambda: model.train_on_batch(features, labels)


def keras_hub(config, mode, precision, data):
    features = {"token_ids": tf.constant(data["input_ids"]),
                "segment_ids": tf.constant(data["segment_ids"]),
                "padding_mask": tf.constant(data["input_mask"])}

    def build():
        backbone = backbone_for_config(config)
        if mode == "infer":
            return backbone
        return keras_hub_models.BertTextClassifier(
            backbone, num_classes=2, preprocessor=None)

    model = _with_policy(POLICIES[precision], build)
    if mode == "infer":
        @tf.function
        def infer(inputs):
            outputs = model(inputs, training=False)
            return outputs["sequence_output"], outputs["pooled_output"]
        return lambda: infer(features)
    model.compile(optimizer=_optimizer(model),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[])
    labels = tf.constant(data["label_ids"])
    return lambda: model.train_on_batch(features, labels)


def _torch_installed():
    return (importlib.util.find_spec("torch") is not None
            and importlib.util.find_spec("transformers") is not None)


class TorchProcess:
    """transformers' BERT in PyTorch eager mode, in a child process.

    Not in this process: with TensorFlow loaded, PyTorch's OpenMP threads and
    TensorFlow's pools contend (see benchmarks/torch_bert.py). Calling the
    object runs one step there and waits for it.
    """

    def __init__(self, config, mode, precision, batch_size, seq_length):
        settings = dict(config.to_dict(), mode=mode, precision=precision,
                        batch_size=batch_size, seq_length=seq_length,
                        threads=FLAGS.threads)
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(os.path.dirname(__file__),
                                          "torch_bert.py"),
             json.dumps(settings)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._expect("ready")

    def _expect(self, word):
        line = self.process.stdout.readline().strip()
        if line != word:
            self.close()
            raise RuntimeError(
                f"benchmarks/torch_bert.py answered {line!r}, expected {word!r} "
                "(its error is printed above).")

    def __call__(self):
        self.process.stdin.write("run\n")
        self.process.stdin.flush()
        self._expect("done")

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)


def pytorch(config, mode, precision, data):
    """A `TorchProcess`, or None if torch/transformers are not installed."""
    if not _torch_installed() or (mode == "train" and precision == "bf16w"):
        return None
    batch_size, seq_length = data["input_ids"].shape
    return TorchProcess(config, mode, precision, batch_size, seq_length)


def matmul_limit(config, mode, precision, flops):
    """A callable running a TF matmul chain of ~`flops`; returns (callable, flops)."""
    del mode
    tokens = 1024
    hidden, inner = config.hidden_size, config.intermediate_size
    per_pair = 4 * tokens * hidden * inner
    pairs = max(1, round(flops / per_pair))
    dtype = tf.float32 if precision == "fp32" else tf.bfloat16
    rng = np.random.default_rng(1)
    # Variables and an argument, not constants, which grappler would fold.
    x = tf.constant(rng.normal(size=(tokens, hidden)), dtype)
    w1 = tf.Variable(tf.constant(
        rng.normal(size=(hidden, inner)) / np.sqrt(hidden), dtype))
    w2 = tf.Variable(tf.constant(
        rng.normal(size=(inner, hidden)) / np.sqrt(inner), dtype))

    b1 = tf.Variable(tf.zeros((inner,), dtype))
    b2 = tf.Variable(tf.zeros((hidden,), dtype))

    # With a bias add, as in the model: oneDNN then runs its fused MatMul
    # kernel, which is faster here than a bare MatMul.
    @tf.function
    def chain(x):
        for _ in range(pairs):
            x = tf.nn.bias_add(tf.matmul(x, w1), b1)
            x = tf.nn.bias_add(tf.matmul(x, w2), b2)
        return x
    return (lambda: chain(x).numpy()), pairs * per_pair


def _sync(result):
    """Waits for a TF result (TF ops may return before finishing; PyTorch
    eager on CPU has finished when it returns)."""
    if isinstance(result, (tuple, list)):
        for item in result:
            _sync(item)
    elif isinstance(result, dict):
        for item in result.values():
            _sync(item)
    elif isinstance(result, tf.Tensor):
        result.numpy()
    return result


def measure_row(config, case, precision, reps):
    mode, batch_size, seq_length = CASES[case]
    data = random_inputs(config, batch_size, seq_length)
    builders = {"ours": ours, "keras_hub": keras_hub, "torch": pytorch}
    runs = {}
    for name in FRAMEWORKS:
        if name in FLAGS.frameworks:
            run = builders[name](config, mode, precision, data)
            if run is not None:
                runs[name] = run
    flops = forward_flops(config, batch_size, seq_length)
    model_flops = flops * (3 if mode == "train" else 1)
    runs["matmul"], limit_flops = matmul_limit(config, mode, precision, flops)
    for run in runs.values():
        for _ in range(FLAGS.warmup):
            _sync(run())
    times = {name: [] for name in runs}
    for _ in range(reps):
        for name, run in runs.items():
            start = time.perf_counter()
            _sync(run())
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) for name, values in times.items()}
    limit_rate = limit_flops / medians.pop("matmul")
    percent = {name: 100.0 * model_flops / seconds / limit_rate
               for name, seconds in medians.items()}
    for run in runs.values():
        if isinstance(run, TorchProcess):
            run.close()
    del runs
    gc.collect()
    return medians, percent, limit_rate


def _cell(value, fmt):
    return "" if value is None else format(value, fmt)


def main(_):
    if FLAGS.threads:
        tf.config.threading.set_intra_op_parallelism_threads(FLAGS.threads)
        tf.config.threading.set_inter_op_parallelism_threads(FLAGS.threads)
    config = BertConfig.from_json_file(FLAGS.bert_config_file)
    reps = 3 if FLAGS.quick else FLAGS.reps
    if _torch_installed():
        versions = subprocess.run(
            [sys.executable, "-c", "import torch, transformers; print("
             "torch.__version__, transformers.__version__)"],
            capture_output=True, text=True, check=True).stdout.split()
        torch_note = (f"torch {versions[0]} (own process), "
                      f"transformers {versions[1]}")
    else:
        torch_note = "torch/transformers not installed"
    print(f"model: L={config.num_hidden_layers} H={config.hidden_size} "
          f"A={config.num_attention_heads} I={config.intermediate_size}; "
          f"tensorflow {tf.__version__}, keras {keras.__version__}, {torch_note}; "
          f"{os.cpu_count()} CPUs, threads per framework: "
          f"{FLAGS.threads or 'default'}; median of {reps} interleaved "
          "repetitions")
    print("| row | ours ms | keras-hub ms | torch ms | vs keras-hub | vs torch "
          "| ours % limit | keras-hub % limit | torch % limit | limit GFLOP/s "
          "| load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case in FLAGS.cases:
        for precision in FLAGS.precisions:
            label = f"{case}_{precision}"
            if FLAGS.only and not any(part in label for part in FLAGS.only):
                continue
            if precision == "bf16w" and CASES[case][0] == "train":
                continue  # bfloat16 weights cannot take small updates
            medians, percent, limit_rate = measure_row(config, case, precision, reps)
            ms = {name: medians.get(name) and 1000 * medians[name]
                  for name in FRAMEWORKS}
            mine = medians.get("ours")

            def speedup(other):
                if mine is None or other not in medians:
                    return None
                return medians[other] / mine
            print(f"| {label} | {_cell(ms['ours'], '.0f')} "
                  f"| {_cell(ms['keras_hub'], '.0f')} | {_cell(ms['torch'], '.0f')} "
                  f"| {_cell(speedup('keras_hub'), '.2f')} "
                  f"| {_cell(speedup('torch'), '.2f')} "
                  f"| {_cell(percent.get('ours'), '.0f')} "
                  f"| {_cell(percent.get('keras_hub'), '.0f')} "
                  f"| {_cell(percent.get('torch'), '.0f')} "
                  f"| {limit_rate / 1e9:.0f} | {os.getloadavg()[0]:.1f} |",
                  flush=True)


if __name__ == "__main__":
    app.run(main)
