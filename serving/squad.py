"""Serving a `BertSquad` (run_squad.py) from a question and a context."""
import keras_hub
import tensorflow as tf

from bert_tf1.serving.squad_span import best_answers
from bert_tf1.serving.text_module import TextServing, ids_features, ids_signature

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
      (`bert_tf1.serving.squad_span.best_answers`): `start_position`, `end_position`
      int32 [batch] (packed positions), `score` float32 [batch] and
      `answer_text` tf.string [batch] (`bert_tf1.serving.squad_span.span_text`);
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
        # The question in full (cut to max_query_length), then the context.
        self.squad_packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length=max_seq_length, start_value=cls_id,
            end_value=sep_id, pad_value=-1, truncate="waterfall",
            dtype="int32")

    def _pack_squad(self, question, context):
        question_ids = self.tokenizer(question)[:, :self.max_query_length]
        token_ids, segment_ids = self.squad_packer(
            (question_ids, self.tokenizer(context)))
        real = tf.not_equal(token_ids, -1)
        return {"input_ids": tf.where(real, token_ids, 0),
                "input_mask": tf.cast(real, tf.int32),
                "segment_ids": tf.where(real, tf.cast(segment_ids, tf.int32), 0)}

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
