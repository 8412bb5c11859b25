"""Peak memory and size of each export format, one child process per format.

    python benchmarks/export_memory.py --config=../shared/data/bert_models/uncased_L-12_H-768_A-12/bert_config.json
    python benchmarks/export_memory.py --config=$HOME/.cache/bert-keras-tf1compat/all-MiniLM-L6-v2/bert_config.json --cap_gb=3

A classifier of the config's shapes with random weights (max_seq_length 128
by default) is exported by `bert_tf1.export_model(formats=[format])` in a
fresh process, so each row is that format's own peak resident memory (the
child's `ru_maxrss`, TensorFlow's start included). A watchdog kills a child
whose resident memory passes `--cap_gb`: a regression fails the row instead
of swapping the machine. Also printed: each folder's size against the
weights' bytes (a SavedModel stores every weight once).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMATS = ("saved_model", "numeric", "openvino", "litert", "onnx")
_CHILD = """
import os, sys, json
sys.path.insert(0, {repo!r})
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from bert_tf1 import BertClassifier, BertConfig, BertPreprocessor, export_model
config = BertConfig.from_json_file({config!r})
model = BertClassifier(config=config, num_labels=2)
preprocessor = BertPreprocessor({vocab!r}, True, {length})
model(preprocessor(["warm up"]))
export_model(model, {out!r}, formats=[{name!r}], preprocessor=preprocessor)
print(json.dumps({{"weights": int(sum(v.numpy().nbytes for v in model.weights))}}))
"""


def _rss_bytes(pid):
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def _folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(root, name))
               for root, _, names in os.walk(folder) for name in names)


def export_one(name, config, vocab, length, cap_bytes, folder):
    """(peak RSS bytes, seconds, the folder's bytes, the weights' bytes,
    killed) of one format's export in a child process."""
    out = os.path.join(folder, name)
    code = _CHILD.format(repo=REPO, config=config, vocab=vocab, length=length,
                         out=out, name=name)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    killed, peaks = [], [0]

    def watch():
        while child.poll() is None:
            peaks[0] = max(peaks[0], _rss_bytes(child.pid))
            if peaks[0] > cap_bytes:
                killed.append(True)
                child.kill()
                return
            time.sleep(0.1)
    threading.Thread(target=watch, daemon=True).start()
    stdout, stderr = child.communicate()
    seconds = time.perf_counter() - start
    # The kernel's peak of the largest child so far, where this child set
    # it; else the watchdog's largest sample (every 0.1 s).
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    peak = largest * 1024 if largest > before else peaks[0]
    if child.returncode != 0 and not killed:
        raise RuntimeError(f"{name}: the export failed:\n{stderr[-3000:]}")
    weights = json.loads(stdout.strip().splitlines()[-1])["weights"] if (
        not killed) else 0
    return (peak, seconds, _folder_bytes(out) if not killed else 0, weights,
            bool(killed))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--vocab", default=None,
                        help="default: vocab.txt beside --config")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--cap_gb", type=float, default=6.0)
    args = parser.parse_args()
    vocab = args.vocab or os.path.join(os.path.dirname(args.config),
                                       "vocab.txt")
    print(f"{'format':<12} {'peak RSS GB':>11} {'seconds':>8} "
          f"{'folder MB':>10} {'x weights':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.formats.split(","):
            peak, seconds, size, weights, killed = export_one(
                name, args.config, vocab, args.max_seq_length,
                args.cap_gb * 2 ** 30, folder)
            if killed:
                print(f"{name:<12} {'> cap':>11} {seconds:>8.0f}   killed at "
                      f"{args.cap_gb} GB")
                continue
            print(f"{name:<12} {peak / 2 ** 30:>11.2f} {seconds:>8.0f} "
                  f"{size / 1e6:>10.1f} {size / weights:>9.2f}", flush=True)


if __name__ == "__main__":
    main()
