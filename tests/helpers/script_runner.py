"""Runs one of the root `run_*.py` scripts in a subprocess, as a user would."""
import os
import subprocess
import sys

from tests.conftest import REPO_ROOT


def run_script(script, args, timeout=900, check=True):
    """Runs `python <script> --k=v ...`; returns the CompletedProcess.

    Args:
        script: file name at the repository root, e.g. "run_classifier.py".
        args: dict of flag name -> value (bools written as true/false).
        check: raise AssertionError with the output when the exit code is
            not 0.
    """
    argv = [sys.executable, str(REPO_ROOT / script)]
    for key, value in args.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        argv.append(f"--{key}={value}")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=str(REPO_ROOT))
    process = subprocess.run(argv, cwd=REPO_ROOT, env=env, capture_output=True,
                             text=True, timeout=timeout)
    if check and process.returncode != 0:
        raise AssertionError(
            f"{script} exited with {process.returncode}:\n{process.stderr[-6000:]}")
    return process


def run_script_argv(script, *args, timeout=300):
    """Runs `python <script> ARGS...` from the repository root (ARGS as
    given, e.g. "--input_file=x"); returns the CompletedProcess, unchecked."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=str(REPO_ROOT))
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
