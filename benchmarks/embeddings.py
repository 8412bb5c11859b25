"""Sentence-embedding training, ours beside sentence-transformers (issue #46).

    python fetch_pretrained.py --model=all-MiniLM-L6-v2 \
        --keep_hugging_face_folder --output_dir=MODEL
    python benchmarks/embeddings.py --model_dir=MODEL --work_dir=/tmp/emb \
        [--tasks=sts-b,qnli,squad] [--sides=untrained,ours,peer,peer_original] \
        [--peer_python=/work/peer-venv/bin/python] [--sts_epochs=1]
    python benchmarks/embeddings.py --model_dir=MODEL --work_dir=/tmp/emb \
        --speed --steps=20          # seconds per MNRL step, batch 64
    python benchmarks/embeddings.py --model_dir=MODEL --work_dir=/tmp/emb \
        --memory                    # peak RSS: plain 128, 256; cached 1,024

Quality rows: `embedding_data.py` writes the splits and one batch order per
task into `--work_dir`; each side trains on those rows in that order
(`embeddings_ours.py` in this environment, `embeddings_peer.py` in
`--peer_python`'s, sentence-transformers 6.2.0 from the model folder's
`huggingface/`, `HF_HUB_OFFLINE=1`) and embeds the evaluation texts into
.npy files; both sides' vectors are scored by the same code,
`bert_tf1.data.embeddings.metrics` (STS-B: Spearman x 100 of cosine vs
score; retrieval: MRR@10 and Recall@10 x 100). `untrained` is the fetched
model before training (ours; the peer's untrained vectors equal them,
docs/real_model.md). Recipe, both sides: STS-B CoSENT batch 16, QNLI and
SQuAD MultipleNegativesRanking batch 64, scale 20, lr 2e-5, warm-up 10% of
the steps, max_seq_length 128. `peer` trains with PyTorch's AdamW (bias
correction, transformers' schedule), `peer_original` with the original BERT's
update rule and schedule, as ours (`embeddings_peer.py --optimizer=original`).
Steps already done (their .json/.npy in
`--work_dir`) are not run again.

`--speed`: the first `--warmup + --steps` batches of 64 pairs of texts of
26-34 wordpieces (SQuAD training sentences, paired in file order), MNRL,
timed per step on each side back to back (wall and process CPU seconds,
medians; the first `--warmup` steps, tracing included, left out), every
process pinned to the same CPUs (`--cpus`, `taskset`) with two threads.
Our sides run with `TF_ENABLE_ONEDNN_OPTS=1`, as the scripts set it
(TensorFlow 2.21 turns its oneDNN kernels on by default only on CPUs with
AVX-512); `ours_tf_default` is ours without it (TensorFlow's default
kernels: Eigen on an AVX2-only CPU).
`--memory`: ours, one training step on QNLI training pairs padded to 128,
peak RSS of the process (plain loss at batches 128 and 256, gradient
caching `--mini_batch_size` at 1,024).
Prints markdown tables; writes `--work_dir/results.json`.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import embedding_data  # noqa: E402  (benchmarks/, standard library only)

RECIPES = {"sts-b": ("cosent", 16), "qnli": ("mnrl", 64),
           "squad": ("mnrl", 64)}


def _parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--work_dir", required=True)
    parser.add_argument("--tasks", default="sts-b,qnli,squad")
    parser.add_argument("--sides", default="untrained,ours,peer_original,peer")
    parser.add_argument("--peer_python", default="/work/peer-venv/bin/python")
    parser.add_argument("--sts_epochs", type=int, default=1)
    parser.add_argument("--retrieval_epochs", type=int, default=1)
    parser.add_argument("--max_steps", type=int, default=None,
                        help="Train on the first that many batches of each "
                        "order only (a busy machine).")
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--warmup_proportion", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cpus", default="0,1",
                        help="taskset CPU list for every worker.")
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--mini_batch_size", type=int, default=32)
    return parser.parse_args(argv)


def _worker(args, side, mode, options, log):
    """Runs one worker; returns its JSON line as a dict."""
    if side.startswith("peer"):
        command = [args.peer_python, os.path.join(HERE, "embeddings_peer.py"),
                   mode, f"--model_dir={args.model_dir}/huggingface"]
    else:
        command = [sys.executable, os.path.join(HERE, "embeddings_ours.py"),
                   mode, f"--model_dir={args.model_dir}"]
    command += [f"--{key}={value}" for key, value in options.items()]
    command += [f"--threads={args.threads}", f"--seed={args.seed}"]
    if args.cpus:
        command = ["taskset", "-c", args.cpus] + command
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=REPO, OMP_NUM_THREADS=str(args.threads))
    if side == "ours_tf_default":
        env.pop("TF_ENABLE_ONEDNN_OPTS", None)
    elif not side.startswith("peer"):
        # As the scripts (`quiet_start.start_tensorflow`) and compare.py:
        # TensorFlow's oneDNN kernels, which TF 2.21 turns on by default
        # only on CPUs with AVX-512 (a Python user sets it the same way).
        env["TF_ENABLE_ONEDNN_OPTS"] = "1"
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    with open(log, "a", encoding="utf-8") as stderr:
        result = subprocess.run(command, stdout=subprocess.PIPE,
                                stderr=stderr, text=True, env=env,
                                check=False)
    if result.returncode:
        raise SystemExit(f"{side} {mode} failed ({result.returncode}); "
                         f"see {log}")
    line = result.stdout.strip().splitlines()[-1]
    return dict(json.loads(line), command=" ".join(command))


def _texts_files(task, folder):
    if task == "sts-b":
        dev = embedding_data.sts_b("dev")
        for column, name in ((0, "dev_a.txt"), (1, "dev_b.txt")):
            with open(os.path.join(folder, name), "w",
                      encoding="utf-8") as writer:
                writer.write("".join(row[column] + "\n" for row in dev))
        return ["dev_a", "dev_b"]
    return ["queries", "corpus"]


def _score(task, folder, side):
    import numpy as np

    from bert_tf1.data.embeddings import metrics

    if task == "sts-b":
        a = np.load(os.path.join(folder, f"{side}_dev_a.npy"))
        b = np.load(os.path.join(folder, f"{side}_dev_b.npy"))
        scores = [row[2] for row in embedding_data.sts_b("dev")]
        result = metrics.sts_correlations(a, b, scores)
        return {"spearman": 100 * result["spearman"],
                "pearson": 100 * result["pearson"]}
    queries = np.load(os.path.join(folder, f"{side}_queries.npy"))
    corpus = np.load(os.path.join(folder, f"{side}_corpus.npy"))
    with open(os.path.join(folder, "relevant.json"), encoding="utf-8") as f:
        relevant = [set(ids) for ids in json.load(f)]
    result = metrics.retrieval_metrics(queries, corpus, relevant)
    return {name: 100 * float(value) for name, value in result.items()}


def quality(args):
    summary_path = os.path.join(args.work_dir, "summary.json")
    if os.path.exists(summary_path):  # the same rules: the same files
        with open(summary_path, encoding="utf-8") as reader:
            summary = json.load(reader)
    else:
        summary = embedding_data.prepare(
            args.work_dir, sts_epochs=args.sts_epochs,
            retrieval_epochs=args.retrieval_epochs, seed=args.seed,
            max_steps=args.max_steps)
    tasks, sides = args.tasks.split(","), args.sides.split(",")
    for task in tasks:
        folder = os.path.join(args.work_dir, task)
        names = _texts_files(task, folder)
        loss, batch = RECIPES[task]
        steps = summary[task]["steps"]
        for side in sides:
            record = os.path.join(folder, f"{side}.json")
            if os.path.exists(record):
                continue
            log = os.path.join(folder, f"{side}.log")
            if side == "untrained":
                run = {}
                for name in names:
                    run[name] = _worker(args, "ours", "embed", {
                        "texts_file": f"{folder}/{name}.txt",
                        "output_npy": f"{folder}/{side}_{name}.npy"}, log)
            else:
                options = {
                    "train_file": f"{folder}/train_ordered.tsv",
                    "loss": loss, "batch_size": batch,
                    "learning_rate": args.learning_rate,
                    "warmup_steps": int(args.warmup_proportion * steps),
                    "max_seq_length": 128, "embed": ",".join(
                        f"{folder}/{name}.txt={folder}/{side}_{name}.npy"
                        for name in names)}
                if side == "peer_original":  # the original's update rule
                    options["optimizer"] = "original"
                run = _worker(args, side, "train", options, log)
            with open(record, "w", encoding="utf-8") as writer:
                json.dump(run, writer)
    results = {}
    for task in tasks:
        folder = os.path.join(args.work_dir, task)
        for side in sides:
            with open(os.path.join(folder, f"{side}.json"),
                      encoding="utf-8") as reader:
                run = json.load(reader)
            results[f"{task}/{side}"] = dict(run, **_score(task, folder, side))
            print(f"{task} {side}: {results[f'{task}/{side}']}",
                  file=sys.stderr, flush=True)
    return results, summary


def _speed_rows(args):
    """64-pair batches of 26-34-wordpiece texts (module docstring)."""
    sys.path.insert(0, REPO)
    from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer

    tokenizer = FullTokenizer(os.path.join(args.model_dir, "vocab.txt"))
    pairs, _ = embedding_data.squad()
    texts = []
    for _, sentence in pairs:
        if 26 <= len(tokenizer.tokenize(sentence)) <= 34 and \
                sentence not in texts:
            texts.append(sentence)
    rows = list(zip(texts[0::2], texts[1::2]))
    needed = 64 * (args.steps + args.warmup)
    rows = (rows * (needed // len(rows) + 1))[:needed]
    path = os.path.join(args.work_dir, "speed_rows.tsv")
    os.makedirs(args.work_dir, exist_ok=True)
    with open(path, "w", encoding="utf-8") as writer:
        writer.write("".join(f"{a}\t{b}\n" for a, b in rows))
    return path, len(texts)


def speed(args):
    path, distinct = _speed_rows(args)
    log = os.path.join(args.work_dir, "speed.log")
    results = {"distinct_texts": distinct}
    for side in ("ours", "ours_tf_default", "peer"):
        results[side] = _worker(args, side, "steps", {
            "train_file": path, "loss": "mnrl", "batch_size": 64,
            "steps": args.steps, "warmup_steps": args.warmup,
            "max_seq_length": 128}, log)
        results[side]["load_after"] = os.getloadavg()[0]
    return results


def memory(args):
    folder = os.path.join(args.work_dir, "qnli")
    if not os.path.exists(os.path.join(folder, "train_ordered.tsv")):
        embedding_data.prepare(args.work_dir, seed=args.seed)
    log = os.path.join(args.work_dir, "memory.log")
    results = {}
    for batch, mini in ((128, None), (256, None),
                        (1024, args.mini_batch_size)):
        options = {"train_file": f"{folder}/train_ordered.tsv",
                   "loss": "mnrl", "batch_size": batch,
                   "max_seq_length": 128}
        if mini:
            options["mini_batch_size"] = mini
        results[f"{batch}/{mini or 'plain'}"] = _worker(
            args, "ours", "rss", options, log)
    return results


def _cpu():
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True,
                              check=False).stdout
    except OSError:
        return platform.processor()
    names = [line.split(":", 1)[1].strip() for line in text.splitlines()
             if line.startswith("Model name")]
    return names[0] if names else platform.processor()


def table(everything):
    """Markdown rows of whatever `everything` (results.json) holds."""
    lines = ["| row | untrained | ours | peer (AdamW) | ours - peer | "
             "peer (the original's rule) | ours - that |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    quality_rows = everything.get("quality", {})
    for task, metric in (("sts-b", "spearman"), ("qnli", "mrr@10"),
                         ("qnli", "recall@10"), ("squad", "mrr@10"),
                         ("squad", "recall@10")):
        values = [quality_rows.get(f"{task}/{side}", {}).get(metric)
                  for side in ("untrained", "ours", "peer", "peer_original")]
        if all(value is None for value in values):
            continue
        cells = ["-" if value is None else f"{value:.2f}" for value in values]
        gaps = ["-" if None in (values[1], peer) else f"{values[1] - peer:+.2f}"
                for peer in values[2:]]
        lines.append(f"| {task} {metric} | " + " | ".join(
            cells[:3] + gaps[:1] + cells[3:] + gaps[1:]) + " |")
    speed_rows = everything.get("speed")
    if speed_rows:
        lines += ["", "| MNRL step, batch 64 | wall s (median) | "
                  "CPU s (median) | load after |", "|---|---:|---:|---:|"]
        for side in ("ours", "ours_tf_default", "peer"):
            row = speed_rows.get(side)
            if row is None:
                continue
            lines.append(f"| {side} | {row['median_step_s']:.3f} | "
                         f"{row['median_step_cpu_s']:.3f} | "
                         f"{row['load_after']:.1f} |")
    memory_rows = everything.get("memory")
    if memory_rows:
        lines += ["", "| batch (seq 128) | loss | peak RSS MB | step s |",
                  "|---:|---|---:|---:|"]
        for key, row in memory_rows.items():
            kind = (f"gradient caching, mini-batch {row['mini_batch_size']}"
                    if row["mini_batch_size"] else "plain")
            lines.append(f"| {row['batch_size']} | {kind} | "
                         f"{row['peak_rss_mb']} | {row['step_s']} |")
    return "\n".join(lines)


def main(argv=None):
    args = _parse_args(argv)
    os.makedirs(args.work_dir, exist_ok=True)
    output = os.path.join(args.work_dir, "results.json")
    everything = {}
    if os.path.exists(output):
        with open(output, encoding="utf-8") as reader:
            everything = json.load(reader)
    everything.update(cpu=_cpu(), cpus=os.cpu_count(),
                      load_start=os.getloadavg()[0])
    if args.speed:
        everything["speed"] = speed(args)
    elif args.memory:
        everything["memory"] = memory(args)
    else:
        everything["quality"], everything["data"] = quality(args)
    everything["load_end"] = os.getloadavg()[0]
    with open(output + ".tmp", "w", encoding="utf-8") as writer:
        json.dump(everything, writer, indent=1)
    os.replace(output + ".tmp", output)
    print(f"CPU: {everything['cpu']} ({everything['cpus']} cores), load "
          f"{everything['load_start']:.1f} -> {everything['load_end']:.1f}")
    print(table(everything))


if __name__ == "__main__":
    main()
