"""Tag schemes: checks, conlleval entity spans, conversions and round trips."""
import random

import pytest

from bert_tf1.data.tagging import schemes
from bert_tf1.data.tagging.schemes import Entity


def test_scheme_names_and_aliases():
    assert schemes.normalize_scheme("BIO") == "iob2"
    assert schemes.normalize_scheme("IOBES") == "bioes"
    assert schemes.normalize_scheme("iob1") == "iob1"
    with pytest.raises(ValueError, match="unknown tag scheme 'bilou'"):
        schemes.normalize_scheme("bilou")


def test_tag_problem():
    assert schemes.tag_problem("O", "iob2") is None
    assert schemes.tag_problem("I-creative-work", "iob2") is None
    assert schemes.tag_problem("S-PER", "bioes") is None
    assert "not an IOB2 tag" in schemes.tag_problem("S-PER", "iob2")
    assert "not an IOB1 tag" in schemes.tag_problem("E-PER", "iob1")
    for bad in ("B-", "B", "X-PER", "b-PER", "o", "", "BPER", "B- ",
                "B-new york"):
        assert schemes.tag_problem(bad, "bioes") is not None, bad
    assert schemes.split_tag("I-creative-work") == ("I", "creative-work")


def test_entity_spans_conlleval_rules():
    # B always starts; I after O or another type starts; same-type I
    # continues; O, B and a type change end an entity.
    tags = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "B-ORG",
            "I-ORG", "I-LOC"]
    assert schemes.entity_spans(tags) == [
        Entity("PER", 0, 2), Entity("PER", 2, 3), Entity("LOC", 4, 5),
        Entity("ORG", 5, 6), Entity("ORG", 6, 8), Entity("LOC", 8, 9)]
    assert schemes.entity_spans(["O", "O"]) == []
    assert schemes.entity_spans([]) == []
    # BIOES: S is one token, E closes; I-X after E-X opens a new entity.
    assert schemes.entity_spans(
        ["S-A", "S-A", "B-A", "I-A", "E-A", "I-A", "E-A", "B-B", "O"]) == [
        Entity("A", 0, 1), Entity("A", 1, 2), Entity("A", 2, 5),
        Entity("A", 5, 7), Entity("B", 7, 8)]


def test_render_each_scheme_by_hand():
    spans = [Entity("ORG", 1, 2), Entity("ORG", 2, 4), Entity("PER", 5, 6)]
    assert schemes.render_tags(spans, 7, "iob2") == [
        "O", "B-ORG", "B-ORG", "I-ORG", "O", "B-PER", "O"]
    # IOB1: B only for the entity right after a same-type entity.
    assert schemes.render_tags(spans, 7, "iob1") == [
        "O", "I-ORG", "B-ORG", "I-ORG", "O", "I-PER", "O"]
    assert schemes.render_tags(spans, 7, "bioes") == [
        "O", "S-ORG", "B-ORG", "E-ORG", "O", "S-PER", "O"]
    with pytest.raises(ValueError, match="overlaps"):
        schemes.render_tags([Entity("A", 0, 2), Entity("A", 1, 3)], 3, "iob2")


def test_convert_hand_cases():
    iob1 = ["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "O", "I-ORG", "I-MISC"]
    iob2 = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "O", "B-ORG", "B-MISC"]
    bioes = ["B-PER", "E-PER", "O", "S-LOC", "S-LOC", "O", "S-ORG", "S-MISC"]
    assert schemes.convert_tags(iob1, "iob1", "iob2") == iob2
    assert schemes.convert_tags(iob2, "iob2", "iob1") == iob1
    assert schemes.convert_tags(iob2, "iob2", "bioes") == bioes
    assert schemes.convert_tags(bioes, "bioes", "iob1") == iob1
    with pytest.raises(ValueError, match="not an IOB2 tag"):
        schemes.convert_tags(["S-PER"], "iob2", "bioes")


def _random_spans(rng, length, types=("A", "B")):
    spans, position = [], 0
    while position < length:
        if rng.random() < 0.4:
            size = rng.randint(1, min(4, length - position))
            spans.append(Entity(rng.choice(types), position, position + size))
            position += size
        else:
            position += 1
    return spans


def test_round_trips_on_random_sentences():
    rng = random.Random(7)
    for _ in range(2000):
        length = rng.randint(0, 14)
        spans = _random_spans(rng, length)
        for source in schemes.SCHEMES:
            tags = schemes.render_tags(spans, length, source)
            # Rendered tags are valid in their scheme and read back.
            assert schemes.sequence_problem(tags, source) is None
            assert schemes.entity_spans(tags) == spans
            for target in schemes.SCHEMES:
                there = schemes.convert_tags(tags, source, target)
                assert schemes.sequence_problem(there, target) is None
                assert schemes.convert_tags(there, target, source) == tags


def test_sequence_problems():
    assert schemes.sequence_problem(["I-PER", "B-PER"], "iob1") is None
    assert schemes.sequence_problem(["B-PER", "B-PER", "I-PER"],
                                    "iob2") is None
    index, message = schemes.sequence_problem(["O", "I-PER"], "iob2")
    assert index == 1 and "I-PER opens an entity (after O)" in message
    assert "iob1" in message
    index, message = schemes.sequence_problem(["B-LOC", "I-PER"], "iob2")
    assert index == 1 and "after B-LOC" in message
    index, _ = schemes.sequence_problem(["I-PER"], "iob2")
    assert index == 0
    bioes = schemes.sequence_problem
    assert bioes(["B-A", "I-A", "E-A", "S-A", "O"], "bioes") is None
    assert bioes(["B-A", "O"], "bioes")[0] == 0          # B not closed
    assert bioes(["B-A", "E-B"], "bioes")[0] == 0        # type changes
    assert bioes(["O", "E-A"], "bioes")[0] == 1          # E without B
    assert bioes(["B-A", "I-A"], "bioes")[0] == 1        # I at the end
    assert "S-A" in bioes(["B-A"], "bioes")[1]


def test_scheme_labels():
    assert schemes.scheme_labels(["PER", "LOC", "PER"], "iob2") == [
        "O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    assert schemes.scheme_labels(["X"], "bioes") == [
        "O", "B-X", "I-X", "E-X", "S-X"]
    assert schemes.entity_types(["O", "B-b", "I-a", "S-b"]) == ["a", "b"]
