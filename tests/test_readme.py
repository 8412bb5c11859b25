"""Runs every `bash` and `python` block of README.md and docs/*.md, so they
cannot drift.

Conventions (for whoever adds a section or a page):

- Fenced blocks tagged `bash` (or `sh`, `shell`) and `python` run, in the
  order of the file, from the repository root, each within
  `README_BLOCK_TIMEOUT` seconds (60). Blocks with another tag or none
  (diagrams, sample output) are not run.
- Each file is its own terminal session. A page of docs/ starts with the
  README's set-up block (the one that sets `OUT`, `GLUE_DIR`, ...), as a
  reader who ran it once; a page with a set-up block of its own (an
  unmarked runnable block that sets `OUT=`) starts with that instead.
- A marker comment on the line right above the fence changes that:
    `<!-- readme-test: skip -->`                 not run (a long run);
    `<!-- readme-test: requires MOD [MOD ...] -->` skipped, with the reason,
                                                 unless every module imports.
  Any other `readme-test:` marker fails the test (a typo would silently run
  or skip a block).
- Shell blocks share one environment, as in a user's terminal: each runs in
  `bash -e -o pipefail` with `set -a`, and the variables it sets (the
  set-up block's `$OUT`, `$GLUE_DIR`, ...) are passed on to the next blocks,
  Python ones included (they read `os.environ`). `TMPDIR` points into the
  test's temporary folder, so `mktemp` outputs are removed afterwards.
- `python run_x.py ...` in a shell block (and `python $OUT/mine.py ...`, a
  script of the reader's own outside the repository, and `python -c ...`)
  and each Python block run in a fork of the warm script server
  (tests/helpers/script_server.py, tests/helpers/python_shim.py: no
  TensorFlow import per command; BERT_TEST_FRESH_PROCESSES=1 starts real
  interpreters instead).
- `source .venv/bin/activate` is not run: `python` is the interpreter
  running the tests (its folder first on PATH), which is the venv's under
  `run_tests.sh`.
- Each block is one test, named by its file and line; running one alone
  runs the blocks of its file before it first (their effects are what it
  reads).
- The documentation's paths are `../shared/...`: with `BERT_SHARED_DIR`
  pointing elsewhere the blocks are skipped.
"""
import functools
import os
import pathlib
import re
import shlex
import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT, SHARED_DIR
from tests.helpers.script_runner import fresh_processes, shared_server

pytestmark = pytest.mark.slow

README = REPO_ROOT / "README.md"
DOCS_DIR = REPO_ROOT / "docs"
TIMEOUT_S = float(os.environ.get("README_BLOCK_TIMEOUT", "60"))
SHELL_TAGS = {"bash", "sh", "shell"}
MARKER = re.compile(r"^<!--\s*readme-test:\s*(.*?)\s*-->$")
FENCE = re.compile(r"^```(\S*)\s*$")
ACTIVATE = re.compile(r"^\s*(source|\.)\s+\.venv/bin/activate\b.*$", re.MULTILINE)
# Bash's own variables: not passed from one block to the next.
_SHELL_STATE = {"PWD", "OLDPWD", "SHLVL", "_", "BASH_EXECUTION_STRING"}


class Block:
    def __init__(self, line, language, code, marker):
        self.line, self.language, self.code, self.marker = line, language, code, marker

    @property
    def id(self):
        first = next((text for text in self.code.splitlines() if text.strip()), "")
        return f"line{self.line}-{self.language}-{first[:40]}"


def parse_blocks(text):
    """The README's fenced blocks: (line, language, code, marker)."""
    blocks, lines, index = [], text.splitlines(), 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        language, start = match.group(1).lower(), index
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
        previous = next((lines[i].strip() for i in range(start - 1, -1, -1)
                         if lines[i].strip()), "")
        marker = MARKER.match(previous)
        blocks.append(Block(start + 1, language, "\n".join(lines[start + 1:end]) + "\n",
                            marker.group(1) if marker else None))
        index = end + 1
    return blocks


@functools.lru_cache(maxsize=None)
def runnable_blocks(path):
    """The file's `bash`/`python` blocks, read once per test run."""
    return [block for block in parse_blocks(path.read_text(encoding="utf-8"))
            if block.language in SHELL_TAGS | {"python"}]


def _sets_up(block):
    return block.marker is None and "OUT=" in block.code


BLOCKS = runnable_blocks(README)
README_SETUP = next((block for block in BLOCKS if "export OUT=" in block.code), None)
DOCUMENTS = [README] + sorted(DOCS_DIR.glob("*.md"))
# (document, index of the block in it), for every runnable block of every file.
CASES = [(path, index) for path in DOCUMENTS
         for index in range(len(runnable_blocks(path)))]


def _case_id(case):
    path, index = case
    block = runnable_blocks(path)[index]
    return f"{path.relative_to(REPO_ROOT).as_posix()}-{block.id}"


@functools.lru_cache(maxsize=None)
def _imports(name):
    """True when `import name` succeeds in a new interpreter (once per
    module and test process: several blocks require the same ones).

    The probe runs as `python -c "import name"` in a fork of the warm
    script server (as the blocks themselves do, see
    `Session._use_script_server`): TensorFlow is imported there already, so
    probing a module that imports it (tf2onnx: ~7 CPU s in a new
    interpreter) costs only the module's own import. Whether the import
    succeeds is the same; BERT_TEST_FRESH_PROCESSES=1 probes in a new
    interpreter."""
    argv = ["-c", f"import {name}"]
    if fresh_processes():
        probe = subprocess.run([sys.executable] + argv, cwd=REPO_ROOT,
                               capture_output=True, timeout=120)
    else:
        probe = shared_server().run(argv, REPO_ROOT, dict(os.environ), 120)
    return probe.returncode == 0


def _missing_modules(names):
    return [name for name in names if not _imports(name)]


def _skip_reason(block):
    """None to run the block, else why not; fails on an unknown marker."""
    if block.marker is None:
        return None
    words = block.marker.split()
    if words == ["skip"]:
        return "marked <!-- readme-test: skip --> (a long run)"
    if words[:1] == ["requires"] and len(words) > 1:
        missing = _missing_modules(words[1:])
        return f"needs {', '.join(missing)}" if missing else None
    pytest.fail(f"line {block.line}: unknown marker "
                f"'readme-test: {block.marker}' (known: skip, requires MOD ...)")


class Session:
    """The shell environment the README's blocks share, and which ran."""

    def __init__(self, tmp_dir, blocks, prelude=()):
        self.tmp_dir = tmp_dir
        self.blocks = blocks
        self.prelude = list(prelude)
        self.name = "README.md"
        self.env = dict(os.environ)
        self.env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + self.env["PATH"]
        self.env["TMPDIR"] = str(tmp_dir)
        self.env.pop("TF_CPP_MIN_LOG_LEVEL", None)  # as in a fresh terminal
        self._use_script_server()
        self.done = 0
        self.skipped = set()

    def _use_script_server(self):
        """`python run_x.py ...` in a block runs in a fork of the warm script
        server (tests/helpers/script_server.py): same streams, directory,
        environment and exit status, without importing TensorFlow anew for
        each command; so do `python -c`, a `.py` file outside the repository
        (tests/helpers/python_shim.py) and each Python block (`_run_python`).
        Other `python` uses in a shell block (`-m`, demos/, benchmarks/) run
        the real interpreter."""
        if fresh_processes():
            return
        server = shared_server()
        shim_dir = self.tmp_dir / "python_shim"
        shim_dir.mkdir()
        shim = REPO_ROOT / "tests" / "helpers" / "python_shim.py"
        for name in ("python", "python3"):
            path = shim_dir / name
            path.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -S "
                            f"{shlex.quote(str(shim))} \"$@\"\n")
            path.chmod(0o755)
        self.env["PATH"] = str(shim_dir) + os.pathsep + self.env["PATH"]
        self.env.update(BERT_REAL_PYTHON=sys.executable,
                        BERT_SCRIPT_SERVER=server.socket_path,
                        BERT_REPO_ROOT=str(REPO_ROOT))

    def _run_shell(self, block):
        dump = self.tmp_dir / f"env_after_line{block.line}"
        code = ACTIVATE.sub(": venv already active", block.code)
        script = ("set -a\n" + code + f"\nenv -0 > {shlex.quote(str(dump))}\n")
        result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script],
                                cwd=REPO_ROOT, env=self.env, capture_output=True,
                                text=True, timeout=TIMEOUT_S)
        if result.returncode == 0:
            pairs = (item.split("=", 1) for item in
                     dump.read_bytes().decode().split("\0") if "=" in item)
            self.env = {k: v for k, v in pairs if k not in _SHELL_STATE}
        return result

    def _run_python(self, block):
        """`python -c CODE`: in a fork of the warm script server too (see
        `_use_script_server`), unless BERT_TEST_FRESH_PROCESSES=1."""
        if "BERT_SCRIPT_SERVER" in self.env:
            return shared_server().run(["-c", block.code], REPO_ROOT, self.env,
                                       TIMEOUT_S)
        return subprocess.run([sys.executable, "-c", block.code], cwd=REPO_ROOT,
                              env=self.env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)

    def run(self, block):
        reason = _skip_reason(block)
        if reason is not None:
            return reason
        runner = self._run_python if block.language == "python" else self._run_shell
        try:
            result = runner(block)
        except subprocess.TimeoutExpired as error:
            pytest.fail(f"{self.name} line {block.line}: still running after "
                        f"{TIMEOUT_S:.0f} s (mark it <!-- readme-test: skip --> if "
                        f"it is a long run):\n{block.code}\n{error.stderr or ''}"[-6000:])
        if result.returncode:
            pytest.fail(f"{self.name} line {block.line} ({block.language}) exited with "
                        f"{result.returncode}:\n{block.code}\n--- stdout\n"
                        f"{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-6000:]}")
        return None

    def run_through(self, index):
        """Runs blocks done..index; returns the skip reason of block `index`."""
        while self.prelude:
            self.run(self.prelude.pop(0))
        reason = None
        while self.done <= index:
            reason = self.run(self.blocks[self.done])
            self.done += 1
        return reason


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """One Session per file, made when its first block runs."""
    if SHARED_DIR != (REPO_ROOT.parent / "shared").resolve():
        pytest.skip("the documentation's commands read ../shared; the tests use "
                    f"BERT_SHARED_DIR={SHARED_DIR}")
    made = {}

    def session_for(path):
        if path not in made:
            blocks = runnable_blocks(path)
            own_setup = any(_sets_up(block) for block in blocks)
            prelude = [] if path == README or own_setup else [README_SETUP]
            made[path] = Session(tmp_path_factory.mktemp(f"doc-{path.stem}"),
                                 blocks, prelude)
            made[path].name = path.relative_to(REPO_ROOT).as_posix()
        return made[path]

    return session_for


def test_the_readme_has_its_set_up_block():
    # The variables every command uses are defined once, near the top.
    setup = next(block for block in BLOCKS if "export OUT=" in block.code)
    for name in ("GLUE_DIR", "BERT_BASE_DIR", "SQUAD_DIR", "SHARED"):
        assert f"export {name}=" in setup.code
    first_runnable = next(block for block in BLOCKS if block.marker is None)
    assert first_runnable is setup


@pytest.mark.parametrize("case", CASES, ids=[_case_id(case) for case in CASES])
def test_documentation_block(sessions, case):
    path, index = case
    reason = sessions(path).run_through(index)
    if reason is not None:
        pytest.skip(reason)



def test_markers_parse():
    text = ("x\n<!-- readme-test: skip -->\n```bash\necho a\n```\n\n"
            "```python\nprint(1)\n```\n```\nplain\n```\n")
    blocks = parse_blocks(text)
    assert [(b.line, b.language, b.marker) for b in blocks] == [
        (3, "bash", "skip"), (7, "python", None), (10, "", None)]
    assert blocks[1].code == "print(1)\n"
    assert pathlib.Path(README).exists()


_PROBE = """
import os, sys
import json as _json
print(_json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0],
                   "cwd": os.getcwd(), "home": os.environ.get("PROBE_HOME"),
                   "main": sys.modules["__main__"].__dict__.get("_json")
                   is not None}))
sys.exit(3)
"""


def test_a_forked_python_block_runs_as_python_c(tmp_path):
    """A Python block in the warm server's fork (`Session._run_python`) and
    `python -c` in a new interpreter: the same argv, __main__ module,
    sys.path[0], directory, environment and exit status."""
    env = dict(os.environ, PROBE_HOME=str(tmp_path))
    forked = shared_server().run(["-c", _PROBE, "x"], tmp_path, env, 120)
    fresh = subprocess.run([sys.executable, "-c", _PROBE, "x"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=120)
    assert fresh.returncode == forked.returncode == 3, forked.stderr
    assert forked.stdout == fresh.stdout
    assert fresh.stdout.startswith('{"argv": ["-c", "x"], "name": "__main__", '
                                   '"path0": "", ')


def test_the_requires_probe_imports_in_the_fork():
    """`_imports`, the probe of `<!-- readme-test: requires MOD -->`:
    modules that import (one the server has imported already) and a
    package's submodule that does not."""
    assert _imports("json") and _imports("tensorflow")
    assert not _imports("no_such_module_for_the_readme_probe")
    assert not _imports("tests.helpers.no_such_module_for_the_probe")


def test_the_shim_forks_root_scripts_and_the_readers_own(tmp_path, monkeypatch):
    """tests/helpers/python_shim.py forks `python FILE.py` for the root
    scripts and for a script outside the repository (the reader's own,
    written under $OUT); the repository's other files (demos/, benchmarks/,
    setup.py) and missing files get the real interpreter."""
    from tests.helpers.python_shim import _forked_script

    monkeypatch.setenv("BERT_REPO_ROOT", str(REPO_ROOT))
    mine = tmp_path / "my_classifier.py"
    mine.write_text("print(1)\n")
    root_script = str(REPO_ROOT / "run_classifier.py")
    assert _forked_script([root_script, "--x=1"]) == os.path.realpath(root_script)
    assert _forked_script([str(mine)]) == os.path.realpath(mine)
    for other in (REPO_ROOT / "setup.py", REPO_ROOT / "demos" / "build_next_sentence_choice.py",
                  tmp_path / "missing.py", "-m"):
        other = str(other)
        assert _forked_script([other]) is None, other
