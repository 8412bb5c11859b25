"""Converters of the numeric graph (`bert_tf1.serving.numeric`) to the
runtimes a BERT is served on, one module each: `openvino` (IR), `litert`
(.tflite), `onnx`. Each has `convert(numeric, numeric_dir, out_dir, int8)
-> info dict` (`numeric`: the in-memory `NumericServing`, saved at
`numeric_dir`) and `Runner(folder)`, called with int32 numpy ids by name,
giving numpy outputs by name (the numeric signature's names). The writer of
an export's folders is `writer`, its `export_info.json` `info`.

Their libraries are the `[deploy]` extra; `require(format)` says which is
missing in one line.
"""
import importlib
import importlib.util

from bert_tf1.data.io.errors import UserError
from bert_tf1.serving.formats.info import FORMATS

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


def check_formats(names, serving_version=None, flag="--format"):
    """Checks a list of formats (--format, or `export_model`'s `formats`)
    before anything is built; `flag` names them in the messages (a
    fine-tuning script's: --export_format).

    Raises:
        UserError: an unknown or repeated format, a converter's library
            not installed, or --serving_version without a SavedModel format.
    """
    if not names:
        raise UserError(f"{flag}: give one or more of {', '.join(FORMATS)}.")
    for name in names:
        if name not in FORMATS:
            raise UserError(f"{flag}={name}: expected one or more of "
                            f"{', '.join(FORMATS)} (comma-separated).")
        require(name, f"{flag}={name}")
    if len(set(names)) != len(names):
        raise UserError(f"{flag} lists a format twice: {','.join(names)}.")
    if serving_version is not None and not {"saved_model", "numeric"} & set(
            names):
        raise UserError("--serving_version sets the TF Serving layout of "
                        "--format=saved_model or numeric; neither is listed.")
    if serving_version is not None and serving_version < 1:
        raise UserError(f"--serving_version must be >= 1, got "
                        f"{serving_version}.")
