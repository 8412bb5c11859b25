"""Exporting a checkpoint as a SavedModel that serves raw text.

The work is `bert_tf1.serving.export_saved_model`; here the label rules and every
check before anything is written. --format: one folder per deployment format
under --export_dir, each with `vocab.txt`, `tokenizer_config.json` (the
lower-casing record) and `export_info.json` (docs/deploying.md); the
converted formats are made from the numeric SavedModel.
"""
import dataclasses
import json
import os
import re
import shutil

import tensorflow as tf

from bert_tf1.data.glue.processors import get_processor
from bert_tf1.data.io.atomic import write_directory_atomically
from bert_tf1.data.tagging.outputs import read_label_list
from bert_tf1.data.tokenization import full_tokenizer
from bert_tf1.data.tokenization.lower_case_record import write_lower_case
from bert_tf1.modeling import checkpoints
from bert_tf1.serving import build_serving_module, export_saved_model, formats
from bert_tf1.serving.export import track_captured_variables
from bert_tf1.serving.formats import FORMATS, INFO_FILE
from bert_tf1.serving.numeric import NumericServing, save_numeric
from bert_tf1.serving.op_audit import audit_lines
from bert_tf1.tasks import checks
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.quiet_start import tensorflow_noise_filtered


@dataclasses.dataclass(kw_only=True)
class ServedModelConfig:
    """What a served model is built from: the flags of the same names of
    export_saved_model.py and predict_text.py (`bert_tf1.serving.build_serving_module`
    arguments; a classifier's labels from exactly one of task_name,
    label_list, num_labels; a tagger's from `tagger_labels`)."""
    model_type: str = "classifier"
    bert_config_file: str = None
    vocab_file: str = None
    do_lower_case: bool = True
    max_seq_length: int = 128
    init_checkpoint: str = None
    task_name: str = None
    label_list: list = None
    num_labels: int = None
    max_query_length: int = 64
    max_answer_length: int = 30
    n_best_size: int = 20
    label_list_file: str = None
    doc_stride: int = 128


@dataclasses.dataclass(kw_only=True)
class ExportConfig(ServedModelConfig):
    """The flags of export_saved_model.py: the served model, `export_dir`
    (must not exist), `quantize` (None or "int8"), an encoder's
    `embed_text` pooling (None: "mean") and `l2_normalize`; `format` (None:
    one raw-text SavedModel at export_dir; else a list of
    `bert_tf1.serving.formats.FORMATS`) and `serving_version`."""
    export_dir: str = None
    quantize: str = None
    pooling: str = None
    l2_normalize: bool = False
    format: list = None
    serving_version: int = None


class ExportTask:
    """Checks the export's inputs (`prepare`), then writes it (`run`).

    Raises (from `prepare()`):
        UserError: the label errors below, a case flag that contradicts the
            checkpoint's name, a missing config/vocab.
    """

    def __init__(self, config):
        self.config = config
        self.label_list = None
        self.num_labels = None

    def classifier_labels(self):
        """(label_list, num_labels) from task_name, label_list or num_labels.

        Raises:
            UserError: not exactly one of them, or num_labels < 1.
        """
        config = self.config
        given = [name for name in ("task_name", "label_list", "num_labels")
                 if getattr(config, name) is not None]
        if len(given) != 1:
            raise UserError(
                "--model_type=classifier needs exactly one of --task_name, "
                f"--label_list, --num_labels; got {given or 'none'}.")
        if config.task_name is not None:
            processor = get_processor(config.task_name)
            if processor.is_regression:
                return None, 1
            return processor.get_labels(), None
        if config.label_list is not None:
            checks.check_distinct(config.label_list, "--label_list")
            return list(config.label_list), None
        if config.num_labels < 1:
            raise UserError(f"--num_labels must be >= 1, got "
                            f"{config.num_labels}.")
        return None, config.num_labels

    def tagger_labels(self):
        """A tagger's tags: --label_list_file, --label_list, or the
        label_list.txt beside the checkpoint (for output_dir/best/: in
        output_dir).

        Raises:
            UserError: both flags, or none and no label_list.txt; a
                malformed file (names its line).
        """
        config = self.config
        if config.label_list_file and config.label_list:
            raise UserError("Give --label_list_file or --label_list for a "
                            "tagger, not both.")
        if config.label_list_file:
            return read_label_list(config.label_list_file)
        if config.label_list:
            checks.check_distinct(config.label_list, "--label_list")
            return list(config.label_list)
        checkpoint = os.fspath(config.init_checkpoint or "")
        folder = (checkpoint if os.path.isdir(checkpoint)
                  else os.path.dirname(checkpoint))
        beside = os.path.join(folder, "label_list.txt")
        if not os.path.isfile(beside) and os.path.basename(
                os.path.normpath(folder)) == "best":
            beside = os.path.join(os.path.dirname(os.path.normpath(folder)),
                                  "label_list.txt")
        if not os.path.isfile(beside):
            raise UserError(
                f"--model_type=tagger needs its tags: no label_list.txt in "
                f"{folder or '.'} (run_ner.py writes one into its "
                "output_dir); pass --label_list_file.")
        return read_label_list(beside)

    def prepare(self):
        """Every check that needs no model, before anything is written."""
        config = self.config
        checks.check_data_file(config.bert_config_file, "--bert_config_file")
        checks.check_data_file(config.vocab_file, "--vocab_file")
        full_tokenizer.validate_case_matches_checkpoint(config.do_lower_case,
                                                        config.init_checkpoint)
        self.resolve_labels()
        if config.model_type == "tagger":
            checks.check_positive(doc_stride=config.doc_stride)
        if config.model_type != "encoder" and (
                config.pooling is not None or config.l2_normalize):
            raise UserError("--pooling and --l2_normalize set the embed_text "
                            "signature of --model_type=encoder; this export "
                            f"is --model_type={config.model_type}.")
        if config.format is not None or config.serving_version is not None:
            check_formats(config.format, config.serving_version)
        checks.check_output_dir_writable(config.export_dir, "--export_dir")

    def resolve_labels(self):
        """Sets `label_list` and `num_labels` of a classifier or tagger."""
        if self.config.model_type == "classifier":
            self.label_list, self.num_labels = self.classifier_labels()
        elif self.config.model_type == "tagger":
            self.label_list = self.tagger_labels()

    def serving_arguments(self):
        """The keyword arguments of `bert_tf1.serving.build_serving_module` for this
        config, labels resolved (after `prepare()`)."""
        values = {field.name: getattr(self.config, field.name)
                  for field in dataclasses.fields(ServedModelConfig)
                  if field.name not in ("task_name", "label_list_file")}
        return dict(values, label_list=self.label_list,
                    num_labels=self.num_labels)

    def run(self):
        """Writes the SavedModel; returns its directory.

        Raises:
            UserError: the config does not fit the checkpoint, and the
                errors of `bert_tf1.serving.export_saved_model`.
        """
        self.prepare()
        config = self.config
        try:
            pooling = {} if config.model_type != "encoder" else dict(
                pooling=config.pooling or "mean",
                l2_normalize=config.l2_normalize)
            if config.format:
                labels = self.label_list or (
                    [str(i) for i in range(self.num_labels)]
                    if (self.num_labels or 0) > 1 else None)
                write_formats(config.export_dir, config.format,
                              dict(self.serving_arguments(), **pooling),
                              labels, config.quantize, config.serving_version)
                return config.export_dir
            return export_saved_model(config.export_dir,
                                      quantize=config.quantize,
                                      **pooling, **self.serving_arguments())
        except checkpoints.CheckpointMismatchError as error:
            raise UserError(
                f"{config.bert_config_file} does not fit "
                f"{config.init_checkpoint}: "
                f"{checks.shorten_mismatch(str(error))}") from None


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
