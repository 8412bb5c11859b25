"""Runs the root scripts in forked children of one warm process (tests only).

Every script run as a fresh `python run_x.py ...` pays for importing
TensorFlow, Keras and the project: about 6 CPU seconds, which is nearly the
whole cost of a short script run or README command. This server
imports all that once, runs no TensorFlow op, and then, for each request,
forks a child that executes the script as `__main__` with the request's
argv, working directory, environment and standard streams, as a new
interpreter would from that point on. The server is single-threaded, so
forking it is safe.

    python tests/helpers/script_server.py SOCKET_PATH

listens on a Unix socket; it prints `ready` on stdout once the imports are
done, and ends when stdin closes (after its running children end). One
connection per run: the client sends one JSON line `{"argv": [script,
args...], "cwd", "env"}` with three file descriptors attached (the child's
stdin, stdout, stderr; `socket.send_fds`); the server answers the JSON
lines `{"pid"}` when the child has started and `{"returncode"}` (negative:
killed by that signal, as `subprocess`) when it has ended.
`tests/helpers/script_runner.py` is the client for tests,
`tests/helpers/python_shim.py` the one for README commands. An argv of
`["-c", CODE, args...]` runs CODE as `python -c CODE args...` would (as
`__main__`, `sys.argv[0]` "-c", the working directory first on sys.path):
the README's Python blocks (tests/test_readme.py).

What a forked run cannot show (tests that need it start a real process):
TensorFlow's start-up lines, and environment variables read only while
TensorFlow is imported (`TF_ENABLE_ONEDNN_OPTS`, `CUDA_VISIBLE_DEVICES`,
`TF_CPP_MIN_LOG_LEVEL`: the server starts with the values the tests set).
"""
import gc
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys
import traceback
import types

# What every script imports before its first op.
PRELOAD = ("keras", "numpy", "absl.app", "absl.flags", "bert_tf1.modeling", "bert_tf1.serving",
           "bert_tf1.tasks.cli", "bert_tf1.tasks.task", "bert_tf1.tasks.fine_tuning",
           "bert_tf1.tasks.classification", "bert_tf1.tasks.squad",
           "bert_tf1.tasks.pretraining", "bert_tf1.tasks.feature_extraction",
           "bert_tf1.tasks.pretraining_data", "bert_tf1.tasks.tagging", "bert_tf1.tasks.multiple_choice",
           "bert_tf1.tasks.export", "bert_tf1.tasks.conversion", "bert_tf1.tasks.predict_text",
           # What runs import on their way (~0.6 CPU seconds a run otherwise):
           # output locks, TensorBoard summaries.
           "filelock", "tensorboard.summary")
# What a training run imports at its end to draw training_curves.png, when
# the [plots] extra is installed (~0.6 CPU seconds a run otherwise).
PRELOAD_IF_INSTALLED = ("matplotlib.figure", "matplotlib.backends.backend_agg")
MAX_REQUEST_BYTES = 1 << 20


def _preload():
    from bert_tf1.tasks.quiet_start import start_tensorflow

    start_tensorflow()
    for name in PRELOAD:
        importlib.import_module(name)
    _fill_unicode_tables()
    for name in PRELOAD_IF_INSTALLED:
        try:
            importlib.import_module(name)
        except ImportError:
            return
    _draw_a_small_figure()


def _fill_unicode_tables():
    """The in-graph tokenizer's character tables that Python alone computes
    (bert_tf1/data/tokenization/unicode_tables.py, cached per process): ~1
    CPU second of every child that builds an uncased in-graph tokenizer
    (an export, predict_text) otherwise. The tables compared with
    TensorFlow's own ops are left to the children (they need its runtime)."""
    from bert_tf1.data.tokenization import unicode_tables as tables

    tables.lower_case_map()
    tables.case_context_code_points()
    tables.nonspacing_mark_code_points()
    for table in (tables.punctuation_code_points, tables.space_code_points,
                  tables.deleted_code_points, tables.cjk_code_points):
        table()
    tables._one_char_lines()


def _draw_a_small_figure():
    """Renders a figure as training_curves.png does (lines, markers, a
    legend, titles; no TensorFlow): the fonts and glyph caches it fills are
    then every child's (~0.1 CPU seconds off each run's first drawing)."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(2.0, 2.0))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.plot([0, 1], [0.5, 1e-5], "o--", label="loss")
    axes.legend(fontsize="small")
    axes.set_xlabel("global step")
    figure.suptitle("warm-up")
    figure.savefig(io.BytesIO(), format="png")


def _exit_code(stop):
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return 1


def _run_code(code):
    """`python -c code`: `code` run as the module `__main__`, with the
    working directory ("") first on sys.path."""
    sys.path[0] = ""
    main = types.ModuleType("__main__")
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    exec(compile(code, "<string>", "exec"), main.__dict__)


def _child(request, fds, closing):
    """In the forked child: become the script's process. Never returns."""
    code = 1
    try:
        for fd in closing:
            os.close(fd)
        os.setsid()  # its own process group: a timeout kills all of it
        for fd, target in zip(fds, (0, 1, 2)):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        # New file objects (and locks) on the standard descriptors.
        sys.stdin = open(0, closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        script = request["argv"][0]
        sys.argv = list(request["argv"])
        try:
            if script == "-c":
                _run_code(sys.argv.pop(1))
            else:
                sys.path[0] = os.path.dirname(os.path.abspath(script))
                runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as stop:
            code = _exit_code(stop)
        except BaseException:  # noqa: BLE001  (what the interpreter prints)
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _receive(connection):
    """(request, fds) from a new connection; reads up to the newline."""
    data, fds = b"", []
    while not data.endswith(b"\n"):
        chunk, new_fds, _, _ = socket.recv_fds(connection, 65536, 3)
        if not chunk:
            raise ConnectionError("the client left before its request")
        data += chunk
        fds += new_fds
        if len(data) > MAX_REQUEST_BYTES:
            raise ValueError("request too long")
    return json.loads(data), fds


def _send(connection, message):
    try:
        connection.sendall((json.dumps(message) + "\n").encode())
    except OSError:
        pass  # the client is gone; the run still ends normally


def serve(socket_path):
    """Serves until stdin closes and every child has ended."""
    _preload()
    # What the imports made lives as long as the server: frozen, a child's
    # full collections neither walk it nor write to its pages (which fork
    # shares until written), as the gc module's docs advise before fork().
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    print("ready", flush=True)
    running = {}     # pid -> connection
    stdin = sys.stdin.fileno()
    watching = [listener, stdin]
    while stdin in watching or running:
        readable, _, _ = select.select(watching, [], [], 0.05)
        if stdin in readable and not os.read(stdin, 4096):
            watching.remove(stdin)
            watching.remove(listener)
            listener.close()
        if listener in readable and listener in watching:
            connection, _ = listener.accept()
            try:
                request, fds = _receive(connection)
            except (OSError, ValueError) as error:
                _send(connection, {"error": str(error)})
                connection.close()
                continue
            closing = [listener.fileno(), connection.fileno()] + [
                c.fileno() for c in running.values()]
            pid = os.fork()
            if pid == 0:
                _child(request, fds, closing)
            for fd in fds:
                os.close(fd)
            running[pid] = connection
            _send(connection, {"pid": pid})
        while running:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            connection = running.pop(pid)
            _send(connection, {"returncode": os.waitstatus_to_exitcode(status)})
            connection.close()


if __name__ == "__main__":
    serve(sys.argv[1])
