"""`test_results.tsv` of multiple choice: one line per example, its
num_choices probabilities tab-separated as `str(np.float32(p))` (the
original run_classifier.py's format), no header, written atomically.
"""
import os

from bert_tf1.data.io.results import (format_test_results,
                                      write_text_atomically)


def write_test_results(path, probabilities):
    """Writes test_results.tsv atomically; returns the number of lines."""
    text = format_test_results(probabilities)
    write_text_atomically(os.fspath(path), text)
    return text.count("\n")
