"""Names a package imports on first use (PEP 562), so importing the package
loads no TensorFlow: `bert_tf1`, `bert_tf1.tasks`, `bert_tf1.data.tokenization`.
"""
import importlib


def lazy_exports(package, exports):
    """The `__getattr__` and `__dir__` of a package whose names load late.

    Args:
      package: the package's `__name__`, for the error message.
      exports: dict, public name -> dotted name of the module defining it.

    Returns:
      (`__getattr__`, `__dir__`) for the package's module namespace; the
      first raises AttributeError for a name not in `exports`.
    """
    def __getattr__(name):
        if name not in exports:
            raise AttributeError(
                f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    def __dir__():
        namespace = importlib.import_module(package).__dict__
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
