"""In a clone, without installing, static tools follow every import.

jedi (pure Python, the language server's engine in many editors) resolves
each `from bert_tf1... import name` of the library, the root shims and
`tests/` to a file of this clone, and each name of the flat API
(`from bert_tf1 import BertClassifier`) to its definition: the import path
is the file path (docs/differences.md, "One import name"). The lazily loaded
packages list their names for type checkers under `typing.TYPE_CHECKING`;
those lists equal the lazy tables.
"""
import ast
import importlib
import pathlib

import pytest

from tests.conftest import REPO_ROOT

jedi = pytest.importorskip(
    "jedi", reason="needs jedi (pip install -e '.[dev]')")

LAZY_PACKAGES = ("bert_tf1", "bert_tf1.tasks", "bert_tf1.data.tokenization")


def _project():
    # Only the clone and the standard library: no installed bert_tf1.
    return jedi.Project(REPO_ROOT, added_sys_path=[], smart_sys_path=False,
                        load_unsafe_extensions=False)


def _sources():
    paths = sorted((REPO_ROOT / "bert_tf1").rglob("*.py"))
    paths += sorted((REPO_ROOT / "tests").rglob("*.py"))
    paths += sorted(REPO_ROOT.glob("*.py"))
    return [path for path in paths if "__pycache__" not in path.parts]


def _project_imports(tree):
    """(line, column, module, name) of every name imported by
    `from bert_tf1... import name` (function-level imports too)."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.ImportFrom) and not node.level
                and (node.module or "").split(".")[0] == "bert_tf1"):
            for alias in node.names:
                yield alias.lineno, alias.col_offset, node.module, alias.name


def unresolved_imports(paths, project):
    """'file:line: module.name' for each import jedi does not take to a
    file inside the clone."""
    missing = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        imports = list(_project_imports(ast.parse(text)))
        if not imports:
            continue
        script = jedi.Script(code=text, path=path, project=project)
        for line, column, module, name in imports:
            found = script.goto(line, column, follow_imports=True)
            targets = [pathlib.Path(d.module_path) for d in found if d.module_path]
            if not any(t.is_relative_to(REPO_ROOT) for t in targets):
                where = (path.relative_to(REPO_ROOT)
                         if path.is_relative_to(REPO_ROOT) else path)
                missing.append(f"{where}:{line}: {module}.{name}")
    return missing


def test_every_project_import_resolves_to_a_file_of_the_clone():
    missing = unresolved_imports(_sources(), _project())
    assert not missing, (f"{len(missing)} imports jedi cannot follow:\n"
                         + "\n".join(missing[:50]))


def test_an_import_that_does_not_resolve_is_reported(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from bert_tf1.modeling.config import BertConfig\n"
                      "from bert_tf1.modeling.config import NoSuchName\n"
                      "from bert_tf1.no_such_package import x\n")
    missing = unresolved_imports([module], _project())
    assert [line.split(": ", 1)[1] for line in missing] == [
        "bert_tf1.modeling.config.NoSuchName", "bert_tf1.no_such_package.x"]


def _lazy_table(package):
    """The lazy table (name -> module) and the TYPE_CHECKING imports of a
    package's __init__.py, read from the file."""
    path = REPO_ROOT.joinpath(*package.split("."), "__init__.py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typed = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for child in node.body:
                typed.update((alias.name, child.module) for alias in child.names)
    return importlib.import_module(package), typed


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_type_checking_imports_list_the_lazy_names(package):
    module, typed = _lazy_table(package)
    lazy = {name: getattr(module, name).__module__ for name in
            (module.__all__ if hasattr(module, "__all__") else typed)}
    assert set(typed) == set(lazy)
    for name, source in typed.items():
        # Imported from the module that defines it or one that re-exports it.
        assert getattr(importlib.import_module(source), name).__module__ == lazy[name]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_each_flat_name_resolves_to_its_definition(package):
    module, typed = _lazy_table(package)
    code = "".join(f"from {package} import {name}\n" for name in sorted(typed))
    script = jedi.Script(code=code, path=REPO_ROOT / "flat_api_check.py",
                         project=_project())
    wrong = []
    for line, name in enumerate(sorted(typed), start=1):
        column = len(f"from {package} import ")
        found = script.goto(line, column, follow_imports=True)
        defining = importlib.import_module(
            getattr(module, name).__module__).__file__
        if not any(d.module_path and pathlib.Path(d.module_path) == pathlib.Path(
                defining) and d.type in ("class", "function") for d in found):
            wrong.append(f"{name}: {[(d.module_path, d.type) for d in found]}")
    assert not wrong, "\n".join(wrong)
