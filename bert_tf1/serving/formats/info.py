"""`export_info.json`: what an export folder holds, written beside the model
and checked when the folder is opened.

Every folder of an export (the raw-text SavedModel, and each `--format`
folder) holds the model's files, `vocab.txt` (a SavedModel: `assets/`),
`tokenizer_config.json` (the lower-casing record) and `export_info.json`:
the format, precision and tool; the model type, labels, `max_seq_length` and
the SQuAD/tagger/encoder settings (`ServedSettings`); each signature's
inputs and outputs; the sha256 of every file of the folder. Opening a folder
(`open_export_folder`) checks all of it before any input is read.
"""
import dataclasses
import hashlib
import json
import os

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.text_files import read_json
from bert_tf1.data.tokenization.lower_case_record import (read_lower_case,
                                                          write_lower_case)

#: The formats of export_saved_model.py --format, one folder each.
FORMATS = ("saved_model", "numeric", "openvino", "litert", "onnx")
INFO_FILE = "export_info.json"
MODEL_TYPES = ("classifier", "squad", "encoder", "tagger", "multiple_choice")
#: The files (besides the versions' `N/` folders) the hashes do not cover.
_UNHASHED = (INFO_FILE,)


@dataclasses.dataclass(kw_only=True)
class ServedSettings:
    """How a served model reads text: `model_type` (one of `MODEL_TYPES`),
    `max_seq_length`, `do_lower_case`, `labels` (a classifier's or tagger's
    names in id order; None: an encoder, a regression or unnamed labels);
    run_squad.py's `max_query_length`, `max_answer_length`, `n_best_size`,
    `doc_stride` (also run_ner.py's), `version_2_with_negative`,
    `null_score_diff_threshold`; a tagger's `tag_scheme` (None: IOB2 for
    prefixed labels); an encoder's `pooling` and `l2_normalize`."""
    model_type: str
    max_seq_length: int
    do_lower_case: bool
    labels: list = None
    max_query_length: int = 64
    max_answer_length: int = 30
    n_best_size: int = 20
    doc_stride: int = 128
    version_2_with_negative: bool = False
    null_score_diff_threshold: float = 0.0
    tag_scheme: str = None
    pooling: str = "mean"
    l2_normalize: bool = False

    def recorded(self):
        """The fields export_info.json holds (all but the labels)."""
        values = dataclasses.asdict(self)
        values.pop("labels")
        return values


@dataclasses.dataclass
class ExportFolder:
    """An opened export folder: `folder` (where export_info.json is),
    `model_dir` (the model's own folder: `folder`, or its newest TF
    Serving version `N/`), `format`, `info` (the parsed JSON), `settings`
    (`ServedSettings`) and `vocab_file`."""
    folder: str
    model_dir: str
    format: str
    info: dict
    settings: ServedSettings
    vocab_file: str


def sha256_of(path):
    """The hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as reader:
        for block in iter(lambda: reader.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_hashes(folder):
    """{path relative to `folder`: sha256} of every file under it but
    export_info.json."""
    hashes = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, folder).replace(os.sep, "/")
            if relative not in _UNHASHED:
                hashes[relative] = sha256_of(path)
    return dict(sorted(hashes.items()))


def write_info(folder, info, vocab_file, do_lower_case, copy_vocab=True):
    """Writes `vocab.txt` (unless `copy_vocab` is False: a SavedModel holds
    it in assets/), `tokenizer_config.json` and `export_info.json` (`info`
    plus the hashes of every file then in `folder`) into `folder`."""
    import shutil

    os.makedirs(folder, exist_ok=True)
    if copy_vocab:
        shutil.copyfile(vocab_file, os.path.join(folder, "vocab.txt"))
    write_lower_case(folder, do_lower_case)
    info = dict(info, files=file_hashes(folder))
    with open(os.path.join(folder, INFO_FILE), "w", encoding="utf-8") as f:
        json.dump(info, f, indent=2, sort_keys=True)
        f.write("\n")


def _model_dir(folder):
    """`folder`, or its newest TF Serving version folder (`N/`)."""
    versions = [name for name in os.listdir(folder) if name.isdigit()
                and os.path.isfile(os.path.join(folder, name,
                                                "saved_model.pb"))]
    if os.path.isfile(os.path.join(folder, "saved_model.pb")) or not versions:
        return folder
    return os.path.join(folder, max(versions, key=int))


def _not_an_export(export_dir):
    inside = sorted(name for name in FORMATS if os.path.isfile(
        os.path.join(export_dir, name, INFO_FILE)))
    hint = (f"; it holds the format folders {', '.join(inside)}: give one "
            "of them" if inside else "")
    return UserError(f"{export_dir} is not an export of export_saved_model.py "
                     f"(no {INFO_FILE} there){hint}.")


def _settings(info, path):
    """ServedSettings of a parsed export_info.json (named `path`).

    Raises:
        UserError: a field missing or of the wrong kind.
    """
    fields = {field.name: field for field in dataclasses.fields(ServedSettings)}
    values = {key: info[key] for key in fields if key in info}
    problems = [key for key in ("model_type", "max_seq_length",
                                "do_lower_case") if key not in values]
    if values.get("model_type") not in MODEL_TYPES:
        problems.append("model_type (one of " + ", ".join(MODEL_TYPES) + ")")
    for key in ("max_seq_length", "max_query_length", "max_answer_length",
                "n_best_size", "doc_stride"):
        value = values.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            problems.append(f"{key} (a positive integer)")
    labels = values.get("labels")
    if values.get("model_type") == "tagger" and labels is None:
        problems.append("labels (a tagger's tags)")
    if labels is not None and (not isinstance(labels, list) or not all(
            isinstance(label, str) for label in labels)):
        problems.append("labels (a list of strings)")
    if problems:
        raise UserError(f"{path}: {', '.join(dict.fromkeys(problems))} "
                        "missing or not valid; this file does not describe "
                        "an export of export_saved_model.py (re-export it).")
    return ServedSettings(**values)


def _check_files(folder, info, path):
    """The folder's files are the ones export_info.json hashed, unchanged.

    Raises:
        UserError: a file missing, changed or cut short (names it).
    """
    recorded = info.get("files")
    if not isinstance(recorded, dict):
        raise UserError(f"{path} has no `files` record (an export of an "
                        "earlier version): re-export it with "
                        "export_saved_model.py.")
    for relative, digest in recorded.items():
        file = os.path.join(folder, relative)
        if not os.path.isfile(file):
            raise UserError(f"{file} is missing: the export in {folder} is "
                            "incomplete; export it again.")
        if sha256_of(file) != digest:
            raise UserError(f"{file} differs from the file the export wrote "
                            f"(sha256 in {path}): it was changed or cut "
                            "short; export it again.")


def open_export_folder(export_dir, model_type=None):
    """Checks and describes one export folder (module docstring).

    Raises:
        UserError: no export there, another model type than `model_type`,
            an export_info.json that is not valid, a file missing or
            changed since the export wrote it.
    """
    export_dir = os.fspath(export_dir).rstrip("/") or "/"
    path = os.path.join(export_dir, INFO_FILE)
    if not os.path.isdir(export_dir):
        raise UserError(f"{export_dir} is not a folder (expected the "
                        "--export_dir of export_saved_model.py, or one of "
                        "its format folders).")
    if not os.path.isfile(path):
        raise _not_an_export(export_dir)
    info = read_json(path, expected=f"the {INFO_FILE} of an export")
    if not isinstance(info, dict) or info.get("format") not in FORMATS:
        raise UserError(f"{path}: expected the export_info.json of "
                        f"export_saved_model.py, its format one of "
                        f"{', '.join(FORMATS)}.")
    settings = _settings(info, path)
    if model_type and model_type != settings.model_type:
        raise UserError(f"{export_dir} serves a {settings.model_type} model, "
                        f"not --model_type={model_type}.")
    from bert_tf1.serving import formats   # its package imports this module

    formats.require(info["format"], where=f"{export_dir} (format "
                                          f"{info['format']})")
    _check_files(export_dir, info, path)
    model_dir = _model_dir(export_dir)
    vocab = next((candidate for candidate in (
        os.path.join(export_dir, "vocab.txt"),
        os.path.join(model_dir, "assets", "vocab.txt"))
        if os.path.isfile(candidate)), None)
    if vocab is None:
        raise UserError(f"{export_dir}: no vocab.txt (nor assets/vocab.txt); "
                        "the export is incomplete; export it again.")
    recorded_case = read_lower_case(export_dir)
    if recorded_case is not None:
        settings.do_lower_case = recorded_case
    return ExportFolder(export_dir, model_dir, info["format"], info, settings,
                        vocab)
