"""In-graph sliding windows over each text's word pieces, and the
max-context window of every word: the rules of `data/tagging` (those of the
original run_squad.py's windows and `_check_is_max_context`), scores in
float64 as Python computes them so ties break the same way.
"""
import tensorflow as tf

__all__ = ["window_features", "max_context_positions"]


def _window_spans(num_pieces, max_pieces, doc_stride):
    """(rows, starts, lengths [num_windows], first_window, counts [batch])."""
    # Every window but the last is full: the original's stride is constant.
    stride = min(int(doc_stride), int(max_pieces))
    extra = tf.maximum(num_pieces - max_pieces, 0)
    counts = tf.where(num_pieces > 0, 1 + (extra + stride - 1) // stride, 0)
    window_rows = tf.repeat(tf.range(tf.size(num_pieces)), counts)
    first_window = tf.cumsum(counts, exclusive=True)
    index_in_text = (tf.range(tf.size(window_rows))
                     - tf.gather(first_window, window_rows))
    starts = index_in_text * stride
    lengths = tf.minimum(max_pieces, tf.gather(num_pieces, window_rows) - starts)
    return window_rows, starts, lengths, first_window, counts


def window_features(pieces, max_seq_length, doc_stride, cls_id, sep_id):
    """(features, spans) of every window of every text of `pieces`
    (ragged int32 [batch, (pieces)]): features int32 [num_windows,
    max_seq_length] `input_ids`, `input_mask`, `segment_ids`; spans int32
    `rows`, `starts`, `lengths` [num_windows], `first_window`,
    `num_windows` [batch]."""
    max_pieces = max_seq_length - 2
    num_pieces = tf.cast(pieces.row_lengths(), tf.int32)
    rows, starts, lengths, first_window, counts = _window_spans(
        num_pieces, max_pieces, doc_stride)
    positions = tf.range(max_seq_length)[tf.newaxis, :]
    in_window = tf.logical_and(positions >= 1,
                               positions <= lengths[:, tf.newaxis])
    text_start = tf.gather(tf.cast(pieces.row_splits, tf.int32), rows)
    flat_index = (text_start + starts)[:, tf.newaxis] + positions - 1
    flat_pieces = pieces.flat_values
    gathered = tf.gather(flat_pieces, tf.clip_by_value(
        flat_index, 0, tf.maximum(tf.size(flat_pieces) - 1, 0)))
    ids = tf.where(in_window, gathered, 0)
    ids = tf.where(tf.equal(positions, 0), cls_id, ids)
    ids = tf.where(tf.equal(positions, lengths[:, tf.newaxis] + 1), sep_id, ids)
    mask = tf.cast(positions <= lengths[:, tf.newaxis] + 1, tf.int32)
    features = {"input_ids": ids, "input_mask": mask,
                "segment_ids": tf.zeros_like(ids)}
    spans = {"rows": rows, "starts": starts, "lengths": lengths,
             "first_window": first_window, "num_windows": counts}
    return features, spans


def max_context_positions(piece_positions, word_rows, spans, max_seq_length,
                          doc_stride):
    """(windows, positions) int32 [num_words]: where each word is read,
    its first piece (`piece_positions` int32 [num_words] among the pieces of
    its text `word_rows`) in its max-context window of `spans`
    (`window_features`)."""
    max_pieces = max_seq_length - 2
    stride = min(int(doc_stride), int(max_pieces))
    # The windows holding piece p start at k * stride with
    # k * stride <= p < k * stride + max_pieces: at most this many of them.
    num_candidates = (max_pieces + stride - 1) // stride + 1
    lowest = tf.maximum(0, (piece_positions - max_pieces + stride) // stride)
    candidates = lowest[:, tf.newaxis] + tf.range(num_candidates)[tf.newaxis]
    count = tf.gather(spans["num_windows"], word_rows)[:, tf.newaxis]
    exists = candidates < count
    global_index = tf.gather(spans["first_window"], word_rows)[:, tf.newaxis] + (
        tf.minimum(candidates, tf.maximum(count - 1, 0)))
    starts = tf.gather(spans["starts"], global_index)
    lengths = tf.gather(spans["lengths"], global_index)
    position = piece_positions[:, tf.newaxis]
    inside = exists & (starts <= position) & (position < starts + lengths)
    left = position - starts
    right = starts + lengths - 1 - position
    score = (tf.cast(tf.minimum(left, right), tf.float64)
             + 0.01 * tf.cast(lengths, tf.float64))
    score = tf.where(inside, score, tf.constant(-float("inf"), tf.float64))
    best = tf.reduce_max(score, axis=1, keepdims=True)
    # The first candidate with the best score (tf.argmax leaves ties open).
    first = tf.reduce_min(tf.where(
        tf.equal(score, best), tf.range(num_candidates)[tf.newaxis],
        num_candidates), axis=1)
    chosen = tf.stack([tf.range(tf.size(first)), first], axis=1)
    windows = tf.gather_nd(global_index, chosen)
    return windows, piece_positions - tf.gather_nd(starts, chosen) + 1
