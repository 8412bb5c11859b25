"""Compatibility alias: `data.classifier_processors` is `data.glue.processors` (moved when data/ was
split by task); the module object itself is shared, so every name works."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("data.glue.processors")
