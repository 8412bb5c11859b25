"""Fine-tuning time with fixed padding, dynamic padding and length groups.

    python benchmarks/padding_speed.py --model_dir=$(python fetch_pretrained.py \
        --model=all-MiniLM-L6-v2) [--examples=6400] [--work_dir=/tmp/padding_speed]

Runs `run_classifier.py` three times on the same fixed SST-2 subset (the
first `--examples` training sentences; all 872 dev sentences), one epoch,
batch 32, lr 5e-5, max_seq_length 128, the same seed:
- `fixed`: `--dynamic_padding=false`, every batch at 128 (the original);
- `dynamic`: the default, each batch cut to its longest sentence (multiple of 8);
- `group_by_length`: `--group_by_length`, batches of similar length.
Training time is the sum of the step logs' `(x sec)` (every `--log_steps`
steps; the first window includes tracing), so start-up, featurization and
evaluation are not counted. Prints one markdown table: training seconds,
speed-up against `fixed`, the same without the first window (tracing for
every new batch shape lands there), examples/s, dev accuracy.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SST2 = os.path.join(REPO, "..", "shared", "data", "glue", "SST-2")
STEP_LOG = re.compile(r"loss = [\d.naif-]+, step = (\d+) \(([\d.]+) sec\)")
VARIANTS = {"fixed": ["--dynamic_padding=false"], "dynamic": [],
            "group_by_length": ["--group_by_length"]}


def subset(data_dir, folder, examples):
    """SST-2 with the first `examples` training lines, the whole dev set."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(data_dir, "train.tsv"), encoding="utf-8") as f:
        lines = f.readlines()[:examples + 1]
    with open(os.path.join(folder, "train.tsv"), "w", encoding="utf-8") as f:
        f.writelines(lines)
    shutil.copy(os.path.join(data_dir, "dev.tsv"), folder)
    return folder


def run(variant, args, data_dir):
    output_dir = os.path.join(args.work_dir, variant)
    shutil.rmtree(output_dir, ignore_errors=True)
    model = args.model_dir
    command = [sys.executable, os.path.join(REPO, "run_classifier.py"),
               "--task_name=SST-2", "--do_train", "--do_eval",
               f"--data_dir={data_dir}", f"--vocab_file={model}/vocab.txt",
               f"--bert_config_file={model}/bert_config.json",
               f"--init_checkpoint={model}/bert_model.ckpt",
               "--max_seq_length=128", "--train_batch_size=32",
               "--learning_rate=5e-5", "--num_train_epochs=1",
               f"--log_steps={args.log_steps}", "--seed=1",
               "--eval_batch_size=32", f"--output_dir={output_dir}",
               *VARIANTS[variant]]
    start = time.perf_counter()
    process = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if process.returncode:
        sys.exit(f"{variant} failed:\n{process.stderr[-3000:]}")
    windows = [(int(m.group(1)), float(m.group(2)))
               for m in STEP_LOG.finditer(process.stderr)]
    results = {}
    with open(os.path.join(output_dir, "eval_results.txt")) as f:
        for line in f:
            key, value = line.strip().split(" = ")
            results[key] = float(value)
    return {"train_s": sum(s for _, s in windows), "steps": windows[-1][0],
            "later_s": sum(s for _, s in windows[1:]),
            "later_steps": windows[-1][0] - windows[0][0],
            "accuracy": results["eval_accuracy"], "wall_s": wall}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--examples", type=int, default=6400)
    parser.add_argument("--log_steps", type=int, default=20)
    parser.add_argument("--work_dir", default="/tmp/padding_speed")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    data_dir = subset(SST2, os.path.join(args.work_dir, "SST-2"), args.examples)
    rows = {}
    for variant in args.variants.split(","):
        rows[variant] = run(variant, args, data_dir)
        print(f"{variant}: {rows[variant]}", file=sys.stderr, flush=True)
    base = rows.get("fixed")
    print(f"SST-2, first {args.examples} training sentences, 1 epoch, batch 32, "
          f"max_seq_length 128; {os.cpu_count()} CPUs; load at end "
          f"{os.getloadavg()[0]:.1f}")
    print("| padding | steps | training s (step logs) | vs fixed | vs fixed "
          "after the first window | examples/s | dev accuracy | process wall s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for variant, row in rows.items():
        speedup = f"{base['train_s'] / row['train_s']:.2f}x" if base else ""
        later = (f"{base['later_s'] / row['later_s']:.2f}x"
                 if base and row["later_s"] else "")
        print(f"| {variant} | {row['steps']} | {row['train_s']:.1f} | {speedup} | "
              f"{later} | {row['steps'] * 32 / row['train_s']:.1f} | "
              f"{100 * row['accuracy']:.2f}% | {row['wall_s']:.0f} |")


if __name__ == "__main__":
    main()
