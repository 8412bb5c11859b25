"""Entity-level precision, recall and F1 as the CoNLL `conlleval` script
counts them, overall (micro) and per type, plus token accuracy.

Entities are read with conlleval's chunk rules (schemes.entity_spans); a
predicted entity is correct when a gold one has the same type, start and
end. Values are fractions in [0, 1]; for IOB1/IOB2 this equals seqeval's
default mode (tested).
"""
import collections
import dataclasses

from bert_tf1.data.tagging.schemes import entity_spans


@dataclasses.dataclass(frozen=True)
class EntityCounts:
    """Entity counts of one type (or all types) and the scores from them.

    Attributes:
      gold: int, entities in the gold tags.
      predicted: int, entities in the predicted tags.
      correct: int, predicted entities that match a gold one exactly.
    """
    gold: int = 0
    predicted: int = 0
    correct: int = 0

    @property
    def precision(self):
        """float, correct / predicted (or 0.0)."""
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self):
        """float, correct / gold (or 0.0)."""
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self):
        """float, 2 P R / (P + R) (0.0 when P + R is 0)."""
        precision, recall = self.precision, self.recall
        total = precision + recall
        return 2 * precision * recall / total if total else 0.0


@dataclasses.dataclass(frozen=True)
class TaggingScores:
    """The result of `conll_scores`.

    Attributes:
      overall: EntityCounts over all types (micro average).
      per_type: dict type -> EntityCounts, sorted by type.
      tokens: int, number of tokens scored.
      correct_tokens: int, tokens with the gold tag.
    """
    overall: EntityCounts
    per_type: dict
    tokens: int
    correct_tokens: int

    @property
    def accuracy(self):
        """float, token accuracy (0.0 for no tokens)."""
        return self.correct_tokens / self.tokens if self.tokens else 0.0


def conll_scores(gold_sentences, predicted_sentences):
    """Entity P/R/F1 and token accuracy of predicted tags against gold ones.

    Args:
      gold_sentences, predicted_sentences: sequences of sentences of tag
        str, of the same shape.

    Returns:
      TaggingScores.

    Raises:
      ValueError: the shapes differ (names the sentence).

    Source: conlleval (CoNLL-2000 shared task evaluation script), its
    counting of correctChunk / foundGuessed / foundCorrect and of tokens.
    """
    gold_sentences = list(gold_sentences)
    predicted_sentences = list(predicted_sentences)
    if len(gold_sentences) != len(predicted_sentences):
        raise ValueError("%d gold sentences but %d predicted ones" % (
            len(gold_sentences), len(predicted_sentences)))
    gold_counts = collections.Counter()
    predicted_counts = collections.Counter()
    correct_counts = collections.Counter()
    tokens = correct_tokens = 0
    for index, (gold, predicted) in enumerate(zip(gold_sentences,
                                                  predicted_sentences)):
        gold, predicted = list(gold), list(predicted)
        if len(gold) != len(predicted):
            raise ValueError("sentence %d: %d gold tags but %d predicted" % (
                index, len(gold), len(predicted)))
        tokens += len(gold)
        correct_tokens += sum(g == p for g, p in zip(gold, predicted))
        gold_spans = entity_spans(gold)
        predicted_spans = entity_spans(predicted)
        gold_counts.update(span.type for span in gold_spans)
        predicted_counts.update(span.type for span in predicted_spans)
        matched = set(gold_spans) & set(predicted_spans)
        correct_counts.update(span.type for span in matched)
    per_type = {name: EntityCounts(gold_counts[name], predicted_counts[name],
                                   correct_counts[name])
                for name in sorted(set(gold_counts) | set(predicted_counts))}
    overall = EntityCounts(sum(gold_counts.values()),
                           sum(predicted_counts.values()),
                           sum(correct_counts.values()))
    return TaggingScores(overall, per_type, tokens, correct_tokens)


def conlleval_report(scores):
    """TaggingScores as the text conlleval prints (percentages; per type the
    last number is its predicted entities), ending with a newline."""
    overall = scores.overall
    lines = ["processed %d tokens with %d phrases; found: %d phrases; "
             "correct: %d." % (scores.tokens, overall.gold, overall.predicted,
                               overall.correct)]
    lines.append("accuracy: %6.2f%%; precision: %6.2f%%; recall: %6.2f%%; "
                 "FB1: %6.2f" % (100 * scores.accuracy,
                                 100 * overall.precision,
                                 100 * overall.recall, 100 * overall.f1))
    for name, counts in scores.per_type.items():
        lines.append("%17s: precision: %6.2f%%; recall: %6.2f%%; FB1: %6.2f"
                     "  %d" % (name, 100 * counts.precision,
                               100 * counts.recall, 100 * counts.f1,
                               counts.predicted))
    return "\n".join(lines) + "\n"
