"""Serving a `BertModel` encoder from raw text."""

from bert_tf1.modeling.pooling import pool_sequence
from bert_tf1.serving.text_module import (TextServing, ids_features, ids_signature,
                                          pair_signature, text_signature)


class EncoderServing(TextServing):
    """Signatures of a `BertModel`.

    - `encode_text(text)`, `encode_pair(text_a, text_b)`, `encode_ids(...)`:
      `pooled_output` float32 [batch, hidden_size], `sequence_output`
      float32 [batch, max_seq_length, hidden_size] (text signatures: and
      the packed ids int32 [batch, max_seq_length]);
    - `embed_text(text)`: `embedding` float32 [batch, hidden_size], the last
      layer pooled (`bert_tf1.modeling.pooling.pool_sequence`, `pooling` and
      `l2_normalize` fixed at export).
    """

    SIGNATURES = ("encode_text", "encode_pair", "embed_text", "encode_ids")

    def __init__(self, model, tokenizer, max_seq_length, cls_id, sep_id,
                 pooling="mean", l2_normalize=False):
        super().__init__(model, tokenizer, max_seq_length, cls_id, sep_id)
        self.pooling = pooling
        self.l2_normalize = l2_normalize

    def _outputs(self, features):
        outputs = self.model(features, training=False)
        return {"pooled_output": outputs["pooled_output"],
                "sequence_output": outputs["sequence_output"]}

    @text_signature
    def encode_text(self, text):
        features = self._pack(text)
        return dict(self._outputs(features), **features)

    @pair_signature
    def encode_pair(self, text_a, text_b):
        features = self._pack(text_a, text_b)
        return dict(self._outputs(features), **features)

    @text_signature
    def embed_text(self, text):
        features = self._pack(text)
        outputs = self.model(features, training=False)
        return {"embedding": pool_sequence(
            outputs["sequence_output"], features["input_mask"], self.pooling,
            self.l2_normalize)}

    @ids_signature
    def encode_ids(self, input_ids, input_mask, segment_ids):
        return self._outputs(ids_features(input_ids, input_mask, segment_ids))
