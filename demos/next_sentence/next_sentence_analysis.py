"""How much of the next-sentence demo task the text's source alone answers.

The shared text has two kinds of documents, Wikipedia articles (WikiText)
and chapters of a novel (Pride and Prejudice), plus a few sample lines.
The right ending always comes from the context's own document, hence its
source; a distractor comes from another document, which may be of the other
source. A model that only tells the sources apart, and guesses among the
endings of the context's source, is right with probability
1 / (1 + s) on a row with s same-source distractors. This module counts s
per row and reports that shortcut's expected accuracy, and a model's
accuracy split by s: on rows with s = num_choices - 1 the source tells
nothing, so accuracy above chance there is next-sentence skill.
"""
import collections

import numpy as np

__all__ = [
    "source_of_id",
    "sentence_sources",
    "same_source_distractors",
    "source_shortcut_accuracy",
    "accuracy_by_same_source",
]


def source_of_id(example_id):
    """The source of a demo row id "<source>/<doc>/<sentence>" (its prefix)."""
    return str(example_id).split("/", 1)[0]


def sentence_sources(documents):
    """dict sentence text -> frozenset of the sources whose documents hold it.

    Args:
      documents: list of corpus_documents.Document (doc_id
        "<source>/<index>").
    """
    found = collections.defaultdict(set)
    for document in documents:
        source = source_of_id(document.doc_id)
        for sentence in document.sentences:
            found[sentence].add(source)
    return {text: frozenset(names) for text, names in found.items()}


def same_source_distractors(examples, sources):
    """Per row, how many distractors come from the context's source.

    Args:
      examples: list of labelled MultipleChoiceExample of the demo task.
      sources: the `sentence_sources` of the documents the task was built
        from. A distractor found in several sources counts as same-source
        when one of them is the context's.

    Returns:
      int array [num_examples], each in 0..num_choices-1.

    Raises:
      KeyError: an ending that is no sentence of the documents (the task
        was built from other text).
    """
    counts = []
    for example in examples:
        source = source_of_id(example.example_id)
        counts.append(sum(
            1 for k, ending in enumerate(example.endings)
            if k != example.label and source in sources[ending]))
    return np.asarray(counts, dtype=np.int64)


def source_shortcut_accuracy(same_counts):
    """Expected accuracy of guessing among the context-source endings.

    Args:
      same_counts: int array-like, `same_source_distractors` per row.

    Returns:
      float, mean over rows of 1 / (1 + same_count).
    """
    counts = np.asarray(same_counts, dtype=np.float64)
    return float(np.mean(1.0 / (1.0 + counts)))


def accuracy_by_same_source(probabilities, examples, same_counts):
    """A model's accuracy, overall and per number of same-source distractors.

    Args:
      probabilities: float array-like [num_examples, num_choices] (e.g.
        test_results.tsv of the dev rows), in the rows' order.
      examples: the labelled rows.
      same_counts: `same_source_distractors` of those rows.

    Returns:
      dict: "all" -> (rows, accuracy), and s -> (rows, accuracy) for each s
      that occurs (accuracy: argmax of the row's probabilities == label).

    Raises:
      ValueError: as many probability rows as examples are needed.
    """
    probabilities = np.asarray(probabilities)
    if len(probabilities) != len(examples):
        raise ValueError("%d probability rows for %d examples" % (
            len(probabilities), len(examples)))
    labels = np.asarray([example.label for example in examples])
    right = probabilities.argmax(axis=-1) == labels
    same_counts = np.asarray(same_counts)
    result = {"all": (len(right), float(right.mean()))}
    for count in sorted(set(same_counts.tolist())):
        chosen = same_counts == count
        result[count] = (int(chosen.sum()), float(right[chosen].mean()))
    return result
