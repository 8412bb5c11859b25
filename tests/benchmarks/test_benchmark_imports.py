"""Every project name a benchmark imports exists.

The benchmarks' PyTorch sides (torch_fine_tune.py, torch_bert.py) cannot run
here without torch, so a library function they use that moved or went away
would only show after a long benchmark run (the SQuAD row's PyTorch side
once failed so: the load_dataset function of data.squad.evaluate had gone). Every import
statement is read from the source, function-level ones included.
"""
import ast
import importlib
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("data", "modeling", "serving", "tasks")


def _project_imports(path):
    """(line, module, name or None) of each project import in `path`."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and \
                node.module.split(".")[0] in PACKAGES:
            for alias in node.names:
                yield node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    yield node.lineno, alias.name, None


BENCHMARKS = sorted((REPO / "benchmarks").glob("*.py"))


def test_the_benchmarks_import_project_code():
    # The check below must see imports at all (e.g. torch_fine_tune.py's).
    assert any(list(_project_imports(path)) for path in BENCHMARKS)


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_imported_names_exist(path):
    missing = []
    for line, module_name, name in _project_imports(path):
        module = importlib.import_module(module_name)
        if name is None or hasattr(module, name):
            continue
        try:  # `from package import submodule`
            importlib.import_module(f"{module_name}.{name}")
        except ModuleNotFoundError:
            missing.append(f"{path.name}:{line}: {module_name}.{name}")
    assert not missing, missing
