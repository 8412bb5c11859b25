"""Compatibility alias: `data.squad_evaluate` is `data.squad.evaluate`
(moved when data/ was split by task). `python -m data.squad_evaluate ...`
still runs the official evaluation."""
import importlib
import sys

_evaluate = importlib.import_module("data.squad.evaluate")
if __name__ == "__main__":
    sys.exit(_evaluate.main())
sys.modules[__name__] = _evaluate
