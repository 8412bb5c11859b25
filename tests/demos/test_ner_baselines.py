"""demos/ner/baselines.py: the most frequent tag baseline of the NER demo."""
import pytest

from bert_tf1.data.tagging.documents import Document, Sentence, Word
from bert_tf1.data.tagging.metric import conll_scores
from demos.ner.baselines import MostFrequentTagBaseline


def _document(sentences, path="in.txt"):
    return Document(tuple(
        Sentence(tuple(Word(t, g, 1) for t, g in sentence))
        for sentence in sentences), path)


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
    from bert_tf1.data.tagging.readers import read_tagged_file
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
