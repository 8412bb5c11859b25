"""Exporting a checkpoint: export_saved_model.py's task.

The work is `bert_tf1.serving.export_saved_model` (one raw-text SavedModel,
or with --format one folder per deployment format, docs/deploying.md); here
every check before anything is written, and the int8 drift line.
"""
import dataclasses
import json
import os

from bert_tf1.data.tokenization import full_tokenizer
from bert_tf1.modeling import checkpoints
from bert_tf1.serving import export_saved_model, formats
from bert_tf1.serving.formats.info import INFO_FILE
from bert_tf1.serving.formats.writer import DRIFT_ROWS
from bert_tf1.serving.op_audit import audit_lines
from bert_tf1.tasks import checks
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.served_model import ServedModel, ServedModelConfig


@dataclasses.dataclass(kw_only=True)
class ExportConfig(ServedModelConfig):
    """The flags of export_saved_model.py: the served model (an encoder's
    `pooling` and `l2_normalize` for `embed_text` and the formats'
    `embedding`: `bert_tf1.tasks.served_model.pooling_of`), `export_dir`
    (must not exist), `quantize` (None or "int8"); `format` (None: one
    raw-text SavedModel at export_dir; else a list of
    `bert_tf1.serving.formats.FORMATS`) and `serving_version`."""
    export_dir: str = None
    quantize: str = None
    format: list = None
    serving_version: int = None


class ExportTask(ServedModel):
    """Checks the export's inputs (`prepare`), then writes it (`run`).

    Raises (from `prepare()`):
        UserError: the label errors of `ServedModel`, a case flag that
            contradicts the checkpoint's name, a missing config/vocab, an
            unknown format, a pooling flag for another model type than an
            encoder or one that differs from the model folder's record.
    """

    def prepare(self):
        """Every check that needs no model, before anything is written."""
        config = self.config
        pooling_flags = config.pooling is not None or config.l2_normalize
        self.resolve()
        full_tokenizer.validate_case_matches_checkpoint(config.do_lower_case,
                                                        config.init_checkpoint)
        if config.model_type == "tagger":
            checks.check_positive(doc_stride=config.doc_stride)
        if config.model_type != "encoder" and pooling_flags:
            raise UserError("--pooling and --l2_normalize set the embed_text "
                            "signature of --model_type=encoder; this export "
                            f"is --model_type={config.model_type}.")
        if config.format is not None or config.serving_version is not None:
            formats.check_formats(config.format, config.serving_version)
        checks.check_output_dir_writable(config.export_dir, "--export_dir")

    def run(self):
        """Writes the export; returns its directory.

        Raises:
            UserError: the config does not fit the checkpoint, and the
                errors of `bert_tf1.serving.export_saved_model`.
        """
        self.prepare()
        config = self.config
        try:
            export_saved_model(config.export_dir, formats=config.format,
                               quantize=config.quantize,
                               serving_version=config.serving_version,
                               **self.serving_arguments())
        except checkpoints.CheckpointMismatchError as error:
            raise UserError(
                f"{config.bert_config_file} does not fit "
                f"{config.init_checkpoint}: "
                f"{checks.shorten_mismatch(str(error))}") from None
        if config.format:
            if config.quantize:
                print(int8_line(config.export_dir, config.format))
            layout = ("" if config.serving_version is None
                      else f"/{config.serving_version}")
            for name in ("saved_model", "numeric"):
                if name in config.format:
                    print("\n".join(audit_lines(
                        f"{config.export_dir}/{name}{layout}")))
        return config.export_dir


def int8_line(export_dir, names):
    """One line: how far each int8 format moved from float32 (the
    `int8_drift` each export_info.json records)."""
    parts = []
    for name in names:
        with open(os.path.join(export_dir, name, INFO_FILE),
                  encoding="utf-8") as reader:
            drift = json.load(reader).get("int8_drift")
        if drift:
            agree = (f", argmax kept on {drift['same_argmax']:.0%}"
                     if "same_argmax" in drift else "")
            parts.append(f"{name} {drift['max_abs_change']:.3g}{agree}")
    rows = f"{DRIFT_ROWS} random inputs"
    return (f"int8 vs float32, largest change of the outputs on {rows}: "
            + "; ".join(parts) + " (accuracy on real data: "
            "docs/deploying.md, \"int8\").")
