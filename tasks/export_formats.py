"""export_saved_model.py --format: one folder per deployment format under
--export_dir, each with `vocab.txt`, `tokenizer_config.json` (the
lower-casing record) and `export_info.json`. The folders, what each format
holds and what --quantize=int8 means for each: docs/deploying.md. The
converted formats are made from the numeric SavedModel.
"""
import json
import os
import re
import shutil

import tensorflow as tf

from bert_tf1.data.io.atomic import write_directory_atomically
from bert_tf1.data.io.errors import UserError
from bert_tf1.data.tokenization.lower_case_record import write_lower_case
from bert_tf1.serving import build_serving_module, formats
from bert_tf1.serving.formats import FORMATS, INFO_FILE
from bert_tf1.serving.export import track_captured_variables
from bert_tf1.serving.numeric import NumericServing, save_numeric
from bert_tf1.serving.op_audit import audit_lines
from bert_tf1.tasks.quiet_start import tensorflow_noise_filtered


def check_formats(names, serving_version=None):
    """Checks a --format list before anything is built.

    Raises:
        UserError: an unknown or repeated format, a converter's library
            not installed, or --serving_version without a SavedModel format.
    """
    if not names:
        raise UserError(f"--format: give one or more of {', '.join(FORMATS)}.")
    for name in names:
        if name not in FORMATS:
            raise UserError(f"--format={name}: expected one or more of "
                            f"{', '.join(FORMATS)} (comma-separated).")
        formats.require(name)
    if len(set(names)) != len(names):
        raise UserError(f"--format lists a format twice: {','.join(names)}.")
    if serving_version is not None and not {"saved_model", "numeric"} & set(
            names):
        raise UserError("--serving_version sets the TF Serving layout of "
                        "--format=saved_model or numeric; neither is listed.")
    if serving_version is not None and serving_version < 1:
        raise UserError(f"--serving_version must be >= 1, got "
                        f"{serving_version}.")


def _io(function):
    """[{name, shape, dtype}] of a tf.function's inputs and outputs."""
    concrete = function.get_concrete_function()

    def described(specs):
        return [{"name": name, "shape": spec.shape.as_list(),
                 "dtype": spec.dtype.name} for name, spec in specs]
    inputs = [(spec.name, spec) for spec in tf.nest.flatten(
        concrete.structured_input_signature)]
    return {"inputs": described(inputs),
            "outputs": described(sorted(concrete.structured_outputs.items()))}


def _info(name, arguments, labels, signatures, precision, tool):
    settings = {key: value for key, value in arguments.items() if key not in (
        "bert_config_file", "vocab_file", "init_checkpoint", "label_list",
        "num_labels", "quantize")}
    return {"format": name, "precision": precision, "tool": tool,
            "labels": labels, **settings,
            "signatures": {key: _io(function)
                           for key, function in signatures.items()}}


def _write_info(folder, info, vocab_file, do_lower_case):
    os.makedirs(folder, exist_ok=True)
    shutil.copyfile(vocab_file, os.path.join(folder, "vocab.txt"))
    write_lower_case(folder, do_lower_case)
    with open(os.path.join(folder, INFO_FILE), "w", encoding="utf-8") as f:
        json.dump(info, f, indent=2, sort_keys=True)
        f.write("\n")


def write_formats(export_dir, names, arguments, labels, quantize=None,
                  serving_version=None):
    """Writes each format of `names` (checked by `check_formats`) into its
    folder under `export_dir`, atomically as a whole; prints the op audit of
    each SavedModel; returns the folders.

    Args:
        arguments: `bert_tf1.serving.build_serving_module` keyword arguments (no
            `quantize`); labels: the label names (None for an encoder or a
            regression), written to export_info.json.

    Raises:
        OutputExistsError: export_dir exists.
        UserError: a converter refuses the model (e.g. an op LiteRT lacks).
    """
    module = build_serving_module(**arguments)  # a bad checkpoint fails first
    numeric = NumericServing.of(module, arguments["model_type"])
    # Recorded with their defaults: predict_text.py's SQuAD and tagger rules.
    recorded = dict(arguments, **{key: getattr(module, key) for key in (
        "max_query_length", "max_answer_length", "n_best_size", "doc_stride")
        if hasattr(module, key)})
    tf_version = f"tensorflow {tf.__version__}"
    layout = "" if serving_version is None else f"/{serving_version}"
    folders, audited = [], []

    def write(temp_dir):
        os.makedirs(temp_dir)
        numeric_dir = (f"{temp_dir}/numeric{layout}" if "numeric" in names
                       else f"{temp_dir}/.numeric")
        save_numeric(numeric, numeric_dir)
        info = dict(arguments=recorded, labels=labels,
                    signatures=numeric.signatures())
        for name in names:
            folder = f"{temp_dir}/{name}"
            if name == "saved_model":
                served = (build_serving_module(**arguments, quantize=quantize)
                          if quantize else module)
                signatures = served.signatures()
                track_captured_variables(served, signatures)
                tf.saved_model.save(served, folder + layout,
                                    signatures=signatures)
                audited.append(name + layout)
                details = _info(name, recorded, labels, signatures,
                                "Keras int8" if quantize else "float32",
                                tf_version)
            elif name == "numeric":
                audited.append(name + layout)
                details = _info(name, precision="float32", tool=tf_version,
                                **info)
            else:
                os.makedirs(folder)
                # The converters' own output (MLIR diagnostics, tf2onnx's
                # progress) is dropped: a failure is one UserError naming it.
                with tensorflow_noise_filtered(re.compile("")):
                    converted = formats.converter(name).convert(
                        numeric_dir, folder, int8=bool(quantize))
                details = _info(name, **info, **converted)
            _write_info(folder, details, arguments["vocab_file"],
                        arguments["do_lower_case"])
            folders.append(f"{export_dir}/{name}")
        if "numeric" not in names:
            shutil.rmtree(numeric_dir)

    write_directory_atomically(export_dir, write)
    for path in audited:
        print("\n".join(audit_lines(f"{export_dir}/{path}")))
    return folders
