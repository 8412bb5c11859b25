"""Starts and stops a multi-worker cluster on 127.0.0.1 (tests only).

Each worker is a process of its own (a fork of the warm script server:
tests/helpers/script_runner.py) with its TF_CONFIG (free local ports), its
output in `tmp_path/worker<i>.log`, and, when asked, its own TMPDIR.
"""
import json
import os
import socket
import subprocess

from tests.conftest import REPO_ROOT
from tests.helpers.script_runner import start_process


def free_ports(count):
    """`count` TCP ports that were free on 127.0.0.1 a moment ago."""
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def worker_env(tf_config=None):
    """The environment of a test subprocess: CPU only, quiet, TF_CONFIG."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=str(REPO_ROOT))
    env.pop("TF_CONFIG", None)
    if tf_config:
        env["TF_CONFIG"] = json.dumps(tf_config)
    return env


def run_workers(argv, tmp_path, timeout_s, num_workers=2, temp_dirs=False):
    """Runs `argv` as workers 0..num_workers-1 of one cluster; waits for all.

    Args:
        argv: the command every worker runs.
        tmp_path: folder for the logs (and the TMPDIRs).
        timeout_s: seconds to wait for each worker; then all are killed.
        temp_dirs: give worker i the empty TMPDIR `tmp_path/tmp<i>`.

    Returns:
        list of the workers' logs (stdout and stderr).
    Raises:
        AssertionError: a worker exited with a non-zero status (the ends of
            all logs are in the message).
    """
    ports = free_ports(num_workers)
    cluster = {"worker": [f"127.0.0.1:{port}" for port in ports]}
    processes, logs = [], []
    try:
        for index in range(num_workers):
            env = worker_env({"cluster": cluster,
                              "task": {"type": "worker", "index": index}})
            if temp_dirs:
                temp = tmp_path / f"tmp{index}"
                temp.mkdir()
                env["TMPDIR"] = str(temp)
            log = open(tmp_path / f"worker{index}.log", "w")
            logs.append(log)
            processes.append(start_process(argv, env, log, subprocess.STDOUT))
        codes = [process.wait(timeout=timeout_s) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
        for log in logs:
            log.close()
    texts = [(tmp_path / f"worker{index}.log").read_text()
             for index in range(num_workers)]
    assert codes == [0] * num_workers, "\n\n".join(text[-5000:] for text in texts)
    return texts
