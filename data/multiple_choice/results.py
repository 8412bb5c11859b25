"""`test_results.tsv` of multiple choice: one line per example, its
num_choices probabilities tab-separated as `str(np.float32(p))` (the
original run_classifier.py's format), no header, written atomically.
"""
import os

import numpy as np

from bert_tf1.data.io.results import write_text_atomically


def format_test_results(probabilities):
    """The text of test_results.tsv.

    `probabilities`: float [num_examples, num_choices], in input order.

    Raises:
      ValueError: not 2-D.

    Source: run_classifier.py `main`, the `do_predict` writer
    (`"\\t".join(str(class_probability) ...)` of float32 values).
    """
    rows = np.asarray(probabilities, dtype=np.float32)
    if rows.ndim != 2 or rows.shape[1] < 1:
        raise ValueError("expected probabilities of shape [num_examples, "
                         "num_choices], got %s" % (rows.shape,))
    return "".join("\t".join(str(np.float32(p)) for p in row) + "\n"
                   for row in rows)


def write_test_results(path, probabilities):
    """Writes test_results.tsv atomically; returns the number of lines."""
    text = format_test_results(probabilities)
    write_text_atomically(os.fspath(path), text)
    return text.count("\n")
