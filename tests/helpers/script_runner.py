"""Runs one of the root `run_*.py` scripts in a subprocess, as a user would.

By default the process is a fork of one warm server that has TensorFlow and
the project imported already (tests/helpers/script_server.py): the same
script, argv, working directory and environment, without paying ~6 CPU
seconds of imports per run. `fresh_process=True` (or BERT_TEST_FRESH_PROCESSES=1
for every run) starts a new interpreter instead, for tests of what happens
while TensorFlow starts.
"""
import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading

from tests.conftest import REPO_ROOT
from tests.helpers.script_client import ServerRun

_SERVER_SCRIPT = REPO_ROOT / "tests" / "helpers" / "script_server.py"


def _script_env():
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
                PYTHONPATH=str(REPO_ROOT))


class ScriptServer:
    """script_server.py, started once per test process (safe to share
    between threads)."""

    def __init__(self):
        self._folder = tempfile.TemporaryDirectory(prefix="bert-scripts-")
        self.socket_path = os.path.join(self._folder.name, "socket")
        self._process = subprocess.Popen(
            [sys.executable, str(_SERVER_SCRIPT), self.socket_path],
            cwd=REPO_ROOT, env=_script_env(), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        if self._process.stdout.readline().strip() != "ready":
            raise RuntimeError("script_server.py did not start (exit %s)"
                               % self._process.wait())

    def run(self, argv, cwd, env, timeout):
        """-> subprocess.CompletedProcess (text stdout and stderr)."""
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
                open(os.devnull, "rb") as stdin:
            run = ServerRun(self.socket_path, argv, cwd, env,
                            (stdin.fileno(), out.fileno(), err.fileno()))
            try:
                returncode = run.wait(timeout)
            except socket.timeout:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait()
                raise subprocess.TimeoutExpired(argv, timeout)
            finally:
                run.close()
            texts = []
            for stream in (out, err):
                stream.seek(0)
                texts.append(stream.read().decode("utf-8", errors="replace"))
        return subprocess.CompletedProcess([sys.executable] + argv, returncode,
                                           *texts)

    def close(self):
        self._process.stdin.close()
        self._process.wait(timeout=120)
        self._folder.cleanup()


_server = None
_server_lock = threading.Lock()


def shared_server():
    """The test process's ScriptServer (started on first use)."""
    global _server
    with _server_lock:
        if _server is None:
            _server = ScriptServer()
            atexit.register(_server.close)
        return _server


class ServerProcess:
    """A command running in a fork of the warm server, with the part of
    `subprocess.Popen`'s interface the tests use (pid, returncode, poll,
    wait, send_signal, kill). The child leads its own process group."""

    def __init__(self, argv, cwd, env, stdout, stderr):
        self.args = argv
        self.returncode = None
        with open(os.devnull, "rb") as stdin:
            self._run = ServerRun(shared_server().socket_path, argv, cwd, env,
                                  (stdin.fileno(), stdout.fileno(),
                                   stderr.fileno()))
        self.pid = self._run.pid

    def wait(self, timeout=None):
        if self.returncode is None:
            try:
                self.returncode = self._run.wait(timeout)
            except socket.timeout:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self._run.close()
        return self.returncode

    def poll(self):
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def send_signal(self, signal_number):
        if self.poll() is None:
            os.kill(self.pid, signal_number)

    def kill(self):
        self.send_signal(signal.SIGKILL)


def fresh_processes():
    """True under BERT_TEST_FRESH_PROCESSES=1: every run in a new
    interpreter instead of a fork of the warm script server."""
    return os.environ.get("BERT_TEST_FRESH_PROCESSES") == "1"


def start_process(argv, env, stdout, stderr, cwd=REPO_ROOT):
    """Starts `python ARGV...` (argv[0] a script path, or "-c"; a leading
    sys.executable is dropped) without waiting: a `ServerProcess` in a fork
    of the warm server, or a `subprocess.Popen` under
    BERT_TEST_FRESH_PROCESSES=1. stdout and stderr: open files (or
    subprocess.STDOUT for stderr)."""
    argv = [str(arg) for arg in argv]
    if argv[0] == sys.executable:
        argv = argv[1:]
    if fresh_processes():
        return subprocess.Popen([sys.executable] + argv, cwd=cwd, env=env,
                                stdout=stdout, stderr=stderr,
                                start_new_session=True)
    if stderr == subprocess.STDOUT:
        stderr = stdout
    return ServerProcess(argv, cwd, env, stdout, stderr)


def _completed_run(argv, cwd, env, timeout, fresh_process=False):
    """`python ARGV...` run to its end (a text CompletedProcess, unchecked):
    in a fork of the warm server, or a new interpreter when `fresh_process`
    or under BERT_TEST_FRESH_PROCESSES=1."""
    if fresh_process or fresh_processes():
        return subprocess.run([sys.executable] + argv, cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout)
    return shared_server().run(argv, cwd, env, timeout)


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
    process = _completed_run(argv, REPO_ROOT, _script_env(), timeout,
                             fresh_process)
    if check and process.returncode != 0:
        raise AssertionError(
            f"{script} exited with {process.returncode}:\n{process.stderr[-6000:]}")
    return process


def run_script_argv(script, *args, timeout=300, fresh_process=False):
    """Runs `python <script> ARGS...` from the repository root (ARGS as
    given, e.g. "--input_file=x"); returns the CompletedProcess, unchecked.
    Like `run_script`: in a fork of the warm server unless `fresh_process`
    (or BERT_TEST_FRESH_PROCESSES=1)."""
    return _completed_run([str(REPO_ROOT / script), *args], REPO_ROOT,
                          _script_env(), timeout, fresh_process)


def run_code(code, cwd=REPO_ROOT, env=None, timeout=300):
    """Runs `python -c CODE` (unchecked; text CompletedProcess) in a fork of
    the warm server, or a fresh interpreter under BERT_TEST_FRESH_PROCESSES=1:
    for code that must start TensorFlow's runtime itself (its own logical
    devices, TF_CONFIG, signal handlers), which the server never does."""
    env = dict(os.environ if env is None else env)
    return _completed_run(["-c", code], cwd, env, timeout)


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
