"""`python` for README commands under tests/test_readme.py.

`python <root script>.py ...`, `python <file>.py ...` for a script outside
the repository (the reader's own, which the documentation writes, such as
`$OUT/my_classifier.py` on top of `bert_tf1.run_classifier`) and
`python -c CODE ...` run in a fork of the warm script server
(BERT_SCRIPT_SERVER, see tests/helpers/script_server.py) with this
process's standard streams, working directory and environment, and exit
with its status; signals sent to the shim are passed on. Anything else
(`python -m ...`, the repository's other files such as benchmarks/ and
demos/, which may measure their own process, options) executes the real
interpreter (BERT_REAL_PYTHON) in place.
"""
import os
import signal
import sys


def _forked_script(args):
    """The script's path when `python ARGS` runs in a fork: a root script
    of the repository (not setup.py), or a `.py` file outside it; else
    None."""
    root = os.environ.get("BERT_REPO_ROOT", "")
    if not args or not args[0].endswith(".py") or not root:
        return None
    path = os.path.realpath(os.path.abspath(args[0]))
    root = os.path.realpath(root)
    if not os.path.isfile(path):
        return None
    if os.path.dirname(path) == root:
        return None if os.path.basename(path) == "setup.py" else path
    return None if path.startswith(root + os.sep) else path


def main(args):
    real_python = os.environ["BERT_REAL_PYTHON"]
    socket_path = os.environ.get("BERT_SCRIPT_SERVER")
    script = "-c" if args[:1] == ["-c"] and len(args) > 1 else (
        _forked_script(args))
    if script is None or not socket_path:
        os.execv(real_python, [real_python] + args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from script_client import ServerRun

    env = {k: v for k, v in os.environ.items()
           if k not in ("BERT_SCRIPT_SERVER", "BERT_REAL_PYTHON")}
    run = ServerRun(socket_path, [script] + args[1:], os.getcwd(), env,
                    (0, 1, 2))

    def forward(signum, _frame):
        try:
            os.killpg(run.pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    code = run.wait()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
