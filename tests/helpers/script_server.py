"""Runs the root scripts in forked children of one warm process (tests only).

Every script run as a fresh `python run_x.py ...` pays for importing
TensorFlow, Keras and the project: about 6 CPU seconds, which is nearly the
whole cost of a bad-input case. This server imports all that once, runs no
TensorFlow op, and then, for each request, forks a child that executes the
script as `__main__` with the request's argv, working directory,
environment and output files, exactly as a new interpreter would from that
point on. The server is single-threaded, so forking it is safe.

Protocol (one JSON object per line): the client sends
`{"id", "argv": [script, args...], "cwd", "env", "stdout", "stderr"}`; the
server answers `{"id", "pid"}` when the child has started and
`{"id", "returncode"}` when it has ended (negative: killed by that
signal, as `subprocess`).

What a forked run cannot show (the tests that need it start real
processes, `script_runner.run_script(..., fresh_process=True)`): TensorFlow's
start-up lines, and environment variables read only while TensorFlow is
imported (`TF_ENABLE_ONEDNN_OPTS`, `TF_CPP_MIN_LOG_LEVEL`, `CUDA_VISIBLE_DEVICES`:
the server is started with the values `run_script` always sets).
"""
import json
import os
import runpy
import select
import signal
import sys
import traceback

# Preloaded: what every script imports before its first op.
PRELOAD = ("tasks.quiet_start", "keras", "numpy", "absl.app", "absl.flags",
           "modeling", "serving", "tasks.cli", "tasks.base",
           "tasks.classification", "tasks.squad", "tasks.pretraining",
           "tasks.feature_extraction", "tasks.pretraining_data",
           "tasks.tagging", "tasks.multiple_choice", "tasks.export",
           "tasks.conversion", "tasks.predict_text")


def _preload():
    import importlib

    from tasks.quiet_start import start_tensorflow
    start_tensorflow()
    for name in PRELOAD:
        importlib.import_module(name)


def _child(request):
    """In the forked child: become the script's process. Never returns."""
    code = 1
    try:
        os.setsid()  # its own process group: a timeout kills all of it
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        stdin = os.open(os.devnull, os.O_RDONLY)
        stdout = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        stderr = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
            os.close(fd)
        # New file objects (and locks) on the redirected descriptors.
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        script = request["argv"][0]
        sys.argv = list(request["argv"])
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as stop:
            if stop.code is None:
                code = 0
            elif isinstance(stop.code, int):
                code = stop.code
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: BLE001  (what the interpreter prints)
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _reply(message):
    sys.__stdout__.write(json.dumps(message) + "\n")
    sys.__stdout__.flush()


def serve():
    """Reads requests on stdin until it closes; one child per request."""
    _preload()
    _reply({"ready": True})
    running = {}
    buffered = b""
    stdin = sys.stdin.fileno()
    open_input = True
    while open_input or running:
        readable, _, _ = select.select([stdin] if open_input else [], [], [],
                                       0.05)
        if readable:
            chunk = os.read(stdin, 65536)
            if not chunk:
                open_input = False
            buffered += chunk
            while b"\n" in buffered:
                line, buffered = buffered.split(b"\n", 1)
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(request)
                running[pid] = request["id"]
                _reply({"id": request["id"], "pid": pid})
        while running:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            _reply({"id": running.pop(pid),
                    "returncode": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    serve()
