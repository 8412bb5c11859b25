"""A bug keeps its traceback; a bad input is one line.

The scripts' error path (`bert_tf1/tasks/cli.py`) prints a `UserError` as one line and
anything else as a bug: the traceback, then one line saying it is a bug and
where to report it. Here a deliberately broken internal function (raising a
plain `ValueError`, which used to pass for a user error, and a `TypeError`)
is run through `run_classifier.py`, and the same command with a bad input.
"""
import os
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES_DIR, REPO_ROOT
from tests.helpers.script_runner import assert_one_line_error, shared_server

pytestmark = pytest.mark.slow

MRPC = FIXTURES_DIR / "tf1_vocab_mrpc_classifier"

# Runs run_classifier.py as `__main__` after replacing an internal function
# (the text of one example's features) with one that raises.
DRIVER = """
import runpy, sys
error = sys.argv.pop(1)
if error != "none":
    import bert_tf1.data.glue.features as features
    def broken(*args, **kwargs):
        raise {"value": ValueError, "type": TypeError}[error](
            "deliberately broken for the test")
    features.convert_single_example = broken
sys.argv[0] = "run_classifier.py"
runpy.run_path("run_classifier.py", run_name="__main__")
"""


def _run(tmp_path, error, **changes):
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    lines = (MRPC / "mrpc_test64.tsv").read_text().splitlines(keepends=True)
    (data / "test.tsv").write_text("".join(lines[:5]))
    flags = {"task_name": "MRPC", "data_dir": data,
             "vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "output_dir": tmp_path / f"out_{error}", "do_predict": "true",
             "max_seq_length": 32}
    flags.update(changes)
    argv = ["-c", DRIVER, error] + [
        f"--{key}={value}" for key, value in flags.items()]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="",
               PYTHONPATH=str(REPO_ROOT))
    env.pop("BERT_VERBOSE_ERRORS", None)
    if os.environ.get("BERT_TEST_FRESH_PROCESSES") == "1":
        return subprocess.run([sys.executable] + argv, cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
    # What is checked happens after start-up (the scripts' error path,
    # bert_tf1/tasks/cli.py): a fork of the warm script server runs
    # `python -c DRIVER ...` as a new interpreter would (the broken function
    # is looked up in its module at call time, so patching it after the
    # server's imports breaks it as in a fresh process).
    return shared_server().run(argv, REPO_ROOT, env, 300)


@pytest.mark.parametrize("error", ["value", "type"])
def test_a_bug_keeps_its_traceback_and_says_it_is_a_bug(tmp_path, error):
    process = _run(tmp_path, error)
    assert process.returncode == 1
    stderr = process.stderr
    assert "Traceback (most recent call last)" in stderr, stderr[-3000:]
    assert "deliberately broken for the test" in stderr
    assert "in broken" in stderr  # the frame of the broken function
    last = stderr.rstrip().splitlines()[-1]
    assert "internal error" in last and "a bug" in last, last
    assert "Reporting a bug" in last
    assert ": error: " not in stderr  # not reported as a user error


def test_a_bad_input_is_still_one_line(tmp_path):
    process = _run(tmp_path, "none", vocab_file=tmp_path / "no_vocab.txt")
    assert_one_line_error(process, str(tmp_path / "no_vocab.txt"))
