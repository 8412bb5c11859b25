"""Serving a `BertMultipleChoice` (run_multiple_choice.py) from raw text.

Choice k of an example is packed as `[CLS] context [SEP] ending_k [SEP]`
with the original's `_truncate_seq_pair`, as `bert_tf1/data/multiple_choice/features.py`
packs it.
"""
import tensorflow as tf

from bert_tf1.serving.text_module import (TextServing, choices_ids_signature,
                                          ids_features, softmax_outputs)


class MultipleChoiceServing(TextServing):
    """Signatures of a `BertMultipleChoice`.

    - `multiple_choice(context, endings)`: `context` tf.string [batch],
      `endings` tf.string [batch, num_choices] -> `logits`, `probabilities`
      float32 [batch, num_choices], `choice` int32 [batch], and the packed
      ids int32 [batch, num_choices, max_seq_length];
    - `multiple_choice_ids(input_ids, input_mask, segment_ids)` int32
      [batch, num_choices, seq_length]: `logits`, `probabilities`, `choice`.
    """

    SIGNATURES = ("multiple_choice", "multiple_choice_ids")

    def _outputs(self, features):
        return softmax_outputs(self.model(features, training=False), "choice")

    def _pack_choices(self, context, endings):
        batch = tf.shape(endings)[0]
        num_choices = tf.shape(endings)[1]
        context_ids = self.tokenizer(context)
        rows = tf.repeat(tf.range(batch), num_choices)
        packed = self.packer(tf.gather(context_ids, rows),
                             self.tokenizer(tf.reshape(endings, [-1])))
        shape = tf.stack([batch, num_choices, self.max_seq_length])
        return {key: tf.reshape(value, shape) for key, value in packed.items()}

    @tf.function(input_signature=[
        tf.TensorSpec([None], tf.string, name="context"),
        tf.TensorSpec([None, None], tf.string, name="endings")])
    def multiple_choice(self, context, endings):
        tf.debugging.assert_equal(
            tf.shape(context)[0], tf.shape(endings)[0],
            message="context and endings need the same batch size")
        features = self._pack_choices(context, endings)
        return dict(self._outputs(features), **features)

    @choices_ids_signature
    def multiple_choice_ids(self, input_ids, input_mask, segment_ids):
        return self._outputs(ids_features(input_ids, input_mask, segment_ids))
