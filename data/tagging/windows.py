"""Sliding windows over a document's word pieces and the max-context rule.

The rules are those of google-research/bert `run_squad.py` (own code):
  * windows hold at most `max_pieces` pieces; the first starts at 0, each
    next one at `start_offset += min(length, doc_stride)`, and the last is
    the first that reaches the end of the document;
  * a piece inside several windows belongs to the one where it has the most
    context: score = min(pieces on its left, pieces on its right in the
    window) + 0.01 * window length, the earliest window winning a tie
    (`_check_is_max_context`).
"""
import collections

__all__ = ["WindowSpan", "sliding_windows", "is_max_context",
           "max_context_windows"]

WindowSpan = collections.namedtuple("WindowSpan", ["start", "length"])
WindowSpan.__doc__ = """Pieces [start, start + length) of a document."""


def sliding_windows(num_pieces, max_pieces, doc_stride):
    """The windows over a document of `num_pieces` pieces.

    Args:
      num_pieces: int >= 0.
      max_pieces: int >= 1, the most pieces one window holds
        (max_seq_length - 2 for `[CLS] pieces [SEP]`).
      doc_stride: int >= 1.

    Returns:
      list of WindowSpan covering every piece ([] for no pieces).

    Raises:
      ValueError: max_pieces or doc_stride below 1 (the loop would not end).

    Source: the `while start_offset < len(all_doc_tokens)` loop of
    run_squad.py `convert_examples_to_features`.
    """
    if max_pieces < 1 or doc_stride < 1:
        raise ValueError("max_pieces (%d) and doc_stride (%d) must be at "
                         "least 1" % (max_pieces, doc_stride))
    spans = []
    start = 0
    while start < num_pieces:
        length = min(max_pieces, num_pieces - start)
        spans.append(WindowSpan(start, length))
        if start + length == num_pieces:
            break
        start += min(length, doc_stride)
    return spans


def _score(span, position):
    left = position - span.start
    right = span.start + span.length - 1 - position
    return min(left, right) + 0.01 * span.length


def is_max_context(spans, span_index, position):
    """True when window `span_index` is where piece `position` has the most
    context (run_squad.py `_check_is_max_context`, one piece at a time)."""
    best_index, best_score = None, None
    for index, span in enumerate(spans):
        if span.start <= position < span.start + span.length:
            score = _score(span, position)
            if best_score is None or score > best_score:
                best_index, best_score = index, score
    return best_index == span_index


def max_context_windows(spans, num_pieces):
    """For every piece, the index of its max-context window.

    Same result as `is_max_context` for each (window, piece) pair, in one
    pass over the windows (linear in the pieces they hold).

    Returns:
      list of num_pieces ints.

    Raises:
      ValueError: a piece lies in no window.
    """
    best_index = [None] * num_pieces
    best_score = [None] * num_pieces
    for index, span in enumerate(spans):
        for position in range(span.start, span.start + span.length):
            score = _score(span, position)
            # Strictly greater: the earlier window keeps a tie.
            if best_score[position] is None or score > best_score[position]:
                best_index[position], best_score[position] = index, score
    if None in best_index:
        raise ValueError("piece %d lies in no window" % best_index.index(None))
    return best_index
