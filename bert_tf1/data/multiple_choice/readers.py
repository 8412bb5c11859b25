"""Reading multiple-choice files: SWAG CSV, HellaSwag JSONL and a plain TSV.

`read_examples(path, data_format, num_choices=None)` returns the file's
`MultipleChoiceExample`s in order (layouts: docs/multiple_choice.md). The
number of choices comes from the file unless given. Files are UTF-8 (a BOM is
dropped), blank lines skipped; a file labels every row or none; every error
is a `MultipleChoiceDataError` naming the file and 1-based line.
"""
import csv
import io
import json
import os
import re

from bert_tf1.data.io.text_files import read_user_text
from bert_tf1.data.multiple_choice.examples import (
             MissingDataFileError, MultipleChoiceDataError, MultipleChoiceExample,
             check_labels_consistent, check_num_choices, join_prefix_and_ending,
             parse_label)

#: The `--data_format` values.
DATA_FORMATS = ("swag", "hellaswag", "tsv")

#: Column names of the `tsv` layout (see `read_choice_tsv`).
TSV_ID_COLUMN = "id"
TSV_CONTEXT_COLUMN = "context"
TSV_LABEL_COLUMN = "label"

_ENDING_COLUMN = re.compile(r"^ending(\d+)$")


def tsv_ending_column(k):
    """The header name of ending k (0-based) in the `tsv` and SWAG layouts."""
    return "ending%d" % k


def _read_text(path, expected):
    """The file's text (UTF-8, BOM dropped); user errors for bad files."""
    path = os.fspath(path)
    return read_user_text(
        path, expected, MultipleChoiceDataError,
        "%s: file not found (expected %s)" % (path, expected),
        MissingDataFileError)


def _finish(examples, line_numbers, path, expected):
    if not examples:
        raise MultipleChoiceDataError(
            "%s: no examples (the file is empty or holds only its header); "
            "expected %s" % (path, expected))
    check_labels_consistent(examples, line_numbers, path)
    return examples


def _ending_columns(header, path, num_choices):
    """list of the columns of ending0..ending{N-1} (no gap, N >= 2)."""
    found = {}
    for column, name in enumerate(header):
        match = _ENDING_COLUMN.match(name.strip())
        if match:
            found[int(match.group(1))] = column
    count = len(found)
    if sorted(found) != list(range(count)):
        raise MultipleChoiceDataError(
            "%s, line 1: ending columns %s; expected ending0..ending{N-1} "
            "with no gap" % (path, ", ".join(
                "ending%d" % k for k in sorted(found))))
    if count < 2:
        raise MultipleChoiceDataError(
            "%s, line 1: the header names %d ending column(s); expected at "
            "least ending0 and ending1" % (path, count))
    if num_choices is not None:
        check_num_choices(count, num_choices, "%s, line 1" % path,
                          "ending columns in the header")
    return [found[k] for k in range(count)]


def _header_index(header, path, layout, required):
    """dict column name -> index; a duplicate or a missing `required`
    column is an error."""
    index = {}
    for column, name in enumerate(header):
        name = name.strip()
        if name in index:
            raise MultipleChoiceDataError(
                "%s, line 1: column %r appears twice in the header (%s)" % (
                    path, name, layout))
        index[name] = column
    missing = [name for name in required if name not in index]
    if missing:
        raise MultipleChoiceDataError(
            "%s, line 1: the header has no column %s; expected %s" % (
                path, ", ".join(repr(n) for n in missing), layout))
    return index


def _check_field_count(row, header, where):
    if len(row) != len(header):
        raise MultipleChoiceDataError(
            "%s: found %d fields, expected %d as in the header" % (
                where, len(row), len(header)))


def _table_examples(rows, header, path, layout, num_choices, id_column,
                    label_column, context_column, prefix_column=None):
    """The examples of the (line, fields) rows of a SWAG CSV or a TSV: the
    header's ending columns, each prefixed by the prefix column's text."""
    endings = _ending_columns(header, path, num_choices)
    examples, lines = [], []
    for line, row in rows:
        where = "%s, line %d" % (path, line)
        _check_field_count(row, header, where)
        prefix = "" if prefix_column is None else row[prefix_column]
        label = (None if label_column is None else
                 parse_label(row[label_column], len(endings), where))
        examples.append(MultipleChoiceExample(
            example_id=(row[id_column] if id_column is not None
                        else str(len(examples))),
            context=row[context_column],
            endings=[join_prefix_and_ending(prefix, row[c]) for c in endings],
            label=label))
        lines.append(line)
    return _finish(examples, lines, path, layout)


_SWAG_LAYOUT = ("SWAG CSV with a header naming sent1, sent2, ending0.. and "
                "(train/val) label")


def _csv_rows(text, path):
    """Yields (first line of the row, fields) of an RFC-4180 CSV text."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    previous_end = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise MultipleChoiceDataError("%s, line %d: not valid CSV (%s)" % (
                path, reader.line_num, error)) from None
        start, previous_end = previous_end + 1, reader.line_num
        if row:  # Blank lines come back as [].
            yield start, row


def read_swag_csv(path, num_choices=None):
    """Reads a released SWAG CSV file (rowanz/swagaf `bert_tf1/data/{train,val,
    test}.csv`; an unnamed first column is the `example_id`).

    Returns:
      list of MultipleChoiceExample, in file order.

    Raises:
      MultipleChoiceDataError: also for a row with another field count or
        invalid CSV quoting.
    """
    path = os.fspath(path)
    rows = _csv_rows(_read_text(path, "a SWAG CSV file"), path)
    first = next(rows, None)
    if first is None:
        return _finish([], [], path, _SWAG_LAYOUT)
    _, header = first
    index = _header_index(header, path, _SWAG_LAYOUT, ("sent1", "sent2"))
    return _table_examples(
        rows, header, path, _SWAG_LAYOUT, num_choices,
        id_column=0 if header[0].strip() == "" else None,
        label_column=index.get("label"), context_column=index["sent1"],
        prefix_column=index["sent2"])


_HELLASWAG_LAYOUT = ("HellaSwag JSON Lines: one object per line with ctx_a, "
                     "ctx_b, endings (a list) and (train/val) label")


def _json_str(item, key, where, required=True):
    if key not in item:
        if required:
            raise MultipleChoiceDataError(
                "%s: no %r field; expected %s" % (where, key,
                                                  _HELLASWAG_LAYOUT))
        return ""
    value = item[key]
    if not isinstance(value, str):
        raise MultipleChoiceDataError(
            "%s: field %r is %s, expected a string" % (
                where, key, type(value).__name__))
    return value


def read_hellaswag_jsonl(path, num_choices=None):
    """Reads a HellaSwag JSON Lines file (rowanz/hellaswag `bert_tf1/data/*.jsonl`;
    `ind` is the `example_id`; `ctx_b` may be absent).

    Returns:
      list of MultipleChoiceExample, in file order.

    Raises:
      MultipleChoiceDataError: also for a line that is not a JSON object, or
        a missing or mistyped field.
    """
    path = os.fspath(path)
    text = _read_text(path, "a HellaSwag JSON Lines file")
    examples, lines = [], []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = "%s, line %d" % (path, line)
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as error:
            raise MultipleChoiceDataError(
                "%s: not valid JSON (column %d: %s); expected one JSON object "
                "per line" % (where, error.colno, error.msg)) from None
        if not isinstance(item, dict):
            raise MultipleChoiceDataError(
                "%s: found a JSON %s, expected an object (%s)" % (
                    where, type(item).__name__, _HELLASWAG_LAYOUT))
        context = _json_str(item, "ctx_a", where)
        prefix = _json_str(item, "ctx_b", where, required=False)
        endings = item.get("endings")
        if not (isinstance(endings, list)
                and all(isinstance(e, str) for e in endings)):
            raise MultipleChoiceDataError(
                "%s: field 'endings' is %s, expected a list of strings" % (
                    where, "missing" if "endings" not in item
                    else repr(endings)[:60]))
        if num_choices is None:
            num_choices = len(endings)
            if num_choices < 2:
                raise MultipleChoiceDataError(
                    "%s: found %d endings, expected at least 2" % (
                        where, num_choices))
        check_num_choices(len(endings), num_choices, where)
        example_id = item.get("ind", len(examples))
        examples.append(MultipleChoiceExample(
            example_id=str(example_id), context=context,
            endings=[join_prefix_and_ending(prefix, e) for e in endings],
            label=parse_label(item.get("label"), num_choices, where)))
        lines.append(line)
    return _finish(examples, lines, path, _HELLASWAG_LAYOUT)


_TSV_LAYOUT = ("a TSV with a header line naming the columns context, "
               "ending0 .. ending{N-1} and optionally id and label")


def read_choice_tsv(path, num_choices=None):
    """Reads the plain TSV layout: a header `id context ending0 ..
    ending{N-1} label` in any order (`id`, `label` optional), tabs, no
    quoting.

    Returns:
      list of MultipleChoiceExample, in file order.

    Raises:
      MultipleChoiceDataError: also for a missing, unknown or duplicated
        column, or a row with another number of fields.
    """
    path = os.fspath(path)
    text = _read_text(path, "a multiple-choice TSV file")
    lines = [(n, raw) for n, raw in enumerate(text.split("\n"), start=1)
             if raw.rstrip("\r").strip()]
    if not lines:
        return _finish([], [], path, _TSV_LAYOUT)
    header = lines[0][1].rstrip("\r").split("\t")
    index = _header_index(header, path, _TSV_LAYOUT, (TSV_CONTEXT_COLUMN,))
    known = (TSV_ID_COLUMN, TSV_CONTEXT_COLUMN, TSV_LABEL_COLUMN)
    unknown = [name for name in index
               if name not in known and not _ENDING_COLUMN.match(name)]
    if unknown:
        raise MultipleChoiceDataError(
            "%s, line 1: unknown column %s; expected %s" % (
                path, ", ".join(repr(n) for n in unknown), _TSV_LAYOUT))
    rows = ((line, raw.rstrip("\r").split("\t")) for line, raw in lines[1:])
    return _table_examples(
        rows, header, path, _TSV_LAYOUT, num_choices,
        id_column=index.get(TSV_ID_COLUMN),
        label_column=index.get(TSV_LABEL_COLUMN),
        context_column=index[TSV_CONTEXT_COLUMN])


_READERS = {"swag": read_swag_csv, "hellaswag": read_hellaswag_jsonl,
            "tsv": read_choice_tsv}


def read_examples(path, data_format, num_choices=None):
    """Reads a multiple-choice file of the given `--data_format`.

    Args:
      path: str or os.PathLike (local or gs://).
      data_format: one of DATA_FORMATS, case-insensitive.
      num_choices: int >= 2, or None to take it from the file.

    Returns:
      list of MultipleChoiceExample, in file order, all with N endings.

    Raises:
      MultipleChoiceDataError: an unknown format, num_choices < 2, or a bad
        file.
    """
    reader = _READERS.get(str(data_format).lower())
    if reader is None:
        raise MultipleChoiceDataError(
            "--data_format=%s: expected one of %s" % (
                data_format, ", ".join(DATA_FORMATS)))
    if num_choices is not None and (isinstance(num_choices, bool)
                                    or int(num_choices) < 2):
        raise MultipleChoiceDataError(
            "--num_choices=%s: expected an integer >= 2" % (num_choices,))
    return reader(path, None if num_choices is None else int(num_choices))
