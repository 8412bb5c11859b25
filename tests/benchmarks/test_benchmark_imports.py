"""Every project name a benchmark imports exists.

The benchmarks' PyTorch sides (torch_fine_tune.py, torch_bert.py) cannot run
here without torch, so a library function they use that moved or went away
would only show after a long benchmark run (the SQuAD row's PyTorch side
once failed so: the load_dataset function of bert_tf1.data.squad.evaluate had gone). Every import
statement is read from the source, function-level ones included.
"""
import importlib
import pathlib

import pytest

from tests.test_import_layers import _imports

REPO = pathlib.Path(__file__).resolve().parents[2]
BENCHMARKS = sorted((REPO / "benchmarks").glob("*.py"))


def _resolves(dotted):
    """A module of the package, or an attribute of the module before its
    last dot (`_imports` names them without the `bert_tf1.` prefix)."""
    dotted = f"bert_tf1.{dotted}"
    try:
        importlib.import_module(dotted)
        return True
    except ModuleNotFoundError:
        parent, _, name = dotted.rpartition(".")
        return hasattr(importlib.import_module(parent), name)


def test_the_benchmarks_import_project_code():
    # The check below must see imports at all (e.g. torch_fine_tune.py's).
    assert any(_imports(path) for path in BENCHMARKS)


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_imported_names_exist(path):
    missing = sorted(name for name in _imports(path) if not _resolves(name))
    assert not missing, f"{path.name} imports {missing}"
