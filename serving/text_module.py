"""What every serving module shares: the in-graph tokenizer, the packer, the
model, and the signature over already-tokenized ids.

The tokenizer (`InGraphFullTokenizer`, the original `FullTokenizer`'s ids)
and packing (`[CLS] A [SEP] B [SEP]`, the original's truncation) run inside
the graph, so a served text gets the same input_ids as the scripts give it.
"""
import tensorflow as tf

from data.tokenization.packing import InGraphPacker


def ids_signature(function):
    """Wraps `function(self, input_ids, input_mask, segment_ids)` as a
    tf.function over int32 [batch_size, seq_length] ids."""
    return tf.function(input_signature=[
        tf.TensorSpec([None, None], tf.int32, name="input_ids"),
        tf.TensorSpec([None, None], tf.int32, name="input_mask"),
        tf.TensorSpec([None, None], tf.int32, name="segment_ids")])(function)


class TextServing(tf.Module):
    """Common part: the in-graph tokenizer, packer and the Keras model."""

    def __init__(self, model, tokenizer, max_seq_length, cls_id, sep_id):
        super().__init__()
        self.model = model
        # Listed explicitly so tf.saved_model saves every weight, whatever
        # Keras' own object tracking exposes.
        self.model_variables = list(model.variables)
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.packer = InGraphPacker(max_seq_length, cls_id, sep_id)
        # A copy of the vocab in the export's assets/, for users who tokenize
        # outside and call the *_ids signature.
        self.vocab_file = tf.saved_model.Asset(tokenizer.vocab_file)

    def _pack(self, text_a, text_b=None):
        ids_b = None if text_b is None else self.tokenizer(text_b)
        return self.packer(self.tokenizer(text_a), ids_b)
