"""The tagging result files, written atomically: predictions.txt /
eval_predictions.txt (`token<TAB>tag` lines, a blank line after each
sentence) and label_list.txt (line k is label id k).
"""
import os

from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.text_files import read_user_text

#: The label list's file in output_dir (written by training).
LABEL_LIST_FILE = "label_list.txt"


def format_predictions(documents, tags):
    """The text of a predictions file.

    Args:
      documents: list of Document.
      tags: nested list [document][sentence][word] of str.

    Raises:
      ValueError: `tags` is not shaped like `documents`.
    """
    if len(tags) != len(documents):
        raise ValueError("tags for %d documents, %d given" % (
            len(tags), len(documents)))
    lines = []
    for document, document_tags in zip(documents, tags):
        if len(document_tags) != len(document.sentences):
            raise ValueError("document at %s line %d: %d sentences, tags for "
                             "%d" % (document.path, document.line,
                                     len(document.sentences),
                                     len(document_tags)))
        for sentence, sentence_tags in zip(document.sentences, document_tags):
            if len(sentence_tags) != len(sentence):
                raise ValueError("sentence at %s line %d: %d words, %d tags"
                                 % (document.path, sentence.line,
                                    len(sentence), len(sentence_tags)))
            lines.extend("%s\t%s\n" % (word.text, tag)
                         for word, tag in zip(sentence.words, sentence_tags))
            lines.append("\n")
    return "".join(lines)


def write_predictions(path, documents, tags):
    """Writes `format_predictions(documents, tags)` to `path` atomically
    (predictions.txt, eval_predictions.txt)."""
    write_text_atomically(os.fspath(path), format_predictions(documents, tags))


def write_label_list(path, labels):
    """Writes label_list.txt: one label per line, in id order, atomically.

    Raises:
      ValueError: an empty list, duplicates, or a label that is empty or
        holds whitespace (it could not be read back).
    """
    labels = list(labels)
    if not labels or len(set(labels)) != len(labels):
        raise ValueError("label list must be non-empty and without "
                         "duplicates: %r" % (labels,))
    for label in labels:
        if not label or label != "".join(label.split()):
            raise ValueError("label %r is empty or holds whitespace" % label)
    write_text_atomically(os.fspath(path), "".join(l + "\n" for l in labels))


def read_label_list(path):
    """Reads label_list.txt as written by write_label_list.

    Returns:
      list of str; label id k is element k.

    Raises:
      UserError: no such file, not UTF-8, empty, a blank line inside, or a
        duplicate label (names the file and line).
    """
    path = os.fspath(path)
    text = read_user_text(
        path, "a label list (one label per line)", UserError,
        "%s: no such file (label_list.txt is written by training)" % path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    labels, seen = [], {}
    for number, line in enumerate(lines, start=1):
        label = line.rstrip("\r")
        if not label.strip() or label != label.strip():
            raise UserError("%s, line %d: %r is not a label; expected one "
                            "label per line, no blank lines" % (
                                path, number, label))
        if label in seen:
            raise UserError("%s, line %d: label %r repeats line %d" % (
                path, number, label, seen[label]))
        seen[label] = number
        labels.append(label)
    if not labels:
        raise UserError("%s: the label list is empty" % path)
    return labels


def choose_label_list(output_dir, train_labels=None, train_file=None):
    """The label list a run uses, checked against output_dir's.

    Returns:
        list of str: `train_labels` when training, else
        `output_dir/label_list.txt`'s.

    Raises:
        UserError: training with an output_dir whose label_list.txt holds
            other labels, or no label_list.txt without training.
    """
    import tensorflow as tf  # gs:// output_dirs; this module loads without

    written = os.path.join(output_dir or "", LABEL_LIST_FILE)
    exists = bool(output_dir) and tf.io.gfile.exists(written)
    if train_labels is not None:
        if exists and read_label_list(written) != train_labels:
            raise UserError(
                f"{written} holds the labels of another training "
                f"({', '.join(read_label_list(written))}), not those of "
                f"{train_file} ({', '.join(train_labels)}); use a fresh "
                "--output_dir")
        return train_labels
    if not exists:
        raise UserError(
            f"{written}: no such file. Without --do_train the labels "
            "come from the label_list.txt that training wrote in "
            "--output_dir; pass the output_dir of the training run")
    return read_label_list(written)
