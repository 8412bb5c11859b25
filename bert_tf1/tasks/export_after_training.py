"""The road out of a fine-tuning run (--export_dir, --export_format): the
model the run holds at its end, whatever `create_model` built, is written
by the one export road (`bert_tf1.serving.export_model`) with the script's
model type, labels, vocab, casing, max_seq_length and window settings
(docs/custom_models.md, "Exporting your model"). The serving road's own
way in, export_saved_model.py, rebuilds only the stock models from a
checkpoint; a model of your own is exported by the run that built it.
"""
import os

from absl import logging

from bert_tf1.data.tokenization import BertPreprocessor
from bert_tf1.serving import export_model, formats
from bert_tf1.tasks import checks
from bert_tf1.tasks.errors import UserError


def check_export_flags(config):
    """The export flags of a fine-tuning config, checked before anything is
    written (no-op without `export_dir` and `export_format`).

    Raises:
        UserError: one line naming the flag: --export_format without
            --export_dir; an --export_dir that exists (an export is never
            overwritten), is the --output_dir, or sits under a file or an
            unwritable folder; an unknown or repeated format, or one whose
            [deploy] library is not installed.
    """
    export_dir = getattr(config, "export_dir", None)
    names = getattr(config, "export_format", None)
    if not export_dir:
        if names:
            raise UserError("--export_format needs --export_dir (the folder "
                            "the formats are written under)")
        return
    if names is not None:
        formats.check_formats(list(names), flag="--export_format")
    path = os.path.abspath(os.fspath(export_dir))
    if config.output_dir and path == os.path.abspath(
            os.fspath(config.output_dir)):
        raise UserError(f"--export_dir={export_dir} is the --output_dir; "
                        "give the export a folder of its own (e.g. "
                        "<output_dir>/export)")
    if os.path.lexists(path):
        raise UserError(
            f"--export_dir={export_dir} already exists; an export is never "
            "overwritten: choose a new folder (checked before training: "
            "nothing was written)")
    checks.check_output_dir_writable(export_dir, "--export_dir")


def export_trained_model(task):
    """Writes `task.model`, with the weights it holds after the run's modes
    (the last checkpoint, or best/ with --keep_best_checkpoint; restored
    first when the run did not train), to `task.config.export_dir`: one
    raw-text SavedModel, or with `export_format` one folder per format
    (docs/deploying.md). Chief only; returns export_dir (None on another
    worker).

    The model type is the task's (`task.export_model_type`), the other
    arguments of `export_model` its `export_arguments()` (labels, SQuAD
    and tagger window settings); the preprocessor is --vocab_file,
    --do_lower_case and --max_seq_length of the run.

    Raises:
        UserError: the errors of `bert_tf1.serving.export_model` (a model
            that does not fit its type's contract, a converter refusing
            it).
    """
    config = task.config
    task.restore_weights()
    if not task.is_chief:
        return None
    preprocessor = BertPreprocessor(config.vocab_file, config.do_lower_case,
                                    config.max_seq_length)
    logging.info("***** Exporting the model to %s *****", config.export_dir)
    export_model(task.model, config.export_dir,
                 formats=config.export_format, preprocessor=preprocessor,
                 model_type=task.export_model_type,
                 **task.export_arguments())
    logging.info("Wrote the export %s (%s)", config.export_dir,
                 ", ".join(config.export_format or ["raw-text SavedModel"]))
    return config.export_dir
