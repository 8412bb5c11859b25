"""The conlleval metric: hand cases, and exact agreement with seqeval's
default (conlleval-compatible) mode on thousands of random sequences."""
import random
import warnings

import pytest
# seqeval is a test-only dependency (setup.py extra "dev").
from seqeval.metrics import sequence_labeling as seqeval_metrics
from seqeval.metrics.sequence_labeling import get_entities

from bert_tf1.data.tagging import schemes
from bert_tf1.data.tagging.metric import EntityCounts, conll_scores, conlleval_report


def test_hand_case():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "B-ORG", "O"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "I-ORG", "O"]]
    scores = conll_scores(gold, pred)
    # gold: PER(0,2) LOC(3) | ORG(0) ORG(1); pred: PER(0,2) ORG(3) | ORG(0,2)
    assert scores.overall == EntityCounts(gold=4, predicted=3, correct=1)
    assert scores.overall.precision == 1 / 3
    assert scores.overall.recall == 1 / 4
    assert scores.overall.f1 == pytest.approx(2 / 7)
    assert scores.per_type["PER"] == EntityCounts(1, 1, 1)
    assert scores.per_type["LOC"] == EntityCounts(1, 0, 0)
    assert scores.per_type["ORG"] == EntityCounts(2, 2, 0)
    assert scores.per_type["LOC"].precision == 0.0
    assert scores.tokens == 7 and scores.correct_tokens == 5
    assert scores.accuracy == 5 / 7
    assert list(scores.per_type) == ["LOC", "ORG", "PER"]
    # 100 * 2/7 = 28.571...; per type: predicted entities last.
    type_line = "%17s: precision: %s; recall: %s; FB1: %s  %d\n"
    assert conlleval_report(scores) == (
        "processed 7 tokens with 4 phrases; found: 3 phrases; correct: 1.\n"
        "accuracy:  71.43%; precision:  33.33%; recall:  25.00%; FB1:  28.57\n"
        + type_line % ("LOC", "  0.00%", "  0.00%", "  0.00", 0)
        + type_line % ("ORG", "  0.00%", "  0.00%", "  0.00", 2)
        + type_line % ("PER", "100.00%", "100.00%", "100.00", 1))


def test_i_after_o_opens_an_entity_and_sentences_end_entities():
    # conlleval: "I-X" after "O" is a chunk start (IOB1 reading); the end of
    # a sentence ends the entity, so the next sentence's I-X is a new one.
    scores = conll_scores([["O", "I-X"], ["I-X"]], [["O", "B-X"], ["B-X"]])
    assert scores.overall == EntityCounts(2, 2, 2)
    assert scores.accuracy == 1 / 3


def test_empty_and_mismatched_input():
    scores = conll_scores([], [])
    assert scores.overall.f1 == 0.0 and scores.accuracy == 0.0
    with pytest.raises(ValueError, match="2 gold sentences but 1"):
        conll_scores([["O"], ["O"]], [["O"]])
    with pytest.raises(ValueError, match="sentence 0: 2 gold tags but 1"):
        conll_scores([["O", "O"]], [["O"]])


TYPES = ("PER", "LOC", "creative-work")


def _random_iob(rng, length, scheme):
    """A valid IOB1 or IOB2 sentence, often with adjacent same-type ones."""
    spans, position = [], 0
    while position < length:
        if rng.random() < 0.45:
            size = rng.randint(1, min(3, length - position))
            # Half the time repeat the previous type right after it.
            if spans and spans[-1].end == position and rng.random() < 0.5:
                entity_type = spans[-1].type
            else:
                entity_type = rng.choice(TYPES)
            spans.append(schemes.Entity(entity_type, position,
                                        position + size))
            position += size
        else:
            position += 1
    return schemes.render_tags(spans, length, scheme)


def _random_tags(rng, length):
    """Any B/I/O sequence (what an untrained tagger predicts)."""
    labels = ["O"] + ["%s-%s" % (p, t) for t in TYPES for p in "BI"]
    return [rng.choice(labels) for _ in range(length)]


def _perturb(rng, tags):
    labels = ["O"] + ["%s-%s" % (p, t) for t in TYPES for p in "BI"]
    return [rng.choice(labels) if rng.random() < 0.15 else tag
            for tag in tags]


def _corpus(rng, kind, sentences):
    gold, pred = [], []
    for _ in range(sentences):
        length = rng.randint(1, 12)
        if kind == "random":
            gold.append(_random_tags(rng, length))
            pred.append(_random_tags(rng, length))
        else:
            tags = _random_iob(rng, length, kind)
            gold.append(tags)
            pred.append(_perturb(rng, tags))
    return gold, pred


def _assert_same_as_seqeval(gold, pred):
    ours = conll_scores(gold, pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-division warnings
        precision, recall, f1, support = (
            seqeval_metrics.precision_recall_fscore_support(
                gold, pred, average="micro"))
        per = seqeval_metrics.precision_recall_fscore_support(
            gold, pred, average=None)
        accuracy = seqeval_metrics.accuracy_score(gold, pred)
    # Exactly equal floats, not approximately.
    assert (ours.overall.precision, ours.overall.recall, ours.overall.f1) == (
        precision, recall, f1)
    assert ours.overall.gold == support
    assert ours.accuracy == accuracy
    types = sorted(set(ours.per_type))
    assert types == sorted({t for seq in gold + pred
                            for t, _, _ in get_entities(seq)})
    for index, name in enumerate(types):
        counts = ours.per_type[name]
        assert (counts.precision, counts.recall, counts.f1, counts.gold) == (
            per[0][index], per[1][index], per[2][index], per[3][index]), name


@pytest.mark.parametrize("kind", ["iob1", "iob2", "random"])
def test_agrees_exactly_with_seqeval(kind):
    rng = random.Random({"iob1": 1, "iob2": 2, "random": 3}[kind])
    total_sequences = adjacent = 0
    for _ in range(100):
        gold, pred = _corpus(rng, kind, rng.randint(1, 30))
        total_sequences += len(gold)
        # Entities that start right after one of the same type.
        adjacent += sum(
            1 for seq in gold for a, b in zip(schemes.entity_spans(seq),
                                              schemes.entity_spans(seq)[1:])
            if a.end == b.start and a.type == b.type)
        # Entity by entity, too (seqeval's ends are inclusive).
        for sequence in gold + pred:
            assert [(e.type, e.start, e.end - 1) for e in
                    schemes.entity_spans(sequence)] == get_entities(sequence)
        _assert_same_as_seqeval(gold, pred)
    assert total_sequences >= 1000  # gold/predicted pairs per kind
    assert adjacent >= 100


def test_adjacent_same_type_entities_counted_apart():
    # IOB1 "I-LOC B-LOC" is two entities; predicting "I-LOC I-LOC" (one
    # entity) gets none right, as conlleval counts it.
    gold = [["I-LOC", "B-LOC", "O"]]
    pred = [["I-LOC", "I-LOC", "O"]]
    scores = conll_scores(gold, pred)
    assert scores.overall == EntityCounts(gold=2, predicted=1, correct=0)
    _assert_same_as_seqeval(gold, pred)
