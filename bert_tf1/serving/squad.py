"""Serving a `BertSquad` (run_squad.py) from a question and a context, and
the best answer span of one window, in-graph.

Source: `write_predictions` in the original run_squad.py: candidates start
among the `n_best_size` largest start logits and end among the largest end
logits, on context tokens, at most max_answer_length long; the best has the
largest start_logit + end_logit ("" when there is none).
"""
import tensorflow as tf

from bert_tf1.data.tokenization.packing import pack_in_graph
from bert_tf1.serving.text_module import TextServing, ids_features, ids_signature


def _in_top_k(logits, k):
    """bool [batch, seq]: among the k largest (ties: lower position first)."""
    k = tf.minimum(k, tf.shape(logits)[1])
    _, top = tf.math.top_k(logits, k=k)
    return tf.reduce_any(
        tf.equal(top[:, :, tf.newaxis],
                 tf.range(tf.shape(logits)[1])[tf.newaxis, tf.newaxis, :]),
        axis=1)


def best_spans(start_logits, end_logits, is_context, max_answer_length,
               n_best_size=20):
    """(start_position, end_position) int32 [batch_size] and score float32
    [batch_size] of each row's best span (rule: module docstring) of
    float32 [batch_size, seq_length] logits, context tokens where
    `is_context` (bool, same shape); no valid span: 0, 0 and -inf."""
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
    """tf.string [batch_size]: the tokens of `input_ids` int32
    [batch_size, seq_length] from `start` to `end` (int32 [batch_size],
    inclusive; 0, 0 gives "") by `vocab_tokens` (tf.string [vocab_size]),
    joined as the original's `tok_text` (run_squad.py write_predictions,
    before `get_final_text`)."""
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


def best_answers(logits, features, vocab_tokens, max_answer_length,
                 n_best_size):
    """`start_position`, `end_position` int32, `score` float32 and
    `answer_text` tf.string [batch_size] of the best span (`best_spans`,
    `span_text`) among the context tokens of `features` (int32 [batch_size,
    seq_length] `input_ids`, `input_mask`, `segment_ids` of `[CLS] question
    [SEP] context [SEP]`: segment 1 before the final [SEP]) by `logits`
    (float32 [batch_size, seq_length] `start_logits`, `end_logits`)."""
    mask, segment_ids = features["input_mask"], features["segment_ids"]
    last = tf.reduce_sum(mask, axis=1, keepdims=True) - 1
    is_context = tf.logical_and(
        tf.equal(segment_ids, 1),
        tf.range(tf.shape(segment_ids)[1])[tf.newaxis, :] < last)
    start, end, score = best_spans(
        logits["start_logits"], logits["end_logits"], is_context,
        max_answer_length, n_best_size)
    return {"start_position": start, "end_position": end, "score": score,
            "answer_text": span_text(features["input_ids"], start, end,
                                     vocab_tokens)}


_question_signature = tf.function(input_signature=[
    tf.TensorSpec([None], tf.string, name="question"),
    tf.TensorSpec([None], tf.string, name="context")])


class SquadServing(TextServing):
    """Signatures of a `BertSquad` (run_squad.py), one window per question.

    The features are the original's first window: `[CLS] question [SEP]
    context [SEP]`, the question cut to `max_query_length` tokens and the
    context to what is left (no further `doc_stride` windows).

    - `squad(question, context)`: tf.string [batch] -> `start_logits`,
      `end_logits` float32 [batch, max_seq_length] and the packed ids;
    - `squad_answer(question, context)`: the best span
      (`best_answers`): `start_position`, `end_position`
      int32 [batch] (packed positions), `score` float32 [batch] and
      `answer_text` tf.string [batch] (`span_text`);
    - `squad_ids(input_ids, input_mask, segment_ids)`: the logits.
    """

    SIGNATURES = ("squad", "squad_answer", "squad_ids")

    def __init__(self, model, tokenizer, max_seq_length, cls_id, sep_id,
                 vocab_tokens, max_query_length, max_answer_length,
                 n_best_size):
        super().__init__(model, tokenizer, max_seq_length, cls_id, sep_id)
        self.max_query_length = int(max_query_length)
        self.max_answer_length = int(max_answer_length)
        self.n_best_size = int(n_best_size)
        self.vocab_tokens = tf.constant(vocab_tokens, tf.string)

    def _pack_squad(self, question, context):
        # The question in full (cut to max_query_length), then as much of
        # the context as fits: run_squad.py's first doc span.
        question_ids = tf.cast(
            self.tokenizer(question)[:, :self.max_query_length], tf.int32)
        context_ids = tf.cast(self.tokenizer(context), tf.int32)
        budget = self.max_seq_length - 3
        kept_question = tf.minimum(
            tf.cast(question_ids.row_lengths(), tf.int32), budget)
        kept_context = tf.minimum(
            tf.cast(context_ids.row_lengths(), tf.int32),
            budget - kept_question)
        return pack_in_graph(question_ids, context_ids, kept_question,
                             kept_context, self.max_seq_length,
                             self.packer.cls_id, self.packer.sep_id)

    @_question_signature
    def squad(self, question, context):
        features = self._pack_squad(question, context)
        return dict(self.model(features, training=False), **features)

    @_question_signature
    def squad_answer(self, question, context):
        features = self._pack_squad(question, context)
        return best_answers(self.model(features, training=False), features,
                            self.vocab_tokens, self.max_answer_length,
                            self.n_best_size)

    @ids_signature
    def squad_ids(self, input_ids, input_mask, segment_ids):
        return self.model(ids_features(input_ids, input_mask, segment_ids),
                          training=False)
