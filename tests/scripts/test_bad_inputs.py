"""Issue #10's table of bad inputs: one clear line, exit 1, nothing written.

The cases live in tests/helpers/bad_input_cases (one module per script;
importing the package fills its CASES). Each case writes tiny data into a
folder of its own, runs one of the scripts as a user would (a subprocess
from the repository root, with the tiny checkpoints of ../shared/fixtures)
and checks:

- exit status 1 and exactly one `<script>: error: ...` line, the last line
  of stderr, naming the place at fault (file, line, flag or config field);
- no "Traceback" on stderr;
- the case's folder (its inputs, output_dir, output_file) is exactly as it
  was: no record file, checkpoint, result file or temporary file was
  written, because every check runs before any work.

The scripts spend most of their few seconds importing TensorFlow, so the
selected cases are started together by a module fixture, BERT_TEST_JOBS at
a time (default: the CPU count, at most 4); each test then checks its own
case's outcome.
"""
import concurrent.futures
import dataclasses
import os
import pathlib

import pytest

from tests.helpers.bad_input_cases import CASES
from tests.helpers.script_runner import assert_one_line_error, run_script

pytestmark = pytest.mark.slow


@dataclasses.dataclass
class Outcome:
    process: object
    names: list
    files_before: dict
    files_after: dict


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


def _run_case(bad_input, folder):
    folder.mkdir()
    flags, names = bad_input.build(folder)
    before = _files(folder)
    process = run_script(bad_input.script, flags, timeout=300, check=False)
    return Outcome(process, names, before, _files(folder))


def test_no_error_line_is_longer_than_half_a_screen(outcomes):
    for name, outcome in outcomes.items():
        line = outcome.process.stderr.rstrip().splitlines()[-1]
        assert len(line) <= 1000, (name, len(line))


@pytest.fixture(scope="module")
def outcomes(request, tmp_path_factory):
    """Runs every selected case (a few at a time); {name: Outcome}."""
    selected = [item.callspec.params["bad_input"]
                for item in request.session.items
                if getattr(item, "originalname", None) == "test_bad_input"
                and item.module is request.module]
    root = tmp_path_factory.mktemp("bad_inputs")
    jobs = max(1, int(os.environ.get("BERT_TEST_JOBS",
                                      min(4, os.cpu_count() or 1))))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {bad.name: pool.submit(_run_case, bad, root / bad.name)
                   for bad in selected}
        return {name: future.result() for name, future in futures.items()}


def test_the_table_covers_every_script():
    scripts = {bad.script for bad in CASES}
    assert len(CASES) >= 40
    on_disk = {path.name for path in pathlib.Path(__file__).resolve()
               .parents[2].glob("*.py") if path.name != "setup.py"}
    assert scripts == on_disk


@pytest.mark.parametrize("bad_input", CASES, ids=lambda bad: bad.name)
def test_bad_input(bad_input, outcomes):
    outcome = outcomes[bad_input.name]
    assert_one_line_error(outcome.process, *outcome.names)
    # Nothing written: no record file, checkpoint, result or temp file.
    assert outcome.files_after == outcome.files_before
