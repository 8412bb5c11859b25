"""Training step time and peak RSS of LoRA against full fine-tuning.

    python benchmarks/lora_step.py --model_dir=DIR [--batch_size=32]
        [--seq_length=128] [--steps=20] [--rank=8] [--targets=query,value]

DIR is a Google-layout folder (`bert_config.json`, `bert_model.ckpt`; e.g.
`fetch_pretrained.py --model=all-MiniLM-L6-v2`'s). Each mode (full, lora)
runs in a fresh process of its own, so each peak RSS (`ru_maxrss`) is its
own: a BertClassifier (2 labels) loaded from DIR, compiled with the
project's optimizer as the scripts do, trained on one random batch of
batch_size x seq_length; the step time is the median of `--steps` steps
after 3 warm-up steps (tracing excluded), as wall clock and as the process's
CPU time (all its threads: the work a step costs, less disturbed than wall
clock on a loaded machine). Prints one JSON line per mode and a Markdown
table.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WARMUP_STEPS = 3


def measure(args, mode):
    """{mode, step_s, peak_rss_mb, trainable}: runs in this process."""
    import numpy as np

    from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints, optimization

    config = BertConfig.from_json_file(
        os.path.join(args.model_dir, "bert_config.json"))
    model = BertClassifier(config, num_labels=2)
    checkpoints.load_tf1_checkpoint(model, args.model_dir, verbose=False)
    if mode == "lora":
        model.enable_lora(args.rank, targets=args.targets)
    model.compile(optimizer=optimization.create_optimizer(
        1e-4, WARMUP_STEPS + args.steps, 0))
    rng = np.random.default_rng(0)
    shape = (args.batch_size, args.seq_length)
    x = {"input_ids": rng.integers(1, config.vocab_size, shape).astype("int32"),
         "input_mask": np.ones(shape, "int32"),
         "segment_ids": np.zeros(shape, "int32")}
    y = rng.integers(0, 2, args.batch_size).astype("int32")
    times, cpu_times = [], []
    for step in range(WARMUP_STEPS + args.steps):
        start, cpu_start = time.perf_counter(), time.process_time()
        model.train_on_batch(x, y)
        if step >= WARMUP_STEPS:
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu_start)
    return {"mode": mode, "step_s": round(statistics.median(times), 4),
            "step_cpu_s": round(statistics.median(cpu_times), 4),
            "peak_rss_mb": round(resource.getrusage(
                resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "trainable": int(sum(np.prod(v.shape)
                                 for v in model.trainable_weights))}


def _parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--targets", default="query,value")
    parser.add_argument("--mode", choices=("full", "lora"), default=None,
                        help="measure one mode in this process")
    return parser.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = _parse_args(argv)
    if args.mode:
        print(json.dumps(measure(args, args.mode)), flush=True)
        return
    results = []
    for mode in ("full", "lora"):
        output = subprocess.run(
            [sys.executable, os.path.abspath(__file__), *argv,
             f"--mode={mode}"], cwd=REPO, check=True, capture_output=True,
            text=True, env=dict(os.environ, PYTHONPATH=REPO)).stdout
        results.append(json.loads(output.strip().splitlines()[-1]))
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    print(f"| {args.batch_size}x{args.seq_length} | step s (wall) | "
          "step CPU s | peak RSS MB | trainable weights |\n"
          "|---|---:|---:|---:|---:|")
    for result in results:
        print(f"| {result['mode']} | {result['step_s']:.3f} | "
              f"{result['step_cpu_s']:.3f} | {result['peak_rss_mb']:.0f} | "
              f"{result['trainable']:,} |")


if __name__ == "__main__":
    main()
