r"""Batch inference on Beam's DirectRunner: lines/s at 1 and 2 workers, each
worker's peak memory against the corpus size, and the padding and model
time that token-bounded batches save against fixed-size ones
(docs/batch_inference.md; the numbers are in benchmarks/README.md).

    M=/root/.cache/bert-keras-tf1compat/all-MiniLM-L6-v2
    nice python benchmarks/batch_inference.py --model_dir=$M --sizes=100000 \
        --worker_counts=1,2 --startup_lines=200 --timing_lines=0
    nice python benchmarks/batch_inference.py --model_dir=$M --sizes= \
        --timing_lines=1000
    nice python benchmarks/batch_inference.py --sizes=10000,50000,200000 \
        --worker_counts=2 --timing_lines=0
    nice python benchmarks/batch_inference.py --runner_probe \
        --sizes=10000,50000,200000 --worker_counts=2

Input: SST-2 train sentences (67,349), repeated to --sizes lines. Model: a
classifier export of the shared MRPC fixture (H=32, L=2) through
predict_text.py, or with --model_dir a Google-layout folder (e.g.
all-MiniLM-L6-v2) through extract_features.py --pooling=mean.

Runs: each is the script with --runner=DirectRunner in a child process,
always in Beam's multi_processing mode (with 1 worker too, so that 1 and 2
workers run the same way and each worker is a process of its own);
--lines_per_shard sets the shards, and a shard is the unit a worker takes
(fewer shards than workers leave workers idle). A sampler reads /proc every
0.2 s (benchmarks/pretraining_data.py's TreeSampler) and keeps the peak RSS
(VmHWM) of the driver and of each Beam worker process. lines/s = lines /
the child's wall seconds; with --startup_lines a run of that many lines is
timed first at each worker count and its wall time (Python, TensorFlow and
Beam start-up, model load) subtracted for the "net" rate.

Batching (--timing_lines): the same lines cut three ways -- batches of
similar length within --max_tokens padded tokens (ours,
bert_tf1.serving.batch_inference.TokenBoundedBatches), --fixed_batch lines in input
order cut to their longest, and --fixed_batch lines padded to
--max_seq_length (extract_features.py's one-process path) -- with the
tokens each computes, and the seconds of the model's `*_ids` signature over
all batches in this process (after one warm-up pass over the same batches).
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

_SHARED = pathlib.Path(os.environ.get("BERT_SHARED_DIR",
                                      REPO_ROOT.parent / "shared"))
MRPC = _SHARED / "fixtures" / "tf1_vocab_mrpc_classifier"

flags.DEFINE_list("sizes", ["100000"], "Corpus sizes (lines); empty: no "
                  "Beam runs.")
flags.DEFINE_list("worker_counts", ["1", "2"], "DirectRunner worker counts.")
flags.DEFINE_string("model_dir", None, "A Google-layout model folder: "
                    "embed with extract_features.py --pooling=mean "
                    "(default: classify with an MRPC fixture export).")
flags.DEFINE_integer("max_tokens", 8192, "--max_tokens of the runs.")
flags.DEFINE_integer("lines_per_shard", 5000, "--lines_per_shard of the runs.")
flags.DEFINE_integer("fixed_batch", 64, "Lines per fixed-size batch.")
flags.DEFINE_integer("max_seq_length", 128, "--max_seq_length.")
flags.DEFINE_integer("startup_lines", 0, "Lines of a start-up run per "
                     "worker count (0: none, no net rate).")
flags.DEFINE_integer("timing_lines", 2000, "Lines of the batching table "
                     "(0: none).")
flags.DEFINE_bool("runner_probe", False, "Instead: Beam alone (no model, "
                  "no tokenizer), the pipeline's shape with 330-byte "
                  "elements (a classifier result's encoded size), at each "
                  "--sizes with the last --worker_counts: is memory growth "
                  "the runner's?")
flags.DEFINE_integer("probe_child", 0, "Internal: run the probe pipeline "
                     "on this many lines.")
FLAGS = flags.FLAGS


def sentences(count):
    with open(_SHARED / "data/glue/SST-2/train.tsv", encoding="utf-8") as f:
        rows = [row[0] for row in csv.reader(f, delimiter="\t",
                                             quotechar=None)][1:]
    return [rows[i % len(rows)] for i in range(count)]


def model_spec(model, export):
    """The ModelSpec a worker of the runs loads."""
    from bert_tf1.serving.batch_inference import ModelSpec

    vocab = str(model / "vocab.txt")
    if export is not None:
        return ModelSpec(model_type="classifier", export_dir=export,
                         tokenizer=(vocab, True),
                         max_seq_length=FLAGS.max_seq_length)
    return ModelSpec(
        model_type="encoder", tokenizer=(vocab, True),
        max_seq_length=FLAGS.max_seq_length,
        serving_arguments=dict(
            model_type="encoder", vocab_file=vocab, do_lower_case=True,
            bert_config_file=str(model / "bert_config.json"),
            init_checkpoint=str(model / "bert_model.ckpt"),
            max_seq_length=FLAGS.max_seq_length, pooling="mean"))


def batching_table(lines, spec):
    """{name: (computed tokens, model seconds)} of the three batchings of
    `lines`, and their real tokens."""
    import numpy as np
    import tensorflow as tf

    from bert_tf1.serving.batch_inference import (ReadShardFn, TokenBoundedBatches,
                                                  _LoadedModel, ids_batch)

    rows = list(ReadShardFn._rows(spec, enumerate([(t,) for t in lines], 1)))
    batcher = TokenBoundedBatches(FLAGS.max_tokens, FLAGS.max_seq_length)
    batcher.start_bundle()
    ours = [b for row in rows for b in batcher.process(row)]
    ours += [value.value for value in batcher.finish_bundle()]
    size = FLAGS.fixed_batch
    fixed = [rows[i:i + size] for i in range(0, len(rows), size)]
    model = _LoadedModel(spec)   # the signatures need it alive
    signature = model.signatures[
        "classify_ids" if spec.model_type == "classifier" else "encode_ids"]

    def model_seconds(batches, length=None):
        inputs = []
        for batch in batches:
            arrays = ids_batch(batch)
            if length:   # zeros to `length`, as the one-process path pads
                arrays = {k: tf.pad(v, [[0, 0], [0, length - v.shape[1]]])
                          for k, v in arrays.items()}
            inputs.append(arrays)
        for arrays in inputs:   # warm-up: every shape traced once
            signature(**arrays)
        start = time.perf_counter()
        for arrays in inputs:
            np.asarray(next(iter(signature(**arrays).values())))
        seconds = time.perf_counter() - start
        return sum(int(np.prod(a["input_ids"].shape)) for a in inputs), seconds

    return sum(len(row.ids) for row in rows), {
        "token-bounded, length-grouped (ours)": model_seconds(ours),
        "fixed %d lines, cut to longest" % size: model_seconds(fixed),
        "fixed %d lines, padded to max_seq_length %d" % (
            size, FLAGS.max_seq_length): model_seconds(
                fixed, FLAGS.max_seq_length)}


def run(argv, env):
    """(wall seconds, driver peak MB, [worker peak MB]) of one child run."""
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
    return (time.perf_counter() - start, sampler.peaks.get(process.pid, 0.0),
            sampler.workers())


def beam_runs(script, work, env):
    print("| lines | workers | shards | wall s | lines/s | start-up s | net "
          "lines/s | efficiency (net) | driver peak RSS MB | peak RSS per "
          "worker MB |\n|---|---|---|---|---|---|---|---|---|---|")
    startup = {}
    for count in [int(n) for n in FLAGS.sizes]:
        one = None
        for workers in [int(n) for n in FLAGS.worker_counts]:
            def timed(lines, name):
                corpus = work / f"corpus-{lines}.txt"
                if not corpus.exists():
                    corpus.write_text("".join(
                        t + "\n" for t in sentences(lines)), encoding="utf-8")
                out = work / f"out-{name}-{lines}-{workers}"
                result = run([sys.executable] + script + [
                    f"--input_file={corpus}", "--runner=DirectRunner",
                    f"--num_workers={workers}", f"--output_dir={out}",
                    "--beam_pipeline_options=--direct_num_workers=%d "
                    "--direct_running_mode=multi_processing" % workers,
                    f"--max_seq_length={FLAGS.max_seq_length}",
                    f"--max_tokens={FLAGS.max_tokens}",
                    f"--lines_per_shard={FLAGS.lines_per_shard}"], env)
                shutil.rmtree(out)
                return result

            if FLAGS.startup_lines and workers not in startup:
                startup[workers] = timed(FLAGS.startup_lines, "startup")[0]
            seconds, driver, peaks = timed(count, "run")
            # Start-up varies on a loaded machine: no net rate when the run
            # took less than its start-up run.
            net = (count / (seconds - startup[workers])
                   if seconds > startup.get(workers, seconds) else None)
            rate = net or count / seconds
            one = one or rate / workers
            print("| %d | %d | %d | %.1f | %.0f | %s | %s | %.2f | %.0f | %s |"
                  % (count, workers, -(-count // FLAGS.lines_per_shard),
                     seconds, count / seconds,
                     "%.1f" % startup[workers] if net else "-",
                     "%.0f" % net if net else "-", rate / (one * workers),
                     driver, ", ".join("%.0f" % mb for mb in sorted(peaks))
                     or "-"), flush=True)


def probe_pipeline(lines, workers):
    """Create(shards) -> Reshuffle -> 330-byte element per line -> by shard
    -> GroupByKey -> count: our pipeline's data flow without our code."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    size = FLAGS.lines_per_shard
    shards = [(i, min(size, lines - i * size))
              for i in range(-(-lines // size))]
    options = PipelineOptions([
        "--runner=FnApiRunner", "--direct_num_workers=%d" % workers,
        "--direct_running_mode=multi_processing"])
    with beam.Pipeline(options=options) as root:
        (root | beam.Create(shards) | beam.Reshuffle()
         | beam.FlatMap(lambda s: ((s[0], (n, "x" * 300))
                                   for n in range(s[1])))
         | beam.GroupByKey()
         | beam.Map(lambda group: sum(1 for _ in group[1])))


def runner_probe(env):
    workers = int(FLAGS.worker_counts[-1])
    print("| lines (Beam alone) | workers | wall s | driver peak RSS MB | "
          "peak RSS per worker MB |\n|---|---|---|---|---|")
    for count in [int(n) for n in FLAGS.sizes]:
        seconds, driver, peaks = run([
            sys.executable, __file__, "--probe_child=%d" % count,
            "--worker_counts=%d" % workers,
            "--lines_per_shard=%d" % FLAGS.lines_per_shard], env)
        print("| %d | %d | %.1f | %.0f | %s |" % (
            count, workers, seconds, driver,
            ", ".join("%.0f" % mb for mb in sorted(peaks))), flush=True)


def main(argv):
    del argv
    if FLAGS.probe_child:
        return probe_pipeline(FLAGS.probe_child, int(FLAGS.worker_counts[-1]))
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), CUDA_VISIBLE_DEVICES="",
               TF_CPP_MIN_LOG_LEVEL="2")
    if FLAGS.runner_probe:
        return runner_probe(env)
    work = pathlib.Path(tempfile.mkdtemp(prefix="batch_inference_bench-"))
    model = pathlib.Path(FLAGS.model_dir) if FLAGS.model_dir else MRPC
    try:
        export = None
        if FLAGS.model_dir:
            script = ["extract_features.py", "--pooling=mean",
                      f"--vocab_file={model / 'vocab.txt'}",
                      f"--bert_config_file={model / 'bert_config.json'}",
                      f"--init_checkpoint={model / 'bert_model.ckpt'}"]
        else:
            from bert_tf1.serving import export_saved_model
            export = export_saved_model(
                work / "export", model_type="classifier",
                label_list=["0", "1"],
                init_checkpoint=str(MRPC), max_seq_length=FLAGS.max_seq_length,
                bert_config_file=str(MRPC / "bert_config.json"),
                vocab_file=str(MRPC / "vocab.txt"))
            script = ["predict_text.py", f"--export_dir={export}"]
        if [n for n in FLAGS.sizes if n]:
            beam_runs(script, work, env)
        if FLAGS.timing_lines:
            real, table = batching_table(sentences(FLAGS.timing_lines),
                                         model_spec(model, export))
            print("\n| batching (%d lines, %d real tokens, --max_tokens=%d) | "
                  "computed tokens | padding share | model s | lines/s |\n"
                  "|---|---|---|---|---|" % (FLAGS.timing_lines, real,
                                             FLAGS.max_tokens))
            for name, (tokens, seconds) in table.items():
                print("| %s | %d | %.1f%% | %.2f | %.0f |" % (
                    name, tokens, 100.0 * (tokens - real) / tokens, seconds,
                    FLAGS.timing_lines / seconds), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    app.run(main)
