"""Our BERT against keras-hub, PyTorch (eager and compiled) and ONNX Runtime.

    python benchmarks/compare.py [--threads=1] [--reps=5] [--only=infer_8x128]
        [--bert_config_file=../shared/data/bert_models/uncased_L-12_H-768_A-12/bert_config.json]
        [--model_dir=<Google-layout folder> [--exports_dir=DIR]] [--skip=ours_mixed]

Rows (BERT-Base shapes by default, random weights and ids, no padding), each
in fp32, bf16 and (inference) int8:
- `infer_8x128`, `infer_1x128` (latency), `infer_1x512`: the encoder forward
  pass (sequence and pooled outputs), dropout off;
- `train_8x128`: one fine-tuning step of a 2-class classifier (dropout on,
  forward, backward, global-norm clipping at 1.0, AdamW update); also
  `train_32x128`, and (only with `--cases`) `train_32x16`, `train_32x32`: the
  short batches of SST-2, where per-step overhead weighs.
Variants (see benchmarks/tf_bert.py and benchmarks/torch_bert.py):
- ours: `BertModel` / `BertClassifier`; bf16 inference from a bfloat16 copy
  of the weights, bf16 fine-tuning under `mixed_bfloat16`; int8 =
  `bert_tf1.modeling.inference.int8`; "ours_mixed" = bf16 inference under
  `mixed_bfloat16`; "ours_tf_default" = fp32 without TF_ENABLE_ONEDNN_OPTS;
- keras_hub: `BertBackbone` / `BertTextClassifier` (fp32, `mixed_bfloat16`);
- torch_eager: transformers `BertModel` with the config's GELU (tanh or erf)
  (bf16 = `torch.autocast`; int8 = `torch.ao` dynamic quantization);
- torch_compile: the same under `torch.compile` (inference: with inductor
  freezing; fine-tuning: the model compiled, the optimizer eager). The
  compile (its first call) is made before the timed steps and printed apart,
  in the last table;
- onnxruntime: the same model exported to ONNX, fused, all graph
  optimizations (int8 = ORT dynamic quantization); only when installed;
- our deployment formats (`--model_dir`, benchmarks/formats_bert.py): the
  folder's checkpoint exported by `export_saved_model.py --model_type=encoder
  --format=numeric,openvino,litert,onnx` (and `--quantize=int8`) at the row's
  sequence length, run at its batch: "numeric" (the numeric SavedModel in
  TF), "openvino" (fp32, bf16 hint, int8 weight compression), "openvino_ptq"
  (int8 by NNCF post-training quantization), "litert", "onnx" (tf2onnx),
  "onnx_ortopt" (that after ONNX Runtime's BERT optimizer). With
  `--model_dir` every variant takes that folder's config; the formats run
  its real weights, the others random weights of the same shapes (the same
  FLOPs). A table per row's fastest of ours against the fastest peer
  (keras_hub, torch_eager, torch_compile, onnxruntime) follows the rows.
TensorFlow variants run with TF_ENABLE_ONEDNN_OPTS=1 (`--tf_onednn`; TF 2.21
leaves oneDNN off on CPUs without AVX-512).

The limit: per precision, the best matmul rate that any framework reaches on
this machine in the same run: a chain of BERT's feed-forward matmuls
([tokens, hidden] x [hidden, intermediate] x [intermediate, hidden], tokens =
batch x sequence of the row) in TensorFlow, PyTorch and NumPy (fp32), in TF and
PyTorch (bf16), XLA s8 x s8 (TF) and fbgemm dynamic int8 Linear (PyTorch)
for int8. Every variant's "% limit" is model FLOPs / its time / that rate
(training counts 3x the forward FLOPs; embeddings omitted).

Method: every variant runs in its own process (no shared thread pools);
all variants of a row are built and warmed up, then timed in round-robin
repetitions (each repetition runs every variant once, in turn), so load
changes hit all alike; tables give medians. `--threads=N` pins every process to
the same N cores (0..N-1) and sets each framework's thread counts to N; with
`--clock=cpu` times are the process's CPU seconds, which with `--threads=1` do
not count time spent descheduled by other jobs. "vs ours" = their time / ours
(>1: ours faster). "load" is the 1-minute load average when the row finished.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from formats_bert import PRECISIONS as FORMAT_PRECISIONS

HERE = os.path.dirname(os.path.abspath(__file__))
_BASE_CONFIG = os.path.join(HERE, "..", "..", "shared", "data", "bert_models",
                            "uncased_L-12_H-768_A-12", "bert_config.json")
CASES = {"infer_8x128": ("infer", 8, 128), "infer_1x128": ("infer", 1, 128),
         "infer_1x512": ("infer", 1, 512),
         "train_8x128": ("train", 8, 128), "train_32x128": ("train", 32, 128),
         # SST-2's sentence lengths (run_main.sh's length-grouped batches).
         "train_32x16": ("train", 32, 16), "train_32x32": ("train", 32, 32)}
DEFAULT_CASES = ("infer_8x128", "infer_1x512", "train_8x128", "train_32x128")
#: Our export formats (benchmarks/formats_bert.py, with --model_dir); each
#: is skipped in the precisions it has no variant for.
FORMAT_VARIANTS = ["numeric", "openvino", "openvino_ptq", "litert", "onnx",
                   "onnx_ortopt"]
#: The peers. The goal of every speed row: the fastest of ours at >= 1.2x the
#: fastest of these (peer time / ours >= GOAL), training rows included, where
#: torch_compile is measured without its compile time.
PEERS = ("keras_hub", "torch_eager", "torch_compile", "onnxruntime")
GOAL = 1.2
# (variant, worker) per (mode, precision); "ours" first: the reference.
VARIANTS = {
    ("infer", "fp32"): ["ours", "ours_tf_default", "keras_hub", "torch_eager",
                        "torch_compile", "onnxruntime", *FORMAT_VARIANTS],
    ("infer", "bf16"): ["ours", "ours_mixed", "keras_hub", "torch_eager",
                        "torch_compile", *FORMAT_VARIANTS],
    ("infer", "int8"): ["ours", "ours@fp32", "torch_eager", "onnxruntime",
                        *FORMAT_VARIANTS],
    ("train", "fp32"): ["ours", "keras_hub", "torch_eager", "torch_compile"],
    ("train", "bf16"): ["ours", "keras_hub", "torch_eager", "torch_compile"],
}
LIMITS = {"fp32": ["matmul_tf", "matmul_torch", "matmul_numpy"],
          "bf16": ["matmul_tf", "matmul_torch"],
          "int8": ["matmul_tf", "matmul_torch"]}
TF_VARIANTS = {"ours", "ours_mixed", "ours_tf_default", "keras_hub",
               "matmul_tf", "matmul_numpy"}
CHAIN_PAIRS = 2


def forward_flops(config, batch_size, seq_length):
    """Multiply-adds x 2 of the encoder and pooler matmuls (embeddings omitted)."""
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    per_token = (8 * hidden * hidden + 4 * hidden * inner  # q,k,v,out + FFN
                 + 4 * seq_length * hidden)  # scores and context
    return (batch_size * seq_length * config["num_hidden_layers"] * per_token
            + batch_size * 2 * hidden * hidden)


def chain_flops(config, batch_size, seq_length):
    return (CHAIN_PAIRS * 4 * batch_size * seq_length
            * config["hidden_size"] * config["intermediate_size"])


class Worker:
    """One variant in its own process (protocol: benchmarks/bench_protocol.py)."""

    def __init__(self, label, settings):
        script = ("tf_bert.py" if settings["variant"] in TF_VARIANTS else
                  "formats_bert.py" if settings["variant"] in FORMAT_VARIANTS
                  else "torch_bert.py")
        self.label = label
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(HERE, script), json.dumps(settings)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().strip()
        words = line.split()
        # "ready compile <s>": it compiled on a first call, not timed.
        self.compile_seconds = (float(words[2]) if words[:2] == ["ready", "compile"]
                                else None)
        self.skipped = None if words[:1] == ["ready"] else (
            line or "died (see its error above)")
        if self.skipped:
            self.close()

    def run(self):
        """Runs one step; returns (wall seconds, cpu seconds)."""
        self.process.stdin.write("run\n")
        self.process.stdin.flush()
        words = self.process.stdout.readline().split()
        if len(words) != 3 or words[0] != "done":
            raise RuntimeError(f"{self.label}: worker answered {words!r} "
                               "(its error is printed above)")
        return float(words[1]), float(words[2])

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=120)


def make_exports(args, seq_length):
    """{fp32,int8}/<format>/ under `--exports_dir`/seq<N>: what
    export_saved_model.py --model_type=encoder writes from `--model_dir`
    (made once, kept for later runs); returns that folder."""
    folder = os.path.join(args.exports_dir, f"seq{seq_length}")
    for precision, extra in (("fp32", ["--format=numeric,openvino,litert,onnx"]),
                             ("int8", ["--format=openvino,litert,onnx",
                                       "--quantize=int8"])):
        if os.path.isdir(os.path.join(folder, precision)):
            continue
        command = [sys.executable, os.path.join(HERE, "..", "export_saved_model.py"),
                   "--model_type=encoder",
                   f"--vocab_file={args.model_dir}/vocab.txt",
                   f"--bert_config_file={args.model_dir}/bert_config.json",
                   f"--init_checkpoint={args.model_dir}/bert_model.ckpt",
                   f"--max_seq_length={seq_length}",
                   f"--export_dir={os.path.join(folder, precision)}", *extra]
        print(f"exporting: {' '.join(command)}", file=sys.stderr, flush=True)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return folder


def _settings(args, config, case, precision, variant, workdir):
    mode, batch_size, seq_length = CASES[case]
    onednn = args.tf_onednn and variant != "ours_tf_default"
    name = {"ours_tf_default": "ours", "ours@fp32": "ours"}.get(variant, variant)
    if variant == "ours@fp32":
        precision = "fp32"
    return dict(config=config, mode=mode, precision=precision, variant=name,
                batch_size=batch_size, seq_length=seq_length,
                threads=args.threads, onednn=onednn, workdir=workdir,
                cpus=list(range(args.threads)) if args.threads else None,
                chain_pairs=CHAIN_PAIRS,
                exports=(make_exports(args, seq_length) if args.model_dir
                         and variant in FORMAT_VARIANTS else None))


def measure_row(args, config, case, precision, workdir, compile_seconds):
    """{label: median seconds} for a row's variants and limit chains, and
    {label: reason} of those skipped; adds {(row, label): seconds} of the
    variants that compiled before their steps to `compile_seconds`."""
    mode = CASES[case][0]
    labels = [v for v in VARIANTS[(mode, precision)] if (
        not args.frameworks or any(v.startswith(f) for f in args.frameworks))
        and v not in args.skip
        and precision in FORMAT_PRECISIONS.get(v, (precision,))]
    labels += LIMITS[precision]
    workers, skipped = {}, {}
    try:
        for label in labels:
            worker = Worker(label, _settings(args, config, case, precision, label, workdir))
            if worker.skipped:
                skipped[label] = worker.skipped
            else:
                workers[label] = worker
                if worker.compile_seconds is not None:
                    compile_seconds[(f"{case}_{precision}", label)] = \
                        worker.compile_seconds
        for worker in workers.values():
            for _ in range(args.warmup):
                worker.run()
        times = {label: [] for label in workers}
        for _ in range(args.reps):
            for label, worker in workers.items():
                wall, cpu = worker.run()
                times[label].append(cpu if args.clock == "cpu" else wall)
    finally:
        for worker in workers.values():
            worker.close()
    return {label: statistics.median(t) for label, t in times.items()}, skipped


def _ms(seconds):
    """Milliseconds to three significant digits (1x128 rows take a few)."""
    return f"{1000 * seconds:.3g}" if seconds < 0.1 else f"{1000 * seconds:.0f}"


def print_row(config, case, precision, medians, skipped, limit_rates):
    mode, batch_size, seq_length = CASES[case]
    flops = forward_flops(config, batch_size, seq_length) * (3 if mode == "train" else 1)
    chain = chain_flops(config, batch_size, seq_length)
    rates = {label: chain / medians[label] for label in LIMITS[precision]
             if label in medians}
    limit_label = max(rates, key=rates.get)
    limit_rates[(case, precision)] = rates
    ours = medians.get("ours")
    load = os.getloadavg()[0]
    for label, seconds in medians.items():
        if label in LIMITS[precision]:
            continue
        speedup = "" if ours is None else f"{seconds / ours:.2f}"
        percent = 100.0 * flops / seconds / rates[limit_label]
        print(f"| {case}_{precision} | {label} | {_ms(seconds)} | {speedup} "
              f"| {percent:.0f} | {load:.1f} |", flush=True)
    for label, reason in skipped.items():
        print(f"| {case}_{precision} | {label} | - | | | skipped: {reason} |", flush=True)
    return best_against_peers(medians)


def best_against_peers(medians):
    """(fastest of ours, its ms, fastest peer, its ms, peer time / ours) of a
    row's medians (seconds), or None without both; "ours@fp32" (fp32 in an
    int8 row) does not count as ours."""
    ours = {k: v for k, v in medians.items() if k not in PEERS
            and not k.startswith("matmul") and k != "ours@fp32"}
    peers = {k: v for k, v in medians.items() if k in PEERS}
    if not ours or not peers:
        return None
    mine, theirs = min(ours, key=ours.get), min(peers, key=peers.get)
    return (mine, _ms(ours[mine]), theirs, _ms(peers[theirs]),
            peers[theirs] / ours[mine])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bert_config_file", default=_BASE_CONFIG)
    parser.add_argument("--num_hidden_layers", type=int, default=0,
                        help="Override the config's layer count (quick checks).")
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES))
    parser.add_argument("--precisions", default="fp32,bf16,int8")
    parser.add_argument("--frameworks", default="",
                        help="Comma-separated variant prefixes (e.g. ours,torch).")
    parser.add_argument("--only", default="", help="Rows whose `case_precision` "
                        "label contains one of these comma-separated strings.")
    parser.add_argument("--skip", default="",
                        help="Comma-separated variants left out (e.g. ours_mixed).")
    parser.add_argument("--model_dir", default="",
                        help="A Google-layout checkpoint folder: its config for "
                        "every variant and, exported by export_saved_model.py, "
                        "the rows of our formats (skipped without it).")
    parser.add_argument("--exports_dir", default="",
                        help="Where those exports are made and kept "
                        "(default: the run's scratch folder).")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=0,
                        help="Cores per process, pinned; 0: no pinning, defaults.")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    parser.add_argument("--tf_onednn", type=lambda s: s.lower() in ("1", "true", "yes"),
                        default=True)
    args = parser.parse_args(argv)
    args.frameworks = [f for f in args.frameworks.split(",") if f]
    args.skip = [f for f in args.skip.split(",") if f]
    if args.model_dir:
        args.bert_config_file = os.path.join(args.model_dir, "bert_config.json")
    with open(args.bert_config_file) as f:
        config = json.load(f)
    if args.num_hidden_layers:
        config["num_hidden_layers"] = args.num_hidden_layers
    versions = subprocess.run(
        [sys.executable, "-c", "import importlib.metadata as m\n"
         "for p in ('tensorflow','keras','keras-hub','torch','transformers',"
         "'onnxruntime','numpy','openvino','nncf','ai-edge-litert','tf2onnx'):\n"
         "  try: print(p, m.version(p))\n  except m.PackageNotFoundError: pass"],
        capture_output=True, text=True).stdout.split("\n")
    print(f"model: L={config['num_hidden_layers']} H={config['hidden_size']} "
          f"A={config['num_attention_heads']} I={config['intermediate_size']}; "
          f"{', '.join(v for v in versions if v)}; {os.cpu_count()} CPUs; threads "
          f"per process: {args.threads or 'default'}; {args.clock} clock; median "
          f"of {args.reps}; load at start {os.getloadavg()[0]:.1f}")
    print("| row | variant | ms | vs ours | % limit | load |")
    print("|---|---|---:|---:|---:|---:|")
    limit_rates, summary, compile_seconds = {}, {}, {}
    with tempfile.TemporaryDirectory() as workdir:
        args.exports_dir = args.exports_dir or os.path.join(workdir, "exports")
        for case in args.cases.split(","):
            for precision in args.precisions.split(","):
                label = f"{case}_{precision}"
                if (CASES[case][0], precision) not in VARIANTS or (
                        args.only and not any(p in label for p in args.only.split(","))):
                    continue
                medians, skipped = measure_row(args, config, case, precision,
                                               workdir, compile_seconds)
                summary[label] = print_row(config, case, precision, medians,
                                           skipped, limit_rates)
    print("\nlimit chains, GFLOP/s (int8: GOP/s), best = the row's limit:")
    print("| row | " + " | ".join(LIMITS["fp32"]) + " |")
    print("|---|" + "---:|" * len(LIMITS["fp32"]))
    for (case, precision), rates in limit_rates.items():
        cells = [f"{rates[l] / 1e9:.0f}" if l in rates else "" for l in LIMITS["fp32"]]
        print(f"| {case}_{precision} | " + " | ".join(cells) + " |")
    print(f"\nfastest of ours against the fastest peer (goal: >= {GOAL:.2f}):")
    print("| row | ours | ms | peer | ms | peer / ours |")
    print("|---|---|---:|---|---:|---:|")
    for label, best in summary.items():
        if best:
            print(f"| {label} | {best[0]} | {best[1]} | {best[2]} | "
                  f"{best[3]} | {best[4]:.2f} |")
    if compile_seconds:
        print("\ncompile time (the first call, made before the timed steps and "
              "not in them):")
        print("| row | variant | compile s |")
        print("|---|---|---:|")
        for (label, variant), seconds in compile_seconds.items():
            print(f"| {label} | {variant} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
