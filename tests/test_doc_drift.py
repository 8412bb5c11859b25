"""What the documentation quotes from the code, checked against the code.

tests/test_doc_references.py checks that a backticked path or name exists;
these checks read facts the pages state about the code, which a change of
the code alone would make false:

- the number of bad inputs `tests/scripts/test_bad_inputs.py` runs and the
  number of scripts it runs them through (docs/troubleshooting.md);
- the `file.py:N` of a quoted absl log line (docs/running_scripts.md's
  `step_logs.py:N`): line N of that module must start the logging call;
- the "What is where" table of docs/architecture.md names every module of
  the library (the rule: `uncovered_modules`).

Each check is a function over text and paths, so the tests below also run
it on a planted change and watch it fail.
"""
import ast
import pathlib
import re

from tests.conftest import REPO_ROOT

SKIP_DIRS = {".git", ".venv", "venv", "build", "node_modules", "__pycache__"}


def markdown_pages(root=REPO_ROOT):
    """{relative path: text} of every markdown file of the repository."""
    pages = {}
    for path in sorted(root.rglob("*.md")):
        parts = path.relative_to(root).parts
        if SKIP_DIRS.intersection(parts) or any(
                part.startswith(".") for part in parts[:-1]):
            continue
        pages[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    return pages


def library_modules(root=REPO_ROOT):
    """Repository paths of the library's modules: every .py under bert_tf1/
    except the packages' __init__.py."""
    return sorted(path.relative_to(root).as_posix()
                  for path in (root / "bert_tf1").rglob("*.py")
                  if path.name != "__init__.py"
                  and "__pycache__" not in path.parts)


# --- the bad-input table's size -------------------------------------------

BAD_INPUTS = re.compile(
    r"`tests/scripts/test_bad_inputs\.py`\s+runs\s+(\d+)\s+such\s+mistakes"
    r"\s+through\s+all\s+(\d+)\s+scripts")


def bad_input_mismatches(pages, cases, scripts):
    """'page: why' for each sentence of `pages` ({name: text}) that gives
    `tests/scripts/test_bad_inputs.py`'s counts and differs from `cases`
    (the table's cases) or `scripts` (the scripts they run); one line too
    when no page gives the counts at all."""
    found, wrong = 0, []
    for name, text in pages.items():
        for match in BAD_INPUTS.finditer(text):
            found += 1
            said_cases, said_scripts = int(match.group(1)), int(match.group(2))
            if (said_cases, said_scripts) != (cases, scripts):
                wrong.append(f"{name}: says {said_cases} mistakes through "
                             f"{said_scripts} scripts; the table holds {cases} "
                             f"through {scripts}")
    if not found:
        wrong.append("no page says how many mistakes "
                     "tests/scripts/test_bad_inputs.py runs")
    return wrong


def table_counts():
    """(cases, scripts) as pytest collects them: test_bad_input is
    parametrized over CASES, one test per case, ids the case names."""
    from tests.helpers.bad_input_cases import CASES
    names = [bad.name for bad in CASES]
    assert len(set(names)) == len(names), "two cases share a test id"
    return len(names), len({bad.script for bad in CASES})


def test_the_documented_bad_input_count_is_the_tables():
    cases, scripts = table_counts()
    wrong = bad_input_mismatches(markdown_pages(), cases, scripts)
    assert not wrong, "\n".join(wrong)


def test_a_wrong_bad_input_count_is_reported():
    sentence = ("`tests/scripts/test_bad_inputs.py` runs {} such mistakes "
                "through all {} scripts")
    pages = {"docs/right.md": sentence.format(109, 11),
             "docs/planted.md": "text\n" + sentence.format(103, 10)}
    assert bad_input_mismatches(pages, 109, 11) == [
        "docs/planted.md: says 103 mistakes through 10 scripts; the table "
        "holds 109 through 11"]
    assert bad_input_mismatches({"docs/right.md": sentence.format(109, 11)},
                                110, 11) != []
    assert bad_input_mismatches({"docs/other.md": "no count"}, 109, 11) == [
        "no page says how many mistakes tests/scripts/test_bad_inputs.py runs"]


# --- file.py:N of quoted log lines ----------------------------------------

# absl's prefix: `I1201 10:09:50.247114 140295970839424 step_logs.py:158] ...`
LOG_QUOTE = re.compile(r"\b(\w+\.py):(\d+)\]")


def logging_call_lines(path):
    """Lines of `path` on which a `logging.<level>(...)` call starts: the
    line absl names for it."""
    tree = ast.parse(pathlib.Path(path).read_text(encoding="utf-8"))
    return {node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "logging"}


def log_quote_mismatches(pages, modules, root=REPO_ROOT):
    """'page: why' for each `name.py:N]` log quote of `pages` whose N is
    not the first line of a logging call in the module `name.py` of
    `modules` (repository paths under `root`); a name that matches no
    module, or several, is reported too."""
    wrong = []
    for page, text in pages.items():
        for match in LOG_QUOTE.finditer(text):
            name, line = match.group(1), int(match.group(2))
            candidates = [module for module in modules
                          if module.rsplit("/", 1)[-1] == name]
            if len(candidates) != 1:
                wrong.append(f"{page}: {name}:{line}: {len(candidates)} "
                             f"modules of the library are named {name}")
                continue
            calls = logging_call_lines(root / candidates[0])
            if line not in calls:
                wrong.append(f"{page}: {name}:{line}: line {line} of "
                             f"{candidates[0]} starts no logging call (they "
                             f"start on {sorted(calls)})")
    return wrong


def test_quoted_log_lines_name_the_logging_call():
    pages = markdown_pages()
    quotes = [page for page, text in pages.items() if "step_logs.py:" in text]
    assert "docs/running_scripts.md" in quotes
    wrong = log_quote_mismatches(pages, library_modules())
    assert not wrong, "\n".join(wrong)


def test_a_moved_logging_call_is_reported(tmp_path):
    module = "bert_tf1/modeling/training/step_logs.py"
    source = (REPO_ROOT / module).read_text(encoding="utf-8")
    line = min(logging_call_lines(REPO_ROOT / module))
    quote = {"docs/page.md": f"I1201 10:09:50.247114 1 step_logs.py:{line}] loss = 1"}
    copy = tmp_path / module
    copy.parent.mkdir(parents=True)
    copy.write_text(source, encoding="utf-8")
    assert log_quote_mismatches(quote, [module], root=tmp_path) == []
    # Planted: one line more above the call moves it down.
    copy.write_text("# a new first line\n" + source, encoding="utf-8")
    wrong = log_quote_mismatches(quote, [module], root=tmp_path)
    assert len(wrong) == 1 and f"line {line} of {module} starts no logging call" in wrong[0]
    assert log_quote_mismatches({"docs/page.md": "x.py:3] text"}, [module],
                                root=tmp_path) == [
        "docs/page.md: x.py:3: 0 modules of the library are named x.py"]


# --- docs/architecture.md's "What is where" --------------------------------

CODE = re.compile(r"`([^`]+)`")


def what_is_where_rows(text):
    """[(path cell, what cell)] of the table under `## What is where`."""
    section = text.split("\n## What is where", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if cells[:2] != ["path", "what"]:
            rows.append((cells[0], " | ".join(cells[1:])))
    return rows


def _row_folders(path_cell):
    """The folders a path cell names: `x/y/` itself, `x/y/z.py`'s x/y/."""
    folders = set()
    for name in CODE.findall(path_cell):
        if name.endswith("/"):
            folders.add(name)
        elif "/" in name and name.endswith(".py"):
            folders.add(name.rsplit("/", 1)[0] + "/")
    return folders


def uncovered_modules(rows, modules):
    """The modules (repository paths) that no row of the table names.

    A row names the module `bert_tf1/<folder>/<name>.py` when, in backticks,
    (a) either of its cells holds the module's full path
        (`bert_tf1/modeling/config.py`), or
    (b) its path cell names exactly one folder, as a path ending in "/"
        (`bert_tf1/modeling/training/`) or as the folder of the file paths
        in it (`bert_tf1/modeling/config.py` names `bert_tf1/modeling/`), that
        holds the module, and either cell holds the module's path relative to
        that folder, `.py` included (`step_logs.py`, `formats/onnx.py`).
    A bare stem (`loop`) or a file name in a row whose path cell names
    several folders does not count: a reader could not tell which file it is.
    """
    named = set()
    for path_cell, what_cell in rows:
        spans = set(CODE.findall(path_cell)) | set(CODE.findall(what_cell))
        folders = _row_folders(path_cell)
        for module in modules:
            if module in spans:
                named.add(module)
            elif len(folders) == 1:
                folder = next(iter(folders))
                if module.startswith(folder) and module[len(folder):] in spans:
                    named.add(module)
    return [module for module in modules if module not in named]


def test_what_is_where_names_every_module():
    text = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = uncovered_modules(what_is_where_rows(text), library_modules())
    assert not missing, ("docs/architecture.md's \"What is where\" table does "
                         "not name: " + ", ".join(missing))


def test_a_module_missing_from_the_table_is_reported(tmp_path):
    table = "\n".join([
        "# Page", "", "## What is where", "", "| path | what |", "|---|---|",
        "| `bert_tf1/a/` | the jobs: `one.py`, `sub/two.py`, `three` |",
        "| `bert_tf1/b/x.py`, `y.py` | two modules |",
        "| `bert_tf1/c/`, `bert_tf1/d/` | two folders: `z.py` |",
        "| `bert_tf1/e/` | see `bert_tf1/f/w.py` |", "", "## Next",
        "| `bert_tf1/g/v.py` | after the section |"])
    rows = what_is_where_rows(table)
    assert len(rows) == 4
    # A fake tree, one module per way of naming it and of missing it.
    for module in ("a/one.py", "a/sub/two.py", "a/three.py", "b/x.py", "b/y.py",
                   "c/z.py", "f/w.py", "g/v.py", "a/__init__.py"):
        path = tmp_path / "bert_tf1" / module
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
    modules = library_modules(tmp_path)
    assert "bert_tf1/a/__init__.py" not in modules
    assert uncovered_modules(rows, modules) == [
        "bert_tf1/a/three.py", "bert_tf1/c/z.py", "bert_tf1/g/v.py"]
    # Planted in the real tree: a new module the table does not list.
    real = (REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    planted = library_modules() + ["bert_tf1/modeling/training/planted.py"]
    assert "bert_tf1/modeling/training/planted.py" in uncovered_modules(
        what_is_where_rows(real), planted)
