"""Runs one of the root `run_*.py` scripts in a subprocess, as a user would.

By default the process is a fork of one warm server that has TensorFlow and
the project imported already (tests/helpers/script_server.py): the same
script, argv, working directory and environment, without paying ~6 CPU
seconds of imports per run. `fresh_process=True` (or BERT_TEST_FRESH_PROCESSES=1
for every run) starts a new interpreter instead, for tests of what happens
while TensorFlow starts.
"""
import atexit
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading

from tests.conftest import REPO_ROOT

_SERVER_SCRIPT = REPO_ROOT / "tests" / "helpers" / "script_server.py"


def _script_env():
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
                PYTHONPATH=str(REPO_ROOT))


class _ScriptServer:
    """The client side of script_server.py: one per test process, shared by
    threads (the bad-input table runs several cases at once)."""

    def __init__(self):
        self._process = subprocess.Popen(
            [sys.executable, str(_SERVER_SCRIPT)], cwd=REPO_ROOT,
            env=_script_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, bufsize=1)
        ready = json.loads(self._process.stdout.readline() or "{}")
        if not ready.get("ready"):
            raise RuntimeError("script_server.py did not start (exit %s)"
                               % self._process.poll())
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._waiting = {}     # id -> [event, pid, returncode]
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self._process.stdout:
            message = json.loads(line)
            with self._lock:
                slot = self._waiting[message["id"]]
            if "pid" in message:
                slot[1] = message["pid"]
                slot[0][0].set()
            else:
                slot[2] = message["returncode"]
                slot[0][1].set()

    def run(self, argv, cwd, env, timeout):
        """-> subprocess.CompletedProcess (text stdout and stderr)."""
        request_id = next(self._ids)
        slot = [(threading.Event(), threading.Event()), None, None]
        with tempfile.TemporaryDirectory() as folder:
            request = {"id": request_id, "argv": argv, "cwd": str(cwd),
                       "env": env, "stdout": os.path.join(folder, "stdout"),
                       "stderr": os.path.join(folder, "stderr")}
            with self._lock:
                self._waiting[request_id] = slot
                self._process.stdin.write(json.dumps(request) + "\n")
                self._process.stdin.flush()
            slot[0][0].wait()
            if not slot[0][1].wait(timeout):
                os.killpg(slot[1], signal.SIGKILL)
                slot[0][1].wait()
                raise subprocess.TimeoutExpired(argv, timeout)
            with self._lock:
                del self._waiting[request_id]
            outputs = []
            for name in ("stdout", "stderr"):
                with open(request[name], encoding="utf-8",
                          errors="replace") as reader:
                    outputs.append(reader.read())
        return subprocess.CompletedProcess([sys.executable] + argv, slot[2],
                                           *outputs)

    def close(self):
        self._process.stdin.close()
        self._process.wait(timeout=60)


_server = None
_server_lock = threading.Lock()


def _shared_server():
    global _server
    with _server_lock:
        if _server is None:
            _server = _ScriptServer()
            atexit.register(_server.close)
        return _server


def run_script(script, args, timeout=900, check=True, fresh_process=False):
    """Runs `python <script> --k=v ...`; returns the CompletedProcess.

    Args:
        script: file name at the repository root, e.g. "run_classifier.py".
        args: dict of flag name -> value (bools written as true/false).
        timeout: seconds before the run is killed (TimeoutExpired).
        check: raise AssertionError with the output when the exit code is
            not 0.
        fresh_process: a new interpreter instead of a fork of the warm
            server (see the module docstring).
    """
    argv = [str(REPO_ROOT / script)]
    for key, value in args.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        argv.append(f"--{key}={value}")
    env = _script_env()
    if fresh_process or os.environ.get("BERT_TEST_FRESH_PROCESSES") == "1":
        process = subprocess.run([sys.executable] + argv, cwd=REPO_ROOT,
                                 env=env, capture_output=True, text=True,
                                 timeout=timeout)
    else:
        process = _shared_server().run(argv, REPO_ROOT, env, timeout)
    if check and process.returncode != 0:
        raise AssertionError(
            f"{script} exited with {process.returncode}:\n{process.stderr[-6000:]}")
    return process


def run_script_argv(script, *args, timeout=300):
    """Runs `python <script> ARGS...` from the repository root (ARGS as
    given, e.g. "--input_file=x"); returns the CompletedProcess, unchecked."""
    env = _script_env()
    return subprocess.run([sys.executable, str(REPO_ROOT / script), *args],
                          cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def assert_one_line_error(process, *names):
    """The script failed as a user error should: exit 1, one line, no trace.

    Exactly one `<script>: error: ...` line on stderr, the last line (no
    usage text or log after it), containing every string of `names` (the
    file, line, flag or field at fault); no "Traceback".
    """
    stderr = process.stderr
    assert process.returncode == 1, (process.returncode, stderr[-3000:])
    assert "Traceback" not in stderr, stderr[-3000:]
    error_lines = [line for line in stderr.splitlines() if ": error: " in line]
    assert len(error_lines) == 1, stderr[-3000:]
    assert stderr.rstrip().splitlines()[-1] == error_lines[0], stderr[-3000:]
    for name in names:
        assert name in error_lines[0], (name, error_lines[0])
