"""Sliding windows over word pieces and the max-context rule (SQuAD, tagging).

Source: run_squad.py (own code): windows of at most `max_pieces` advance by
min(length, doc_stride) until one reaches the end; a piece in several
windows belongs to the one scoring min(left, right) + 0.01 * length highest,
the earliest on a tie (`_check_is_max_context`).
"""
import collections

WindowSpan = collections.namedtuple("WindowSpan", ["start", "length"])
WindowSpan.__doc__ = """Pieces [start, start + length) of a document."""


def sliding_windows(num_pieces, max_pieces, doc_stride):
    """The windows over a document of `num_pieces` pieces.

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


def max_context_windows(spans, num_pieces):
    """list of num_pieces ints: each piece's max-context window
    (run_squad.py `_check_is_max_context`, for all pieces in one pass).

    Raises:
      ValueError: a piece lies in no window.
    """
    best_index = [None] * num_pieces
    best_score = [None] * num_pieces
    for index, span in enumerate(spans):
        for position in range(span.start, span.start + span.length):
            left = position - span.start
            right = span.start + span.length - 1 - position
            score = min(left, right) + 0.01 * span.length
            # Strictly greater: the earlier window keeps a tie.
            if best_score[position] is None or score > best_score[position]:
                best_index[position], best_score[position] = index, score
    if None in best_index:
        raise ValueError("piece %d lies in no window" % best_index.index(None))
    return best_index
