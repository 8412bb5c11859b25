"""predictions.txt / label_list.txt writers and reader."""
import os

import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.tagging.documents import Document, Sentence, Word
from bert_tf1.data.tagging.metric import conll_scores
from bert_tf1.data.tagging.outputs import (format_predictions, read_label_list,
                                           write_label_list, write_predictions)


def _document(sentences, path="in.txt"):
    return Document(tuple(
        Sentence(tuple(Word(t, g, 1) for t, g in sentence))
        for sentence in sentences), path)


def test_predictions_file_one_line_per_token(tmp_path):
    documents = [_document([[("EU", None), ("rejects", None)], [(".", None)]]),
                 _document([[("Peter", None)]])]
    tags = [[["I-ORG", "O"], ["O"]], [["I-PER"]]]
    path = tmp_path / "out" / "predictions.txt"
    os.makedirs(path.parent)
    write_predictions(path, documents, tags)
    assert path.read_bytes() == (
        b"EU\tI-ORG\nrejects\tO\n\n.\tO\n\nPeter\tI-PER\n\n")
    assert os.listdir(path.parent) == ["predictions.txt"]  # no temp left
    with pytest.raises(ValueError, match="2 words, 1 tags"):
        format_predictions(documents, [[["O"], ["O"]], [["O"]]])
    with pytest.raises(ValueError, match="tags for 1 documents, 2 given"):
        format_predictions(documents, [[["O", "O"], ["O"]]])


def test_label_list_round_trip_and_errors(tmp_path):
    path = tmp_path / "label_list.txt"
    labels = ["O", "B-creative-work", "I-creative-work", "B-PER"]
    write_label_list(path, labels)
    assert path.read_text() == "O\nB-creative-work\nI-creative-work\nB-PER\n"
    assert read_label_list(path) == labels
    with pytest.raises(ValueError, match="duplicates"):
        write_label_list(path, ["O", "O"])
    with pytest.raises(ValueError, match="whitespace"):
        write_label_list(path, ["O", "B X"])
    for text, pattern in [("O\n\nB-X\n", "line 2: '' is not a label"),
                          ("O\nB-X\nO\n", "line 3: label 'O' repeats line 1"),
                          ("", "the label list is empty")]:
        path.write_text(text)
        with pytest.raises(UserError, match=pattern):
            read_label_list(path)
    with pytest.raises(UserError, match="no such file"):
        read_label_list(tmp_path / "missing.txt")
