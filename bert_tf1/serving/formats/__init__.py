"""Converters of the numeric SavedModel (`bert_tf1.serving.numeric`) to the runtimes
a BERT is served on, one module each: `openvino` (IR), `litert` (.tflite),
`onnx`. Each has `convert(numeric_dir, out_dir, int8) -> info dict` and
`Runner(folder)`, called with int32 numpy ids by name, giving numpy outputs
by name (the numeric signature's names).

Their libraries are the `[deploy]` extra; `require(format)` says which is
missing in one line.
"""
import importlib
import importlib.util

from bert_tf1.data.io.errors import UserError

#: The formats of export_saved_model.py --format, one folder each, and the
#: file in each folder that says what it holds.
FORMATS = ("saved_model", "numeric", "openvino", "litert", "onnx")
INFO_FILE = "export_info.json"
#: format -> the modules its converter and runner need (the [deploy] extra).
REQUIRED_MODULES = {"openvino": ("openvino", "nncf"),
                    "litert": ("ai_edge_litert",),
                    "onnx": ("tf2onnx", "onnxruntime", "onnx")}


def require(format_name, where=None):
    """Checks that `format_name`'s libraries import (`where`: what needs
    them in the message; default the --format flag).

    Raises:
        UserError: one is not installed (names it and the extra).
    """
    for module in REQUIRED_MODULES.get(format_name, ()):
        if importlib.util.find_spec(module) is None:
            raise UserError(
                f"{where or '--format=' + format_name} needs the Python "
                f"package {module}, "
                "from the [deploy] extra: pip install "
                "'bert-keras-tf1compat[deploy]'.")


def converter(format_name):
    """The module `bert_tf1.serving.formats.<format_name>` (after `require`)."""
    require(format_name)
    return importlib.import_module(f"bert_tf1.serving.formats.{format_name}")
