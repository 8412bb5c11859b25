"""Reading run_multiple_choice.py's test_results.tsv back (see
bert_tf1.data.io.results.format_test_results for its format)."""
import os

import numpy as np

from bert_tf1.data.io.text_files import read_user_text
from bert_tf1.data.multiple_choice.examples import (MissingDataFileError,
                                                    MultipleChoiceDataError)


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
    text = read_user_text(path, "test_results.tsv", MultipleChoiceDataError,
                          "%s: file not found" % path, MissingDataFileError)
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
