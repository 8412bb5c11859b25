"""Predicting from raw text with an export or a checkpoint: JSON lines out.

Every line (`parse_rows`) is checked before anything is predicted; the
model is an export or built in memory from a checkpoint.
"""
import dataclasses
import functools
import json
import os
import sys
import time

from bert_tf1.data.glue.processors import glue_header_of
from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.data.io.stderr_noise import tensorflow_noise_filtered
from bert_tf1.data.io.text_files import read_utf8_text
from bert_tf1.modeling.pooling import read_pooling_record
from bert_tf1.serving import load_served_model
from bert_tf1.serving.formats.info import MODEL_TYPES, open_export_folder
from bert_tf1.serving.predictions import open_export, predictor_of_model
from bert_tf1.tasks import batch_inference, checks
from bert_tf1.tasks.errors import UserError
from bert_tf1.tasks.served_model import (ServedModel, ServedModelConfig,
                                         model_folder_of)

# The names of the fields of a line, per model type.
_FIELDS = {"squad": ("question", "context"), "tagger": ("text",)}
# The fields a line may have: (fewest, most, as the message says it).
_ARITY = {"classifier": (1, 2, "1 or 2 (text, or text_a<TAB>text_b)"),
          "encoder": (1, 2, "1 or 2 (text, or text_a<TAB>text_b)"),
          "squad": (2, 2, "2 (question<TAB>context)"),
          "multiple_choice": (2, float("inf"),
                              "at least 2 (context<TAB>ending_1<TAB>...)")}


@dataclasses.dataclass(kw_only=True)
class PredictTextConfig(ServedModelConfig):
    """The flags of predict_text.py: `export_dir`, or the
    `ServedModelConfig` fields (model_type None: read from the export, or
    an encoder for a model folder with a pooling record; an encoder is
    pooled as that record says);
    `text` (list of str), else `input_file`, else standard input;
    `output_file` (else standard output); `batch_size` per model call."""
    model_type: str = None
    export_dir: str = None
    text: list = None
    input_file: str = None
    output_file: str = None
    batch_size: int = 32
    batch: object = None    # bert_tf1.tasks.batch_inference.BatchOptions (--runner)


def _lines(config, stdin):
    """([(line number, str)] of the input, where it came from)."""
    if config.text:
        return list(enumerate(config.text, start=1)), "--text"
    if config.input_file:
        checks.check_data_file(config.input_file, "--input_file")
        text, where = read_utf8_text(config.input_file), config.input_file
    else:
        where = "<stdin>"
        text = read_utf8_text(where, data=stdin.buffer.read())
    lines = text.split("\n")
    return [(number, line.rstrip("\r")) for number, line in
            enumerate(lines, start=1)], where


def parse_rows(numbered_lines, model_type, where):
    """(line number, tuple of fields) of each non-blank line: classifier
    or encoder `text` or `text_a<TAB>text_b`; squad `question<TAB>context`; tagger the
    whole line; multiple_choice `context<TAB>ending_1<TAB>...`.

    Raises:
        UserError: a line with the wrong number of fields, or another
            number than the first row's (a classifier or encoder), or a
            first line that is a GLUE file's header, naming `where` and
            the line; no line at all.
    """
    rows = []
    for number, line in numbered_lines:
        if not line.strip():
            continue
        task = glue_header_of(line) if number == 1 else None
        if task:
            raise UserError(
                f"{where}, line 1: the header of a GLUE {task} file, not "
                "text: predict_text.py reads one input per line (its labels "
                "would be read as text); give the text columns alone, or "
                f"run_classifier.py --task_name={task} --do_predict")
        if model_type == "tagger":
            rows.append((number, (line,)))
            continue
        fields = tuple(line.split("\t"))
        low, high, expected = _ARITY[model_type]
        if not low <= len(fields) <= high:
            raise UserError(f"{where}, line {number}: {len(fields)} "
                            f"TAB-separated field(s); a {model_type} takes "
                            f"{expected}.")
        rows.append((number, fields))
    if not rows:
        raise UserError(f"{where}: no examples (every line is blank).")
    return rows


def _named(model_type, fields):
    """The input fields as they are echoed in a result."""
    if model_type in ("classifier", "encoder"):
        return ({"text": fields[0]} if len(fields) == 1
                else {"text_a": fields[0], "text_b": fields[1]})
    if model_type == "multiple_choice":
        return {"context": fields[0], "endings": list(fields[1:])}
    return dict(zip(_FIELDS[model_type], fields))


class PredictTextTask:
    """Checks everything (`prepare`), then predicts every row (`run`).

    Raises (from `prepare()`):
        UserError: not one of export_dir and init_checkpoint, a bad
            model_type, missing files or labels, a bad input line.
    """

    def __init__(self, config, stdin=None):
        self.config = config
        self.stdin = stdin or sys.stdin
        self.rows = None
        self.model_type = None

    def prepare(self):
        """Every check, and the input read, before any model is loaded."""
        config = self.config
        checks.check_positive(batch_size=config.batch_size)
        if bool(config.export_dir) == bool(config.init_checkpoint):
            raise UserError("Give --export_dir (an export of "
                            "export_saved_model.py) or --init_checkpoint "
                            "(with --model_type), exactly one.")
        if config.model_type is not None and config.model_type not in (
                MODEL_TYPES):
            raise UserError(f"--model_type={config.model_type}: expected one "
                            f"of {', '.join(MODEL_TYPES)}.")
        if config.init_checkpoint and config.model_type is None and (
                read_pooling_record(model_folder_of(
                    config.init_checkpoint)) is None):
            raise UserError("--init_checkpoint needs --model_type ("
                            f"{', '.join(MODEL_TYPES)}).")
        if config.text and config.input_file:
            raise UserError("Give --text or --input_file, not both.")
        if config.output_file:
            checks.check_output_dir_writable(
                os.path.dirname(os.path.abspath(config.output_file)),
                "--output_file")
        numbered, where = _lines(config, self.stdin)
        if config.export_dir:   # any format of export_saved_model.py
            self.predictor = open_export(config.export_dir, config.model_type)
            self.model_type = self.predictor.model_type
        else:
            self.served = ServedModel(config)  # its ServedModelConfig fields
            self.served.resolve()
            self.model_type, self.predictor = config.model_type, None
        self.rows = parse_rows(numbered, self.model_type, where)

    def results(self):
        """The result dicts, in input order (`prepare()` first)."""
        if self.predictor is None:  # a checkpoint: built in memory, kept
            arguments = self.served.serving_arguments()
            model, preprocessor = load_served_model(**arguments)
            self.predictor = predictor_of_model(
                model, preprocessor, self.model_type, arguments["label_list"],
                **{key: arguments[key] for key in (
                    "max_query_length", "max_answer_length", "n_best_size",
                    "doc_stride", "pooling", "l2_normalize")
                   if key in arguments})
        start = time.perf_counter()
        with tensorflow_noise_filtered():  # TF's oneDNN "E" line, not ours
            outputs = self.predictor.predict(
                [fields for _, fields in self.rows],
                batch_size=self.config.batch_size)
        seconds = time.perf_counter() - start
        # stderr: stdout holds the JSON lines alone.
        sys.stderr.write(f"predict_text: {len(outputs)} examples in "
                         f"{seconds:.2f} s, {len(outputs) / seconds:.1f} "
                         "examples/s\n")
        return [dict({"line": number}, **_named(self.model_type, fields),
                     **output)
                for (number, fields), output in zip(self.rows, outputs)]

    def run(self, stdout=None):
        """Checks, predicts, writes the JSON lines; returns the results
        (with a Beam runner: `run_on_beam`, the number of examples)."""
        if self.config.batch is not None:
            batch_inference.check_options(self.config.batch,
                                          self.config.output_file)
            if self.config.batch.on_beam:
                return self.run_on_beam()
        self.prepare()
        results = self.results()
        text = "".join(json.dumps(result, ensure_ascii=False) + "\n"
                       for result in results)
        if self.config.output_file:
            write_text_atomically(self.config.output_file, text)
        else:
            stream = stdout or sys.stdout
            if hasattr(stream, "buffer"):   # UTF-8 whatever the locale says
                stream.flush()
                stream.buffer.write(text.encode("utf-8"))
                stream.buffer.flush()
            else:
                stream.write(text)
                stream.flush()
        return results

    def run_on_beam(self):
        """--runner: an export's predictions over --input_file into
        --output_dir shards (bert_tf1.tasks.batch_inference); returns the count.

        Raises:
            UserError: no --export_dir or --input_file, --text given, the
                export serves another model type, or records another
                --do_lower_case / --max_seq_length than the flags give.
        """
        config = self.config
        if not config.export_dir or config.text or not config.input_file:
            raise UserError("--runner needs --export_dir (an export of "
                            "export_saved_model.py) and --input_file, and "
                            "no --text")
        # Imported here: apache_beam only for --runner.
        from bert_tf1.serving.batch_inference import ModelSpec

        folder = open_export_folder(config.export_dir, config.model_type)
        settings = folder.settings
        for flag in ("max_seq_length", "do_lower_case"):
            given, recorded = getattr(config, flag), getattr(settings, flag)
            if given is not None and given != recorded:
                raise UserError(
                    f"--{flag}={str(given).lower()} differs from "
                    f"{folder.folder}'s export_info.json "
                    f"({flag}={str(recorded).lower()}); leave the flag out: "
                    "an export records how it tokenizes.")
        found = settings.model_type
        # A classifier or encoder in the raw-text SavedModel takes ids of any
        # length: its rows are tokenized once, in Python, and batched by
        # length (the other formats take max_seq_length ids: the text path).
        ids_path = (found in ("classifier", "encoder")
                    and folder.format == "saved_model")
        spec = ModelSpec(
            model_type=found, export_dir=folder.folder,
            tokenizer=((folder.vocab_file, settings.do_lower_case)
                       if ids_path else None),
            max_seq_length=settings.max_seq_length, pooling=settings.pooling,
            l2_normalize=settings.l2_normalize)
        return batch_inference.run_batch_inference(
            config.batch, spec, config.input_file,
            functools.partial(parse_line, found),
            functools.partial(format_result, found),
            _ARITY.get(found, (1, 1, "1 (text)")))


def parse_line(model_type, path, number, line):
    """The fields of one input line (None: blank), as `parse_rows`."""
    rows = parse_rows([(number, line)], model_type, path) if line.strip() \
        else []
    return rows[0][1] if rows else None


def format_result(model_type, row, result):
    """One output line under --runner: predict_text's, `file` first."""
    return dict({"file": row.file, "line": row.line},
                **_named(model_type, row.fields), **result)
