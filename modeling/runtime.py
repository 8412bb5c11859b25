"""Compatibility alias: `modeling.runtime` is `modeling.training.runtime`
(moved when modeling/ was cut into subpackages); the module object itself is
shared, so every name works."""
import importlib
import sys

sys.modules[__name__] = importlib.import_module("modeling.training.runtime")
