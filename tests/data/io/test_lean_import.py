"""Tests for bert_tf1/data/io/lean_import.py: scikit-learn and matplotlib are
hidden only while the block runs, and nothing already imported is touched."""
import sys
import types

import pytest

from bert_tf1.data.io.lean_import import (UNUSED_BY_OUR_PROCESSES,
                                          without_unused_keras_imports)


@pytest.mark.parametrize("name", UNUSED_BY_OUR_PROCESSES)
def test_hidden_only_while_the_block_runs(monkeypatch, name):
    monkeypatch.delitem(sys.modules, name, raising=False)
    with without_unused_keras_imports():
        with pytest.raises(ImportError):
            __import__(name)
    assert name not in sys.modules  # importable again afterwards
    # Already imported: left as it is.
    imported = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, imported)
    with without_unused_keras_imports():
        assert sys.modules[name] is imported
    assert sys.modules[name] is imported

