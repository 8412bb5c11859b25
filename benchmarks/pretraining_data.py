"""Throughput and memory of create_pretraining_data: one process, pool, Beam.

Repeats shared/data/pretraining/corpus.txt (1.9 MB, 120 documents) to
about --corpus_mb MB and writes pre-training TFRecords with the original's
defaults (dupe_factor 10, max_seq_length 128, uncased vocab) three ways:

  original   --shard_size_mb=0 --num_workers=1: the whole corpus in one
             shard in one process (the original's algorithm and memory)
  pool       the local process pool: --shard_size_mb shards, --workers
             processes (bert_tf1.data.pretraining.pipeline)
  beam       --runner=DirectRunner with --workers worker processes
             (bert_tf1.data.pretraining.beam_pipeline on Beam's FnApiRunner)

Each runs in a fresh child process. A sampler reads /proc every 0.2 s and
keeps each process's peak RSS (VmHWM); "per worker" is the largest peak of
the processes that build shards (the child itself for `original`). Corpus
MB/s = corpus MB (2^20 bytes) / seconds of the create call (imports
excluded; Beam's worker start-up included); on a shared machine the CPU
seconds of all the run's processes (start-up included) say more. The pool
and Beam outputs are compared byte for byte. A second table gives one worker's peak RSS against
the shard size (build_shard_records on one shard of --sweep_mb MB).

Usage (from the repository root; the machine is shared, so nice it):
  nice -n 10 python benchmarks/pretraining_data.py [--corpus_mb=100]
      [--workers=2] [--shard_size_mb=16] [--sweep_mb=2,8]
      [--configs=original,pool,beam] [--work_dir=/tmp/bert_pretraining_bench]
"""
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

from absl import app
from absl import flags

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_SHARED = REPO_ROOT.parent / "shared" / "data"
_MB = 1 << 20

FLAGS = flags.FLAGS
flags.DEFINE_float("corpus_mb", 100.0, "Corpus size to build, in MB.")
flags.DEFINE_integer("workers", 2, "Workers of the pool and of Beam.")
flags.DEFINE_float("shard_size_mb", 16.0, "Shard size of pool and Beam.")
flags.DEFINE_list("sweep_mb", ["2", "8"],
                  "Shard sizes (MB) for the RSS-against-shard-size table "
                  "(empty: skip).")
flags.DEFINE_list("configs", ["original", "pool", "beam"], "What to run.")
flags.DEFINE_string("work_dir", "/tmp/bert_pretraining_bench",
                    "Where the corpus and outputs go (not the repository).")
flags.DEFINE_string("source", str(_SHARED / "pretraining" / "corpus.txt"),
                    "Text repeated to make the corpus.")
flags.DEFINE_string("vocab_file", str(
    _SHARED / "bert_models" / "uncased_L-12_H-768_A-12" / "vocab.txt"),
    "Vocab.")
flags.DEFINE_string("child", None, "Internal: run one job (JSON) and exit.")


def make_corpus(source, target_mb, work_dir):
    """Writes `source` repeated to >= target_mb MB; returns (path, bytes)."""
    text = pathlib.Path(source).read_bytes().rstrip(b"\n") + b"\n\n"
    copies = max(1, -(-int(target_mb * _MB) // len(text)))
    path = pathlib.Path(work_dir) / ("corpus_%dx.txt" % copies)
    if not path.exists() or path.stat().st_size != copies * len(text):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as writer:
            for _ in range(copies):
                writer.write(text)
    return str(path), copies * len(text)


# ---- the child: one timed job -----------------------------------------------------

def run_child(job):
    from absl import logging
    logging.set_verbosity(logging.WARNING)
    start = time.perf_counter()
    if job["kind"] in ("shard", "baseline"):
        from bert_tf1.data.pretraining import corpus, shard_build, shard_records
        from bert_tf1.data.pretraining.pipeline import PretrainingOptions
        from bert_tf1.data.tokenization import FullTokenizer
        tokenizer = FullTokenizer(job["vocab_file"], True)
        if job["kind"] == "baseline":  # What a worker holds before a shard.
            print(json.dumps({"seconds": 0.0, "records": 0, "bytes": 0}))
            return
        shard = corpus.plan_shards([job["input"]],
                                   int(job["shard_mb"] * _MB))[0]
        start = time.perf_counter()
        built = shard_build.build_shard_records(
            shard, tokenizer, PretrainingOptions(), 12345)
        count = shard_records.write_records(job["outputs"][0], built.records)
        size = corpus.shard_size(shard)
    elif job["kind"] == "beam":
        from bert_tf1.data.pretraining.beam_pipeline import (
                     create_pretraining_files_beam)
        count = create_pretraining_files_beam(
            [job["input"]], job["outputs"], job["vocab_file"],
            shard_size_bytes=int(job["shard_mb"] * _MB),
            runner="DirectRunner", num_workers=job["workers"])
        size = os.path.getsize(job["input"])
    else:
        from bert_tf1.data.pretraining.pipeline import create_pretraining_files
        count = create_pretraining_files(
            [job["input"]], job["outputs"], job["vocab_file"],
            shard_size_bytes=int(job["shard_mb"] * _MB),
            num_workers=job["workers"], show_progress=False)
        size = os.path.getsize(job["input"])
    print(json.dumps({"seconds": time.perf_counter() - start,
                      "records": count, "bytes": size}))


# ---- the parent: run a child and sample its process tree ------------------------

def _proc_status(pid):
    fields = {}
    try:
        with open("/proc/%d/status" % pid) as reader:
            for line in reader:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        with open("/proc/%d/cmdline" % pid, "rb") as reader:
            fields["cmdline"] = reader.read().replace(b"\0", b" ").decode(
                "utf-8", "replace")
    except OSError:
        return None
    return fields


def _parents():
    """pid -> parent pid of every process (from /proc/<pid>/stat)."""
    parents = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as reader:
                # "pid (command) state ppid ...": the command may hold spaces.
                fields = reader.read().rsplit(")", 1)[1].split()
            parents[int(name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            pass
    return parents


def _cpu_seconds(pid):
    # utime + stime (fields 14 and 15 of /proc/<pid>/stat), in clock ticks.
    try:
        with open("/proc/%d/stat" % pid) as reader:
            fields = reader.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _descendants(root):
    parents = _parents()
    tree = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


class TreeSampler(threading.Thread):
    """Keeps the peak RSS (VmHWM, MB) of a process and its descendants."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.peaks = {}      # pid -> MB
        self.commands = {}   # pid -> command line
        self.cpu = {}        # pid -> CPU seconds (user + system)
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            for pid in _descendants(self.pid):
                status = _proc_status(pid)
                if status is None:
                    continue
                peak = int(status.get("VmHWM", "0 kB").split()[0]) / 1024
                self.peaks[pid] = max(self.peaks.get(pid, 0.0), peak)
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), _cpu_seconds(pid))
                # A process that has exited (a zombie) shows no command.
                if status["cmdline"]:
                    self.commands[pid] = status["cmdline"]
            self.stop.wait(0.2)

    def workers(self):
        """Peaks of the processes that build shards (not the driver)."""
        workers = []
        for pid, mb in self.peaks.items():
            command = self.commands.get(pid, "")
            # Pool workers run spawn_main, Beam's sdk_worker_main (started
            # through /bin/sh, which is not counted).
            if (pid != self.pid and not command.startswith("/bin/sh")
                    and ("spawn_main" in command
                         or "sdk_worker_main" in command)):
                workers.append(mb)
        return workers


def run_job(job):
    command = [sys.executable, str(pathlib.Path(__file__).resolve()),
               "--child=" + json.dumps(job)]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               cwd=str(REPO_ROOT))
    sampler = TreeSampler(process.pid)
    sampler.start()
    stdout, stderr = process.communicate()
    sampler.stop.set()
    sampler.join()
    if process.returncode != 0:
        raise RuntimeError("%s failed:\n%s" % (job["name"], stderr[-3000:]))
    result = json.loads(stdout.strip().splitlines()[-1])
    result["process_seconds"] = time.perf_counter() - start
    result["driver_mb"] = sampler.peaks.get(process.pid, 0.0)
    workers = sampler.workers()
    result["worker_mb"] = max(workers) if workers else result["driver_mb"]
    result["num_worker_processes"] = len(workers)
    # Sampled every 0.2 s: a process's last 0.2 s of CPU may be missed.
    result["cpu_seconds"] = sum(sampler.cpu.values())
    if os.environ.get("BENCH_DEBUG"):
        for pid, mb in sorted(sampler.peaks.items()):
            print("    pid %d %.0f MB %s" % (
                pid, mb, sampler.commands.get(pid, "")[:100]))
    return result


def main(argv):
    del argv
    if FLAGS.child:
        run_child(json.loads(FLAGS.child))
        return
    work_dir = pathlib.Path(FLAGS.work_dir)
    corpus, size = make_corpus(FLAGS.source, FLAGS.corpus_mb, work_dir)
    print("corpus: %s (%.1f MB), %d cores, load average at start: %s"
          % (corpus, size / _MB, os.cpu_count(),
             " ".join("%.2f" % x for x in os.getloadavg())))
    common = {"input": corpus, "vocab_file": FLAGS.vocab_file}
    jobs = {
        "original": dict(common, kind="local", shard_mb=0, workers=1),
        "pool": dict(common, kind="local", shard_mb=FLAGS.shard_size_mb,
                     workers=FLAGS.workers),
        "beam": dict(common, kind="beam", shard_mb=FLAGS.shard_size_mb,
                     workers=FLAGS.workers),
    }
    rows = []
    outputs = {}
    for name in FLAGS.configs:
        job = dict(jobs[name], name=name)
        job["outputs"] = [str(work_dir / ("%s_%d.tfrecord" % (name, i)))
                          for i in range(2)]
        outputs[name] = job["outputs"]
        result = run_job(job)
        rows.append((name, job, result))
        print("  %s done: %.0f s, load average %s" % (
            name, result["seconds"],
            " ".join("%.2f" % x for x in os.getloadavg())), flush=True)

    print()
    print("| run | workers (processes seen) | shard MB | records | s "
          "| corpus MB/s | CPU s (all processes) | corpus MB per CPU s "
          "| peak RSS per worker (MB) | driver peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, job, result in rows:
        print("| %s | %d (%d) | %s | %d | %.0f | %.3f | %.0f | %.3f | %.0f "
              "| %.0f |" % (
                  name, job["workers"], result["num_worker_processes"],
                  job["shard_mb"] or "all", result["records"],
                  result["seconds"], size / _MB / result["seconds"],
                  result["cpu_seconds"], size / _MB / result["cpu_seconds"],
                  result["worker_mb"], result["driver_mb"]))
    if "pool" in outputs and "beam" in outputs:
        same = all(pathlib.Path(a).read_bytes() == pathlib.Path(b).read_bytes()
                   for a, b in zip(outputs["pool"], outputs["beam"]))
        print("\npool and beam outputs byte-identical: %s" % same)

    sweep = [float(x) for x in FLAGS.sweep_mb if x]
    if sweep:
        baseline = run_job(dict(common, kind="baseline", name="baseline",
                                outputs=[]))["driver_mb"]
        print("\nOne worker, one shard (TensorFlow + tokenizer alone: "
              "%.0f MB):" % baseline)
        print("| shard MB | records | s | MB/s | peak RSS (MB) "
              "| (RSS - start-up) / shard size |")
        print("|---|---|---|---|---|---|")
        for shard_mb in sweep:
            job = dict(common, kind="shard", shard_mb=shard_mb,
                       name="shard %g MB" % shard_mb,
                       outputs=[str(work_dir / "sweep.tfrecord")])
            result = run_job(job)
            mb = result["bytes"] / _MB
            print("| %.1f | %d | %.0f | %.3f | %.0f | %.0fx |" % (
                mb, result["records"], result["seconds"],
                mb / result["seconds"], result["driver_mb"],
                (result["driver_mb"] - baseline) / mb), flush=True)
    print("\nload average at end: %s" % " ".join(
        "%.2f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    app.run(main)
