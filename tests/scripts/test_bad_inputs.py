"""Issue #10's table of bad inputs: one clear line, exit 1, nothing written.

The cases live in tests/helpers/bad_input_cases (one module per script;
importing the package fills its CASES). Each case writes tiny data into a
folder of its own, runs one of the scripts as a user would, through the
script's own `__main__` (`cli.main`: absl flag parsing and the one error
path) but inside this process (tests/helpers/in_process_script.py; absl's
flags reset between cases), with the tiny checkpoints of ../shared/fixtures,
and checks:

- exit status 1 and exactly one `<script>: error: ...` line, the last line
  of stderr, naming the place at fault (file, line, flag or config field),
  at most 1000 characters;
- no "Traceback" on stderr;
- the case's folder (its inputs, output_dir, output_file) is exactly as it
  was: no record file, checkpoint, result file or temporary file was
  written, because every check runs before any work.
"""
import os
import pathlib
import subprocess

import pytest

from tests.helpers.bad_input_cases import CASES
from tests.helpers.in_process_script import run_in_process
from tests.helpers.script_runner import assert_one_line_error

pytestmark = pytest.mark.slow


def _files(folder):
    """{relative path: (size, mtime_ns)} of everything under `folder`."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = pathlib.Path(root, name)
            stat = path.lstat()
            found[str(path.relative_to(folder))] = (
                None if path.is_dir() else stat.st_size, stat.st_mtime_ns)
    return found


def test_the_table_covers_every_script():
    scripts = {bad.script for bad in CASES}
    assert len(CASES) >= 40
    on_disk = {path.name for path in pathlib.Path(__file__).resolve()
               .parents[2].glob("*.py") if path.name != "setup.py"}
    assert scripts == on_disk


@pytest.mark.parametrize("bad_input", CASES, ids=lambda bad: bad.name)
def test_bad_input(bad_input, tmp_path, capfd, monkeypatch):
    folder = tmp_path / bad_input.name
    folder.mkdir()
    flags, names = bad_input.build(folder)
    if bad_input.patch:
        bad_input.patch(monkeypatch)
    before = _files(folder)
    capfd.readouterr()
    returncode = run_in_process(bad_input.script, flags)
    captured = capfd.readouterr()
    outcome = subprocess.CompletedProcess(bad_input.script, returncode,
                                          captured.out, captured.err)
    assert_one_line_error(outcome, *names)
    assert len(outcome.stderr.rstrip().splitlines()[-1]) <= 1000
    # Nothing written: no record file, checkpoint, result or temp file.
    assert _files(folder) == before


def test_flags_defined_by_importing_a_script_module_are_forgotten(tmp_path,
                                                                  capfd):
    """A test that imported a script's module (a create_model of one's own
    imports bert_tf1.run_classifier) left its flags in this process; the
    next in-process run defines its own again instead of failing with
    DuplicateFlagError (the order of test files must not matter)."""
    import bert_tf1.run_classifier  # noqa: F401

    missing = str(tmp_path / "missing")
    capfd.readouterr()
    returncode = run_in_process("extract_features.py", {
        "input_file": missing, "output_file": str(tmp_path / "out.jsonl"),
        "vocab_file": missing, "bert_config_file": missing,
        "init_checkpoint": missing})
    stderr = capfd.readouterr().err
    assert "DuplicateFlagError" not in stderr, stderr[-3000:]
    assert_one_line_error(subprocess.CompletedProcess(
        "extract_features.py", returncode, "", stderr), missing)
