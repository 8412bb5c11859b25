"""Runs a root script as `__main__` inside the test process (tests only).

For checks that end before any real work (the bad-input table): no new
interpreter, no fork. What a run changes in the process is put back after
it: absl's flags (the script's own are deleted, the rest reset to their
defaults, so the next script defines and parses afresh), absl's verbosity
and the root logger's handlers, the Keras dtype policy, the signal handlers,
`sys.argv` and the working directory. Standard streams are the caller's
(capture them with pytest's `capfd`).
"""
import logging as python_logging
import os
import pathlib
import runpy
import signal
import sys
import traceback

import keras
from absl import flags, logging

from tests.conftest import REPO_ROOT

# Flags the previous in-process runs defined (deleted before the next).
_DEFINED = set()


def _forget_script_flags():
    """Deletes the flags a script defines: those of earlier in-process runs,
    of a script run as a file, and of the project's modules (a test that
    imported `bert_tf1.run_classifier`, e.g. to resolve a documented name,
    defined its flags in this process too)."""
    for name in list(flags.FLAGS):
        defined_by_script = any(
            name in {flag.name for flag in module_flags}
            for module, module_flags in flags.FLAGS.flags_by_module_dict().items()
            if module.endswith(".py") or module == "__main__"
            or module.startswith("bert_tf1."))
        if name in _DEFINED or defined_by_script:
            delattr(flags.FLAGS, name)
    _DEFINED.clear()
    flags.FLAGS.unparse_flags()


def run_in_process(script, args):
    """Runs `python <script> --k=v ...` in this process; returns its exit code.

    Args:
        script: file name at the repository root, e.g. "run_classifier.py".
        args: dict of flag name -> value (bools written as true/false).
    Returns:
        int: 0, the `SystemExit` code, or 1 after printing the traceback of
        any other exception (as the interpreter would).
    """
    argv = [str(REPO_ROOT / script)]
    for key, value in args.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        argv.append(f"--{key}={value}")
    _forget_script_flags()
    # The root shim imports the script's module (bert_tf1/<script>.py), which
    # defines the flags: import it afresh, as a new process would.
    sys.modules.pop(f"bert_tf1.{pathlib.Path(script).stem}", None)
    before = set(flags.FLAGS)
    saved = (sys.argv, os.getcwd(), logging.get_verbosity(),
             list(python_logging.getLogger().handlers),
             keras.mixed_precision.global_policy().name,
             {number: signal.getsignal(number)
              for number in (signal.SIGINT, signal.SIGTERM)})
    sys.argv = argv
    os.chdir(REPO_ROOT)
    try:
        runpy.run_path(argv[0], run_name="__main__")
        code = 0
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001  (what the interpreter prints)
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        _DEFINED.update(set(flags.FLAGS) - before)
        (sys.argv, cwd, verbosity, handlers, policy, handlers_by_signal) = saved
        os.chdir(cwd)
        logging.set_verbosity(verbosity)
        root = python_logging.getLogger()
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        keras.mixed_precision.set_global_policy(policy)
        for number, handler in handlers_by_signal.items():
            signal.signal(number, handler)
    return code
