"""Writes an export: the raw-text SavedModel alone, or one folder per format
(`FORMATS`), each with `export_info.json` (`bert_tf1.serving.formats.info`),
atomically as a whole; the converted formats are made from the numeric
graph (`bert_tf1.serving.numeric`).
"""
import contextlib
import gc
import io
import os
import re
import shutil

import tensorflow as tf
from absl import logging

from bert_tf1.data.io.atomic import write_directory_atomically
from bert_tf1.data.io.stderr_noise import tensorflow_noise_filtered
from bert_tf1.modeling import keras_internals
from bert_tf1.serving import formats
from bert_tf1.serving.formats.info import write_info
from bert_tf1.serving.numeric import SIGNATURE, NumericServing

_TF_TOOL = f"tensorflow {tf.__version__}"


def track_captured_variables(module, concrete_functions):
    """Tracks the tf.Variables the signatures' concrete functions
    (`concrete_functions`: {name: ConcreteFunction}) capture on `module`, as
    `keras.export.ExportArchive` does, so loaders that run the TF1 graph
    (`saved_model_cli run`, TensorFlow Serving) find them (tensorflow/tensorflow
    issue 72963); with the Keras model held untracked
    (`bert_tf1.serving.text_module.hold_untracked`) every weight is saved
    once, under `captured_variables`."""
    seen, captured = set(), []
    for function in concrete_functions.values():
        for variable in function.variables:
            if id(variable) not in seen:
                seen.add(id(variable))
                captured.append(variable)
    module.captured_variables = captured


def save_module(module, directory):
    """tf.saved_model.save of a serving module with its signatures and its
    captured variables tracked; returns {signature name: ConcreteFunction}.

    Each signature is traced once: a tf.function's traces are kept per
    tracing context, and a SaveContext (its variable policy) is part of that
    context (tensorflow/python/eager/polymorphic_function/function_context.py,
    make_function_context), so a trace made outside tf.saved_model.save is
    made again inside it. Tracing the signatures under the SaveContext
    tf.saved_model.save enters itself, with the same SaveOptions, lets
    saving reuse these traces (the raw-text signatures' tokenizer, packer
    and model graphs take seconds each); the graphs and the files written
    are the same (TensorFlow has no public hook for this:
    `keras_internals.saved_model_tracing_context`)."""
    signatures = module.signatures()
    options = tf.saved_model.SaveOptions()
    with keras_internals.saved_model_tracing_context(options):
        concrete = {name: function.get_concrete_function()
                    for name, function in signatures.items()}
    track_captured_variables(module, concrete)
    tf.saved_model.save(module, directory, signatures=signatures,
                        options=options)
    return concrete


def _io(concrete):
    """[{name, shape, dtype}] of a concrete function's inputs and outputs."""
    def described(specs):
        return [{"name": name, "shape": spec.shape.as_list(),
                 "dtype": spec.dtype.name} for name, spec in specs]
    inputs = [(spec.name, spec) for spec in tf.nest.flatten(
        concrete.structured_input_signature)]
    return {"inputs": described(inputs),
            "outputs": described(sorted(concrete.structured_outputs.items()))}


def _info(name, settings, signatures, precision, tool, **extra):
    """export_info.json's fields; `signatures`: {name: ConcreteFunction}."""
    return dict({"format": name, "precision": precision, "tool": tool,
                 "labels": settings.labels, **settings.recorded(),
                 "signatures": {key: _io(function)
                                for key, function in signatures.items()}},
                **extra)


def _raw_text_info(settings, signatures, quantized):
    # The raw-text graph's squad_answer reads one window; predict_text.py
    # over this folder reads every window (bert_tf1.serving.predictions).
    extra = ({"squad_answer_windows": "first window only"}
             if settings.model_type == "squad" else {})
    return _info("saved_model", settings, signatures,
                 "Keras int8" if quantized else "float32", _TF_TOOL, **extra)


def write_saved_model(export_dir, module, settings, vocab_file,
                      quantized=False):
    """Writes the raw-text SavedModel of `module` (a serving module) at
    `export_dir` with its export_info.json, atomically."""
    def write(temp_dir):
        signatures = save_module(module, temp_dir)
        write_info(temp_dir, _raw_text_info(settings, signatures, quantized),
                   vocab_file, settings.do_lower_case, copy_vocab=False)

    write_directory_atomically(export_dir, write)
    logging.info("Wrote SavedModel %s with signatures %s.", export_dir,
                 ", ".join(sorted(module.signatures())))


#: The float output compared to measure an int8 format's drift.
_DRIFT_OUTPUT = {"classifier": "logits", "tagger": "logits",
                 "multiple_choice": "logits", "squad": "start_logits",
                 "encoder": "embedding", "regression": "score"}
DRIFT_ROWS = 64


def int8_drift(numeric, run, vocab_size, seed=0, numeric_run=None):
    """How far an int8 runner `run` moved from the float32 numeric graph on
    `DRIFT_ROWS` random id rows: {"output", "max_abs_change", and for
    outputs with a label, "same_argmax" (the fraction of rows whose argmax
    stayed)}. `numeric_run`: a runner of `numeric`'s signature (default: its
    tf.function called eagerly)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    shape = [DRIFT_ROWS] + ([2] if numeric.model_type == "multiple_choice"
                            else []) + [numeric.max_seq_length]
    lengths = rng.integers(3, numeric.max_seq_length + 1, shape[:-1])[..., None]
    mask = (np.arange(numeric.max_seq_length) < lengths).astype(np.int32)
    ids = (rng.integers(min(1000, vocab_size - 1), vocab_size, shape) * mask
           ).astype(np.int32)
    rows = {"input_ids": ids, "input_mask": mask,
            "segment_ids": np.zeros(shape, np.int32)}
    want = {key: np.asarray(value) for key, value in
            (numeric_run or numeric.serving_default)(**rows).items()}
    got = run(**rows)
    key = _DRIFT_OUTPUT["regression" if "score" in want
                        else numeric.model_type]
    if key not in got:   # the raw-text encoder's ids signature pools none
        key = "pooled_output"
    drift = {"output": key, "rows": DRIFT_ROWS,
             "max_abs_change": float(np.max(np.abs(got[key] - want[key])))}
    if key == "logits":
        drift["same_argmax"] = float(np.mean(
            got[key].argmax(-1) == want[key].argmax(-1)))
    return drift


def _runner(concrete):
    """A concrete function (int32 inputs by name) as a numpy runner."""
    return lambda **rows: {
        key: value.numpy() for key, value in concrete(
            **{name: tf.constant(row) for name, row in rows.items()}).items()}


def _ids_runner(concrete_functions, model_type):
    """A serving module's `*_ids` signature (of `save_module`'s concrete
    functions) as a numpy runner."""
    from bert_tf1.serving.runners import IDS_SIGNATURES

    return _runner(concrete_functions[IDS_SIGNATURES[model_type]])


def write_formats(export_dir, names, module, settings, vocab_file,
                  quantized_module=None, serving_version=None):
    """Writes each format of `names` (checked by `formats.check_formats`)
    into its folder under `export_dir`, atomically as a whole; returns the
    folders.

    Args:
        module: the float32 serving module (`bert_tf1.serving.export.
            serving_module`); quantized_module: its int8 twin for
            `--quantize=int8` (None: float32 everywhere; the converters
            quantize their own way).
        settings: the `ServedSettings` recorded in every export_info.json.

    Raises:
        OutputExistsError: export_dir exists.
        UserError: a converter refuses the model (e.g. an op LiteRT lacks).
    """
    numeric = NumericServing.of(module, settings.model_type)
    layout = "" if serving_version is None else f"/{serving_version}"
    int8 = quantized_module is not None
    with open(vocab_file, encoding="utf-8") as reader:
        vocab_size = sum(1 for _ in reader)
    folders = []

    def write(temp_dir):
        os.makedirs(temp_dir)
        numeric_dir = (f"{temp_dir}/numeric{layout}" if "numeric" in names
                       else f"{temp_dir}/.numeric")
        # Untracked captured variables convert to a LiteRT model that
        # outputs NaN: save_module tracks them.
        numeric_signatures = save_module(numeric, numeric_dir)
        numeric_run = _runner(numeric_signatures[SIGNATURE])
        for name in names:
            folder = f"{temp_dir}/{name}"
            if name == "saved_model":
                served = quantized_module or module
                signatures = save_module(served, folder + layout)
                details = _raw_text_info(settings, signatures, int8)
                if int8:
                    details["int8_drift"] = int8_drift(
                        numeric, _ids_runner(signatures, settings.model_type),
                        vocab_size, numeric_run=numeric_run)
            elif name == "numeric":
                details = _info(name, settings, numeric_signatures,
                                "float32", _TF_TOOL)
            else:
                os.makedirs(folder)
                # The converters' own output (MLIR diagnostics, tf2onnx's
                # progress, NNCF's tables) is dropped: a failure is one
                # UserError naming it.
                with tensorflow_noise_filtered(re.compile("")), \
                        contextlib.redirect_stdout(io.StringIO()):
                    converted = formats.converter(name).convert(
                        numeric, numeric_dir, folder, int8=int8)
                details = _info(name, settings, numeric_signatures,
                                **converted)
                if int8:
                    details["int8_drift"] = int8_drift(
                        numeric, formats.converter(name).Runner(folder),
                        vocab_size, numeric_run=numeric_run)
                gc.collect()   # the converter's graphs, before the next one
            write_info(folder, details, vocab_file, settings.do_lower_case)
            folders.append(f"{export_dir}/{name}")
        if "numeric" not in names:
            shutil.rmtree(numeric_dir)

    write_directory_atomically(export_dir, write)
    return folders
