"""Serving a `BertClassifier` (run_classifier.py) from raw text."""
import tensorflow as tf

from bert_tf1.serving.text_module import (TextServing, ids_features,
                                          ids_signature, pair_signature,
                                          softmax_outputs, text_signature)


class ClassifierServing(TextServing):
    """Signatures of a `BertClassifier` (run_classifier.py).

    `classify_text(text)`, `classify_pair(text_a, text_b)`, `classify_ids`
    -> `logits`, `probabilities` float32 [batch, num_labels], `label_id`
    int32 and `label` tf.string [batch]; regression: `score` float32 [batch].
    """

    SIGNATURES = ("classify_text", "classify_pair", "classify_ids")

    def __init__(self, model, tokenizer, max_seq_length, cls_id, sep_id,
                 label_list, num_labels=None):
        super().__init__(model, tokenizer, max_seq_length, cls_id, sep_id)
        self._set_labels(label_list or [])
        num_labels = num_labels or model.num_labels
        self.is_regression = num_labels == 1 and not label_list

    def _outputs(self, features):
        logits = self.model(features, training=False)
        if self.is_regression:
            return {"score": logits[:, 0]}
        outputs = softmax_outputs(logits, "label_id")
        outputs["label"] = tf.gather(self.label_list, outputs["label_id"])
        return outputs

    @text_signature
    def classify_text(self, text):
        return self._outputs(self._pack(text))

    @pair_signature
    def classify_pair(self, text_a, text_b):
        return self._outputs(self._pack(text_a, text_b))

    @ids_signature
    def classify_ids(self, input_ids, input_mask, segment_ids):
        return self._outputs(ids_features(input_ids, input_mask, segment_ids))
