"""Every path and dotted name the documentation puts in backticks exists.

Read: every `*.md` file of the repository, and the docstrings (module,
class, function) of its Python files. In each backticked span:

- a path that starts with a project folder (`bert_tf1/modeling/`, `bert_tf1/data/`, ...,
  `docs/`, `configs/`) or is a root script (`run_classifier.py`,
  `run_main.sh`, ...), relative to the repository root, must exist. A path
  may end in a Python name (`tests/helpers/script_runner.run_script`,
  `bert_tf1/modeling/naming.py:tf1_name`): that name must be defined in the file.
  Spans with a placeholder or pattern (`<`, `*`, `{`, `$`, `...`, `N`-style
  stand-ins such as `model.ckpt-N` are not paths of this kind) are left out;
- a dotted name that starts with `bert_tf1` (`bert_tf1.BertModel`,
  `bert_tf1.modeling.training.run_training`, `bert_tf1.tasks.cli.main(...)`)
  must import: the longest importable module, then `getattr` for the rest; one
  that starts with a folder (modeling.x) names no import (the folders are
  imported as `bert_tf1.<folder>`) and is reported.

and every relative markdown link (`[text](docs/serving.md#limits)`) must
reach a file, and a heading of it when it names one.

Fenced code blocks of the markdown files are run by tests/test_readme.py,
not read here.
"""
import ast
import importlib
import pathlib
import re

import pytest

from tests.conftest import REPO_ROOT

# The library's folders once sat at the root: a path that still starts with
# one of them is checked (and reported, being gone) too.
FOLDERS = ("bert_tf1", "modeling", "data", "serving", "tasks", "tests",
           "benchmarks", "demos", "docs", "configs", "notebooks")
PACKAGES = ("modeling", "data", "serving", "tasks")
SKIP_DIRS = {".git", ".venv", "venv", "build", "node_modules", "__pycache__"}
# Inline code: one or two backticks, on one line or across a line break.
SPAN = re.compile(r"(?<!`)(`{1,2})(?!`)([^`]+?)(?<!`)\1(?!`)")
FENCE = re.compile(r"^\s*```.*?^\s*```[^\n]*$", re.MULTILINE | re.DOTALL)
PLACEHOLDER = re.compile(r"[<>*{}$\[\]|]|\.\.\.")
# A root script that is not there is still a root script reference.
ROOT_SCRIPT = re.compile(r"^run_\w+\.(py|sh)$")
DOTTED = re.compile(r"^((?:bert_tf1|%s)(?:\.[A-Za-z_]\w*)+)" % "|".join(PACKAGES))


def root_scripts():
    return {path.name for path in REPO_ROOT.iterdir()
            if path.is_file() and path.suffix in (".py", ".sh")}


def _files(suffix):
    for path in sorted(REPO_ROOT.rglob(f"*{suffix}")):
        parts = path.relative_to(REPO_ROOT).parts
        if not SKIP_DIRS.intersection(parts) and not any(
                part.startswith(".") for part in parts[:-1]):
            yield path


def _docstrings(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in [tree, *ast.walk(tree)]:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text:
                line = node.body[0].lineno if node.body else 1
                yield line, text


def sources():
    """(where, text) for every markdown file and every docstring."""
    for path in _files(".md"):
        text = FENCE.sub(lambda match: "\n" * match.group(0).count("\n"),
                         path.read_text(encoding="utf-8"))
        yield path.relative_to(REPO_ROOT).as_posix(), text
    for path in _files(".py"):
        for line, text in _docstrings(path):
            yield f"{path.relative_to(REPO_ROOT).as_posix()}:{line}", text


def spans(text):
    for match in SPAN.finditer(text):
        span = " ".join(match.group(2).split())
        if span:
            yield span


def path_reference(span, scripts):
    """The repository path a span names, or None."""
    token = span.split()[0].rstrip(",;:.)")
    if PLACEHOLDER.search(token) or token.startswith(("/", "..")):
        return None
    first = token.split("/")[0]
    if "/" in token and first in FOLDERS:
        return token
    if token in scripts or token.split(":")[0] in scripts or (
            scripts and ROOT_SCRIPT.match(token)):
        return token
    return None


def check_path(token):
    """None if `token` exists (or is a file plus a name defined in it),
    else why not."""
    if ":" in token:
        token, name = token.split(":", 1)
    else:
        name = None
    path = REPO_ROOT / token
    if path.exists():
        return None if name is None else _check_defined(path, name, token)
    # tests/helpers/script_runner.run_script: a module path plus a name.
    head, _, tail = token.rpartition("/")
    module, dot, name = tail.partition(".")
    candidate = REPO_ROOT / head / f"{module}.py"
    if dot and name and candidate.is_file():
        return _check_defined(candidate, name.split(".")[0], token)
    return f"no such file or folder: {token}"


def _check_defined(path, name, token):
    if path.suffix != ".py":
        return f"{token}: {path.name} is not a Python file"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
    return None if name in defined else f"{token}: {name} is not defined in {path.name}"


# `modeling.py`, `data.json`: file names, not Python names.
FILE_SUFFIXES = {"py", "sh", "json", "txt", "md", "tsv", "csv", "h5", "keras",
                 "tfrecord", "ckpt", "index", "zip", "jsonl", "png", "conll"}


def dotted_reference(span):
    match = DOTTED.match(span)
    if not match or match.group(1).rsplit(".", 1)[1] in FILE_SUFFIXES:
        return None
    return match.group(1)


def check_dotted(name):
    """None if `name` resolves (import the longest module, getattr the
    rest), else why not."""
    parts = name.split(".")
    if parts[0] in PACKAGES:
        return f"{name}: not an import name (bert_tf1.{name})"
    script = (REPO_ROOT / "bert_tf1" / f"{parts[1]}.py" if len(parts) > 1
              else None)
    if parts[0] == "bert_tf1" and (REPO_ROOT / f"{parts[1]}.py").is_file():
        # A script module defines its flags on import, and two scripts share
        # flag names (absl refuses the second): read it instead.
        return (None if len(parts) == 2
                else _check_defined(script, parts[2], name))
    module, error = None, None
    for end in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if missing.split(".")[0] != "bert_tf1":
                return None  # an optional dependency (apache_beam, torch) is absent
            error = exc
            continue
        break
    if module is None:
        return f"{name}: cannot import {parts[0]} ({error})"
    value = module
    for index in range(end, len(parts)):
        if not hasattr(value, parts[index]):
            return (f"{name}: {'.'.join(parts[:index])} has no attribute "
                    f"{parts[index]!r}")
        value = getattr(value, parts[index])
    return None


def broken_references(items):
    """'where: why' for every backticked reference in (where, text) that
    does not resolve."""
    scripts = root_scripts()
    broken, seen = [], {}
    for where, text in items:
        for span in spans(text):
            # Each word of a command counts: `pytest tests/modeling/x.py`.
            words = span.split()
            for position, word in enumerate(words):
                reference = path_reference(word, scripts if position == 0 else ())
                if reference is not None:
                    if reference not in seen:
                        seen[reference] = check_path(reference)
                    why = seen[reference]
                else:
                    # A name at the start, or a module after `-m`.
                    named = position == 0 or words[position - 1] == "-m"
                    dotted = dotted_reference(word) if named else None
                    if dotted is None:
                        continue
                    if dotted not in seen:
                        seen[dotted] = check_dotted(dotted)
                    why = seen[dotted]
                if why:
                    broken.append(f"{where}: {why}")
    return broken


def test_every_backticked_path_and_name_resolves():
    broken = broken_references(sources())
    assert not broken, (f"{len(broken)} references do not resolve:\n"
                        + "\n".join(broken))


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def heading_anchors(path):
    """GitHub's anchors of a markdown file's headings."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    anchors = set()
    for line in text.splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
            anchors.add(slug)
    return anchors


def broken_links(path, text):
    """Relative links of one markdown file that reach no file or heading."""
    broken = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        goal = (path.parent / file_part).resolve() if file_part else path
        if not goal.exists():
            broken.append(f"{target}: no such file")
        elif anchor and goal.suffix == ".md" and anchor not in heading_anchors(goal):
            broken.append(f"{target}: no heading '{anchor}' in {goal.name}")
    return broken


def test_every_relative_link_resolves():
    broken = []
    for path in _files(".md"):
        text = FENCE.sub("", path.read_text(encoding="utf-8"))
        broken += [f"{path.relative_to(REPO_ROOT).as_posix()}: {why}"
                   for why in broken_links(path, text)]
    assert not broken, f"{len(broken)} links do not resolve:\n" + "\n".join(broken)


def test_links_are_checked(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A title: `x.py`\n\n## Set-up\n", encoding="utf-8")
    text = ("[a](page.md#set-up) [b](page.md#a-title-xpy) [c](#set-up) "
            "[d](missing.md) [e](page.md#nowhere) [f](https://example.com/x)")
    assert broken_links(page, text) == [
        "missing.md: no such file", "page.md#nowhere: no heading 'nowhere' in page.md"]


def test_the_checks_can_fail():
    items = [("x.md", "see `bert_tf1/modeling/no_such_module.py`, `bert_tf1.modeling.no_such_name`, "
                      "`bert_tf1.tasks.cli.no_such_function(...)`, `run_nothing.py` and "
                      "`tasks.cli.main`, "
                      "`tests/helpers/script_runner.no_such_helper`, "
                      "`python -m bert_tf1.data.squad.no_such_module`; fine: "
                      "`bert_tf1/modeling/training/loop.py`, `bert_tf1.modeling.training.run_training`, "
                      "`run_classifier.py --do_train`, `bert_tf1/data/<task>/`, "
                      "`tests/helpers/script_runner.run_script`")]
    broken = broken_references(items)
    assert [line.split(": ", 1)[1].split(":")[0] for line in broken] == [
        "no such file or folder", "bert_tf1.modeling.no_such_name",
        "bert_tf1.tasks.cli.no_such_function", "no such file or folder",
        "tasks.cli.main",
        "tests/helpers/script_runner.no_such_helper", "bert_tf1.data.squad.no_such_module"]


@pytest.mark.parametrize("text, expected", [
    ("`a` and ``b`` and `c\nd`", ["a", "b", "c d"]),
    ("```x``` `y`", ["y"]),
])
def test_spans(text, expected):
    assert list(spans(text)) == expected


def test_a_root_scripts_names_are_read_not_imported():
    assert check_dotted("bert_tf1.run_classifier") is None
    assert check_dotted("bert_tf1.run_classifier.main") is None
    assert "no_such_name is not defined in run_squad.py" in check_dotted(
        "bert_tf1.run_squad.no_such_name")
