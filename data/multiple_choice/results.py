"""`test_results.tsv` of multiple choice: one line per example, its
num_choices probabilities tab-separated as `str(np.float32(p))` (the
original run_classifier.py's format), no header, written atomically.
"""
import os

import numpy as np

from data.io.results import write_text_atomically
from data.io.text_files import TextFileError, read_utf8_text
from data.multiple_choice.examples import (MissingDataFileError,
                                           MultipleChoiceDataError)

__all__ = ["format_test_results", "write_test_results", "read_test_results"]


def _as_matrix(probabilities):
    rows = np.asarray(probabilities, dtype=np.float32)
    if rows.ndim != 2 or rows.shape[1] < 1:
        raise ValueError("expected probabilities of shape [num_examples, "
                         "num_choices], got %s" % (rows.shape,))
    return rows


def format_test_results(probabilities):
    """The text of test_results.tsv.

    `probabilities`: float [num_examples, num_choices], in input order.

    Raises:
      ValueError: not 2-D.

    Source: run_classifier.py `main`, the `do_predict` writer
    (`"\\t".join(str(class_probability) ...)` of float32 values).
    """
    rows = _as_matrix(probabilities)
    return "".join("\t".join(str(np.float32(p)) for p in row) + "\n"
                   for row in rows)


def write_test_results(path, probabilities):
    """Writes test_results.tsv atomically; returns the number of lines."""
    text = format_test_results(probabilities)
    write_text_atomically(os.fspath(path), text)
    return len(_as_matrix(probabilities))


def read_test_results(path, num_choices=None):
    """Reads a test_results.tsv back.

    `num_choices` defaults to the first line's count.

    Returns:
      float32 array [num_examples, num_choices] ([0, num_choices or 0] for
      an empty file).

    Raises:
      MultipleChoiceDataError: a missing or non-UTF-8 file, a value that is
        not a number, or a line with another number of values (names the
        file and line).
    """
    path = os.fspath(path)
    try:
        text = read_utf8_text(path, "test_results.tsv")
    except FileNotFoundError:
        raise MissingDataFileError("%s: file not found" % path) from None
    except TextFileError as error:
        raise MultipleChoiceDataError(str(error)) from None
    rows = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        cells = raw.split("\t")
        if num_choices is None:
            num_choices = len(cells)
        if len(cells) != num_choices:
            raise MultipleChoiceDataError(
                "%s, line %d: found %d tab-separated values, expected %d "
                "(num_choices)" % (path, line, len(cells), num_choices))
        try:
            rows.append([np.float32(cell) for cell in cells])
        except ValueError:
            raise MultipleChoiceDataError(
                "%s, line %d: %r is not a number list" % (path, line, raw[:80])
            ) from None
    return np.asarray(rows, dtype=np.float32).reshape(-1, num_choices or 0)
