"""Compatibility alias: `data.packing` is `data.tokenization.packing` (moved when data/ was
split by task); the module object itself is shared, so every name works."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("data.tokenization.packing")
