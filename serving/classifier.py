"""Serving a `BertClassifier` (run_classifier.py) from raw text."""
import tensorflow as tf

from bert_tf1.serving.text_module import (TextServing, ids_features, ids_signature,
                                          pair_signature, text_signature)


class ClassifierServing(TextServing):
    """Signatures of a `BertClassifier` (run_classifier.py).

    `classify_text(text)`, `classify_pair(text_a, text_b)`, `classify_ids`
    -> `logits`, `probabilities` float32 [batch, num_labels], `label_id`
    int32 and `label` tf.string [batch]; regression: `score` float32 [batch].
    """

    def __init__(self, model, tokenizer, max_seq_length, cls_id, sep_id,
                 label_list):
        super().__init__(model, tokenizer, max_seq_length, cls_id, sep_id)
        self.label_list = tf.constant(list(label_list or []), tf.string)
        # Readable after tf.saved_model.load (constants are not).
        self.label_names = tf.Variable(list(label_list or []), trainable=False,
                                       dtype=tf.string, shape=[None],
                                       name="label_names")
        self.is_regression = model.num_labels == 1 and not label_list

    def _outputs(self, features):
        logits = self.model(features, training=False)
        if self.is_regression:
            return {"score": logits[:, 0]}
        label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {"logits": logits, "probabilities": tf.nn.softmax(logits),
                "label_id": label_id,
                "label": tf.gather(self.label_list, label_id)}

    @text_signature
    def classify_text(self, text):
        return self._outputs(self._pack(text))

    @pair_signature
    def classify_pair(self, text_a, text_b):
        return self._outputs(self._pack(text_a, text_b))

    @ids_signature
    def classify_ids(self, input_ids, input_mask, segment_ids):
        return self._outputs(ids_features(input_ids, input_mask, segment_ids))

    def signatures(self):
        return {"serving_default": self.classify_text,
                "classify_text": self.classify_text,
                "classify_pair": self.classify_pair,
                "classify_ids": self.classify_ids}
