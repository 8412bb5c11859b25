"""predictions.txt / label_list.txt writers and reader; the most frequent
tag baseline."""
import os

import pytest

from data.io.errors import UserError
from data.tagging.baselines import MostFrequentTagBaseline
from data.tagging.documents import Document, Sentence, Word
from data.tagging.metric import conll_scores
from data.tagging.outputs import (format_predictions, read_label_list,
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


def test_most_frequent_tag_baseline():
    train = [_document([[("Paris", "B-LOC"), ("is", "O"), ("Paris", "B-PER"),
                         ("Paris", "B-LOC")], [("Hilton", "I-PER"),
                                               ("Hilton", "B-ORG")]])]
    baseline = MostFrequentTagBaseline().fit(train)
    assert baseline.word_tags == {"Paris": "B-LOC", "is": "O",
                                  "Hilton": "I-PER"}  # tie: first seen
    assert baseline.default_tag == "B-LOC"  # 2 x B-LOC vs 1 x O, ...
    evaluation = [_document([[("Paris", "B-LOC"), ("rocks", "O")]])]
    assert baseline.predict(evaluation) == [[["B-LOC", "B-LOC"]]]
    # On realistic data the unseen words get O.
    assert MostFrequentTagBaseline().fit(
        [_document([[("a", "O"), ("b", "O"), ("c", "B-X")]])]).predict(
        evaluation) == [[["O", "O"]]]
    with pytest.raises(RuntimeError, match="fit"):
        MostFrequentTagBaseline().predict(evaluation)


def test_baseline_on_wnut(data_dir):
    from data.tagging.readers import read_tagged_file
    train = read_tagged_file(data_dir / "ner/wnut17/wnut17train.conll")
    dev = read_tagged_file(data_dir / "ner/wnut17/emerging.dev.conll")
    baseline = MostFrequentTagBaseline().fit(train)
    assert baseline.default_tag == "O"
    predicted = [s for d in baseline.predict(dev) for s in d]
    scores = conll_scores([s.tags for d in dev for s in d.sentences],
                          predicted)
    assert scores.tokens == 15733
    # A weak but non-trivial baseline: far above 0, far below BERT.
    assert 0.02 < scores.overall.f1 < 0.4
    assert scores.accuracy > 0.85
