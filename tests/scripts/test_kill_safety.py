"""kill -9 at the worst moment: no half-written file where a glob finds it.

Each script test starts the script, waits until it is writing (a temp file
exists under `<output_dir>/.bert-tmp/`), kills it by its PID with SIGKILL,
checks what a user's glob sees, then reruns and checks the leftovers are
gone. Issue #10.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

from bert_tf1.data.io import atomic
from tests.conftest import REPO_ROOT
from tests.helpers.script_runner import run_script

UNCASED_VOCAB = "bert_models/uncased_L-12_H-768_A-12/vocab.txt"


def _start(script, args, log_dir):
    argv = [sys.executable, str(REPO_ROOT / script)]
    argv += [f"--{key}={value}" for key, value in args.items()]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=str(REPO_ROOT))
    # Output to files: a full pipe would stall the script before it writes.
    stdout = open(log_dir / f"{script}.out", "wb")
    stderr = open(log_dir / f"{script}.err", "wb")
    return subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=stdout,
                            stderr=stderr)


def _rerun(script, args):
    """The rerun after a kill, checked to exit 0. It is about the files the
    dead run left, not about signals or start-up: a fork of the warm script
    server (tests/helpers/script_runner.py) runs it, no fresh interpreter."""
    run_script(script, args, timeout=300)


def _wait_until(condition, process, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        if process.poll() is not None:
            pytest.fail(f"the script ended (code {process.returncode}) before {what}")
        time.sleep(0.02)
    process.kill()
    pytest.fail(f"timed out waiting until {what}")


def _temp_files(folder):
    # Written files only: a writer's `.lock` marker exists before it writes.
    temp_dir = folder / atomic.TEMP_DIR_NAME
    names = sorted(os.listdir(temp_dir)) if temp_dir.is_dir() else []
    return [name for name in names if not name.endswith(".lock")]


def _kill(process):
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


def _proc_state(pid):
    """The /proc state letter of `pid`, or None when it no longer exists."""
    try:
        with open(f"/proc/{pid}/stat") as reader:
            return reader.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def _worker_pids(parent_pid):
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as reader:
                ppid = int(reader.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as reader:
                cmdline = reader.read()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent_pid and b"spawn_main" in cmdline:
            pids.append(int(name))
    return pids


def _corpus(data_dir, path, size):
    text = (data_dir / "pretraining/corpus.txt").read_bytes()
    path.write_bytes(text[:size].rsplit(b"\n", 1)[0] + b"\n")
    return path


@pytest.mark.slow
def test_killed_create_pretraining_data_leaves_nothing_a_glob_matches(
        tmp_path, data_dir):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    corpus = _corpus(data_dir, tmp_path / "corpus.txt", 300_000)
    args = {"input_file": corpus, "output_file": out_dir / "train.tfrecord",
            "vocab_file": data_dir / UNCASED_VOCAB, "dupe_factor": 2,
            "shard_size_mb": 0}
    process = _start("create_pretraining_data.py", args, tmp_path)
    _wait_until(lambda: _temp_files(out_dir), process, 120,
                "it started writing")
    _kill(process)
    # The half-written file is there, but no user glob finds it...
    assert _temp_files(out_dir)
    for pattern in ("*tfrecord*", "*", "*.tfrecord"):
        matches = tf.io.gfile.glob(str(out_dir / pattern))
        assert [m for m in matches if "tfrecord" in m] == [], pattern
    # ...and readers refuse it even when told to read everything.
    with pytest.raises(ValueError, match="only temp files or folders"):
        from bert_tf1.data.pretraining.dataset import expand_input_files
        expand_input_files(str(out_dir / "*"))
    # A rerun (smaller input) removes the dead run's temp file.
    args["input_file"] = data_dir / "pretraining/sample_text.txt"
    _rerun("create_pretraining_data.py", args)
    assert sorted(os.listdir(out_dir)) == ["train.tfrecord"]


@pytest.mark.slow
def test_killing_the_parent_kills_its_workers(tmp_path, data_dir):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    corpus = _corpus(data_dir, tmp_path / "corpus.txt", 400_000)
    args = {"input_file": corpus, "output_file": out_dir / "train.tfrecord",
            "vocab_file": data_dir / UNCASED_VOCAB, "dupe_factor": 1,
            "shard_size_mb": 0.05, "num_workers": 2}
    process = _start("create_pretraining_data.py", args, tmp_path)
    # Both workers are up and one already writes its shard.
    _wait_until(lambda: len(_worker_pids(process.pid)) == 2
                and _temp_files(out_dir), process, 120, "workers write shards")
    workers = _worker_pids(process.pid)
    assert all(_proc_state(pid) not in (None, "Z") for pid in workers)
    _kill(process)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(
            _proc_state(pid) not in (None, "Z") for pid in workers):
        time.sleep(0.1)
    alive = [pid for pid in workers if _proc_state(pid) not in (None, "Z")]
    for pid in alive:  # Do not leave them behind if the test fails.
        os.kill(pid, signal.SIGKILL)
    assert alive == [], "workers outlived their killed parent"
    assert [m for m in tf.io.gfile.glob(str(out_dir / "*"))
            if "tfrecord" in m] == []


def test_a_spawned_worker_dies_with_its_parent_before_importing_tensorflow():
    """The pool initializer a spawned worker unpickles first pulls in no
    TensorFlow, so PR_SET_PDEATHSIG is set before the seconds of that import
    (bert_tf1/data/pretraining/worker_start.py)."""
    import pickle

    from bert_tf1.data.pretraining import worker_start

    initializer = pickle.dumps(worker_start.start_worker)
    assert pickle.loads(initializer) is worker_start.start_worker
    code = ("import pickle, sys; pickle.loads(sys.stdin.buffer.read()); "
            "print(sorted(m for m in ('tensorflow', 'keras', 'numpy') "
            "if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], input=initializer,
                            capture_output=True, cwd=REPO_ROOT, check=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)))
    assert loaded.stdout.decode().strip() == "[]"


@pytest.mark.slow
def test_killed_run_classifier_leaves_no_record_temp_file(tmp_path, data_dir,
                                                          fixtures_dir):
    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    glue = tmp_path / "glue"
    glue.mkdir()
    train = (data_dir / "glue/MRPC/train.tsv").read_text(encoding="utf-8")
    header, rows = train.split("\n", 1)
    (glue / "train.tsv").write_text(header + "\n" + rows * 4, encoding="utf-8")
    shutil.copy(fixture / "mrpc_test64.tsv", glue / "test.tsv")
    out_dir = tmp_path / "out"
    args = {"task_name": "MRPC", "data_dir": glue,
            "vocab_file": fixture / "vocab.txt",
            "bert_config_file": fixture / "bert_config.json",
            "init_checkpoint": fixture / "bert_model.ckpt",
            "output_dir": out_dir, "max_seq_length": 128, "do_train": "true",
            "num_train_epochs": 0.01}
    process = _start("run_classifier.py", args, tmp_path)
    _wait_until(lambda: _temp_files(out_dir), process, 180,
                "it started writing train.tf_record")
    _kill(process)
    assert _temp_files(out_dir)
    assert tf.io.gfile.glob(str(out_dir / "*tf_record*")) == []
    assert tf.io.gfile.glob(str(out_dir / "train.tf_record.tmp-*")) == []
    # A rerun that writes into the same folder removes the leftover.
    _rerun("run_classifier.py", dict(args, do_train="false", do_predict="true"))
    assert not (out_dir / atomic.TEMP_DIR_NAME).exists()
    assert (out_dir / "test_results.tsv").exists()


def test_resume_removes_checkpoints_not_listed_in_the_state_file(
        tmp_path, fixtures_dir):
    # What a kill between the `checkpoint` write and the deletion of the
    # checkpoints it dropped leaves: model.ckpt-2 is no longer listed.
    from bert_tf1.modeling import optimization, training
    from tests.helpers.fixture_models import build_model

    fixture = fixtures_dir / "tf1_tiny_classifier"
    for step in (2, 4):
        for path in fixture.glob("bert_model.ckpt.*"):
            shutil.copy(path, tmp_path / path.name.replace(
                "bert_model.ckpt", f"model.ckpt-{step}"))
    (tmp_path / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-4"\n'
        'all_model_checkpoint_paths: "model.ckpt-4"\n')
    model = build_model(fixture)
    optimizer = optimization.create_optimizer(1e-4, 10, 1)
    training.restore_for_training(
        model, optimizer, training.choose_start(str(tmp_path)))
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "model.ckpt-4.data-00000-of-00001", "model.ckpt-4.index"]
