r"""Batch inference on Beam's DirectRunner: lines/s at 1 and 2 workers, the
padding token-bounded batches save against fixed-size ones, and each
worker's peak memory (docs/batch_inference.md).

    nice python benchmarks/batch_inference.py --sizes=100000 --worker_counts=1,2
    nice python benchmarks/batch_inference.py --sizes=10000,200000 --worker_counts=2

Input: SST-2 train sentences, repeated to --sizes. Model: a classifier
export of the shared MRPC fixture (H=32, L=2), or with --model_dir a
Google-layout folder (e.g. all-MiniLM-L6-v2) exported as an encoder is
not needed: extract_features.py's path (--pooling=mean) runs on it.
Each run is `predict_text.py --runner=DirectRunner` (or extract_features.py)
in a child process; a sampler reads /proc every 0.2 s (the tree sampler of
benchmarks/pretraining_data.py) and keeps each Beam worker's peak RSS
(VmHWM). lines/s = lines / the child's wall seconds (start-up included).
Padding: computed tokens (rows x longest, summed over batches) of the same
lines in --max_tokens batches grouped by length (ours) against batches of
--fixed_batch lines in input order cut to their longest, and against
padding every line to --max_seq_length (the export's text signatures).
"""
import csv
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

from absl import app
from absl import flags

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.pretraining_data import TreeSampler  # noqa: E402

_SHARED = REPO_ROOT.parent / "shared"
MRPC = _SHARED / "fixtures" / "tf1_vocab_mrpc_classifier"

flags.DEFINE_list("sizes", ["100000"], "Corpus sizes (lines).")
flags.DEFINE_list("worker_counts", ["1", "2"], "DirectRunner worker counts.")
flags.DEFINE_string("model_dir", None, "A Google-layout model folder: "
                    "embed with extract_features.py --pooling=mean "
                    "(default: classify with an MRPC fixture export).")
flags.DEFINE_integer("max_tokens", 8192, "--max_tokens of the runs.")
flags.DEFINE_integer("fixed_batch", 64, "Lines per fixed-size batch.")
flags.DEFINE_integer("max_seq_length", 128, "--max_seq_length.")
FLAGS = flags.FLAGS


def sentences(count):
    with open(_SHARED / "data/glue/SST-2/train.tsv", encoding="utf-8") as f:
        rows = [row[0] for row in csv.reader(f, delimiter="\t",
                                             quotechar=None)][1:]
    return [rows[i % len(rows)] for i in range(count)]


def padding_table(lines, vocab, max_tokens, fixed_batch, max_seq_length):
    """Computed tokens of the three batchings of `lines`."""
    from serving.batch_inference import (ModelSpec, ReadShardFn,
                                         TokenBoundedBatches)

    spec = ModelSpec(model_type="classifier", tokenizer=(vocab, True),
                     max_seq_length=max_seq_length)
    rows = list(ReadShardFn._rows(spec, enumerate([(t,) for t in lines], 1)))
    batcher = TokenBoundedBatches(max_tokens, max_seq_length)
    batcher.start_bundle()
    ours = [b for row in rows for b in batcher.process(row)]
    ours += [value.value for value in batcher.finish_bundle()]
    fixed = [rows[i:i + fixed_batch] for i in range(0, len(rows), fixed_batch)]
    real = sum(len(row.ids) for row in rows)

    def computed(batches):
        return sum(len(b) * max(len(row.ids) for row in b) for b in batches)

    return real, {"token-bounded, length-grouped (ours)": computed(ours),
                  "fixed %d lines, cut to longest" % fixed_batch:
                  computed(fixed),
                  "padded to max_seq_length": len(rows) * max_seq_length}


def run(argv, env):
    start = time.perf_counter()
    process = subprocess.Popen(argv, cwd=REPO_ROOT, env=env,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(process.pid)
    sampler.start()
    _, stderr = process.communicate()
    sampler.stop.set()
    sampler.join()
    if process.returncode:
        raise RuntimeError(stderr[-3000:])
    # One worker runs inside the driver (Beam's in-process runner).
    return time.perf_counter() - start, (sampler.workers() or [
        sampler.peaks.get(process.pid, 0.0)])


def main(argv):
    del argv
    work = pathlib.Path(tempfile.mkdtemp(prefix="batch_inference_bench-"))
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), CUDA_VISIBLE_DEVICES="",
               TF_CPP_MIN_LOG_LEVEL="2")
    model = pathlib.Path(FLAGS.model_dir) if FLAGS.model_dir else MRPC
    try:
        if FLAGS.model_dir:
            script = ["extract_features.py", "--pooling=mean",
                      f"--vocab_file={model / 'vocab.txt'}",
                      f"--bert_config_file={model / 'bert_config.json'}",
                      f"--init_checkpoint={model / 'bert_model.ckpt'}"]
        else:
            from serving import export_saved_model
            export = export_saved_model(
                work / "export", model_type="classifier", label_list=["0", "1"],
                init_checkpoint=str(MRPC), max_seq_length=FLAGS.max_seq_length,
                bert_config_file=str(MRPC / "bert_config.json"),
                vocab_file=str(MRPC / "vocab.txt"))
            script = ["predict_text.py", f"--export_dir={export}"]
        print("| lines | workers | wall s | lines/s | efficiency | peak RSS "
              "per worker MB |\n|---|---|---|---|---|---|")
        for count in [int(n) for n in FLAGS.sizes]:
            corpus = work / f"corpus-{count}.txt"
            text = sentences(count)
            corpus.write_text("".join(t + "\n" for t in text),
                              encoding="utf-8")
            one = None
            for workers in [int(n) for n in FLAGS.worker_counts]:
                out = work / f"out-{count}-{workers}"
                seconds, peaks = run([sys.executable] + script + [
                    f"--input_file={corpus}", "--runner=DirectRunner",
                    f"--num_workers={workers}", f"--output_dir={out}",
                    f"--max_seq_length={FLAGS.max_seq_length}",
                    f"--max_tokens={FLAGS.max_tokens}"], env)
                rate = count / seconds
                one = one or rate * 1.0 / workers
                print("| %d | %d | %.1f | %.0f | %.2f | %s |" % (
                    count, workers, seconds, rate, rate / (one * workers),
                    ", ".join("%.0f" % mb for mb in sorted(peaks)) or "-"))
                shutil.rmtree(out)
        real, table = padding_table(text, str(model / "vocab.txt"),
                                    FLAGS.max_tokens, FLAGS.fixed_batch,
                                    FLAGS.max_seq_length)
        print("\n| batching (%d lines, %d real tokens) | computed tokens | "
              "padding share |\n|---|---|---|" % (len(text), real))
        for name, tokens in table.items():
            print("| %s | %d | %.1f%% |" % (name, tokens,
                                            100.0 * (tokens - real) / tokens))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
