"""The best answer span of one SQuAD window, in-graph.

Source: `write_predictions` in the original run_squad.py: candidates start
among the `n_best_size` largest start logits and end among the largest end
logits, on context tokens, at most max_answer_length long; the best has the
largest start_logit + end_logit ("" when there is none).
"""
import tensorflow as tf


def _in_top_k(logits, k):
    """bool [batch_size, seq_length]: position among the k largest logits
    (ties: the lower position first, as the original's stable sort)."""
    k = tf.minimum(k, tf.shape(logits)[1])
    _, top = tf.math.top_k(logits, k=k)
    return tf.reduce_any(
        tf.equal(top[:, :, tf.newaxis],
                 tf.range(tf.shape(logits)[1])[tf.newaxis, tf.newaxis, :]),
        axis=1)


def best_spans(start_logits, end_logits, is_context, max_answer_length,
               n_best_size=20):
    """Best candidate span of each row (rule: module docstring).

    Args:
        start_logits, end_logits: float32 [batch_size, seq_length].
        is_context: bool [batch_size, seq_length], True on context tokens.
        max_answer_length: int, the longest span in tokens.
        n_best_size: int, how many top start and end logits are candidates.

    Returns:
        (start_position, end_position) int32 [batch_size] and score float32
        [batch_size]; a row without any valid span gets positions 0, 0 and
        score -inf.
    """
    seq_length = tf.shape(start_logits)[1]
    positions = tf.range(seq_length)
    length = positions[tf.newaxis, :] - positions[:, tf.newaxis] + 1
    allowed = tf.logical_and(length >= 1, length <= max_answer_length)
    starts = tf.logical_and(is_context, _in_top_k(start_logits, n_best_size))
    ends = tf.logical_and(is_context, _in_top_k(end_logits, n_best_size))
    valid = tf.logical_and(
        allowed[tf.newaxis],
        tf.logical_and(starts[:, :, tf.newaxis], ends[:, tf.newaxis, :]))
    scores = start_logits[:, :, tf.newaxis] + end_logits[:, tf.newaxis, :]
    scores = tf.where(valid, scores, tf.constant(-float("inf"), scores.dtype))
    flat = tf.reshape(scores, [tf.shape(scores)[0], -1])
    best = tf.argmax(flat, axis=-1, output_type=tf.int32)
    score = tf.reduce_max(flat, axis=-1)
    found = tf.math.is_finite(score)
    start = tf.where(found, best // seq_length, 0)
    end = tf.where(found, best % seq_length, 0)
    return start, end, score


def span_text(input_ids, start, end, vocab_tokens):
    """The span's WordPiece tokens joined as the original's `tok_text`.

    Args:
        input_ids: int32 [batch_size, seq_length].
        start, end: int32 [batch_size], inclusive token positions; a row
            whose score was -inf (start = end = 0, the [CLS]) gives "".
        vocab_tokens: tf.string [vocab_size], token of each id.

    Returns:
        tf.string [batch_size]: tokens joined by spaces, " ##" removed.

    Source: run_squad.py write_predictions (`tok_text`, before
    `get_final_text`).
    """
    positions = tf.range(tf.shape(input_ids)[1])[tf.newaxis, :]
    inside = tf.logical_and(positions >= start[:, tf.newaxis],
                            positions <= end[:, tf.newaxis])
    inside = tf.logical_and(inside, (end > 0)[:, tf.newaxis])
    tokens = tf.gather(vocab_tokens, tf.ragged.boolean_mask(input_ids, inside))
    text = tf.strings.reduce_join(tokens, axis=-1, separator=" ")
    text = tf.strings.regex_replace(text, " ##", "")
    text = tf.strings.regex_replace(text, "##", "")
    # The original's " ".join(tok_text.strip().split()).
    text = tf.strings.regex_replace(text, r"\s+", " ")
    return tf.strings.strip(text)
