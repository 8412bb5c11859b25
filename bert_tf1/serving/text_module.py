"""What every serving module shares: the in-graph tokenizer (the original
`FullTokenizer`'s ids), the packer (its truncation), the model and the
signature decorators."""
import types

import tensorflow as tf

from bert_tf1.data.tokenization.packing import InGraphPacker


def _specs(dtype, rank, *names):
    return [tf.TensorSpec([None] * rank, dtype, name=name) for name in names]


#: Decorators of the signatures: `text` tf.string [batch]; `text_a`,
#: `text_b` tf.string [batch]; `input_ids`, `input_mask`, `segment_ids`
#: int32 [batch, seq_length] (multiple choice: [batch, num_choices,
#: seq_length]). No AutoGraph: the signatures branch on Python values only
#: (converting them cost ~0.1-0.2 CPU s per export, measured).
text_signature = tf.function(input_signature=_specs(tf.string, 1, "text"),
                             autograph=False)
pair_signature = tf.function(
    input_signature=_specs(tf.string, 1, "text_a", "text_b"), autograph=False)
ids_signature = tf.function(input_signature=_specs(
    tf.int32, 2, "input_ids", "input_mask", "segment_ids"), autograph=False)
choices_ids_signature = tf.function(input_signature=_specs(
    tf.int32, 3, "input_ids", "input_mask", "segment_ids"), autograph=False)


def hold_untracked(module, model):
    """Gives the tf.Module `module` a `model` attribute that tf.saved_model
    does not follow: the weights are saved once, as the variables the
    signatures capture (`bert_tf1.serving.formats.writer.track_captured_variables`),
    not a second time under the Keras model's own objects."""
    module._untracked = types.SimpleNamespace(model=model)


def ids_features(input_ids, input_mask, segment_ids):
    """The model's input dict."""
    return {"input_ids": input_ids, "input_mask": input_mask,
            "segment_ids": segment_ids}


def softmax_outputs(logits, id_name):
    """`logits`, their `probabilities` (softmax, last axis) and `id_name`:
    the argmax, int32 (logits' shape without the last axis)."""
    return {"logits": logits, "probabilities": tf.nn.softmax(logits),
            id_name: tf.argmax(logits, axis=-1, output_type=tf.int32)}


class TextServing(tf.Module):
    """Common part: the in-graph tokenizer, packer and the Keras model;
    `SIGNATURES` names the signature methods, the first the default."""

    SIGNATURES = ()

    @property
    def model(self):
        """The served Keras model (not saved as an object: `hold_untracked`)."""
        return self._untracked.model

    def __init__(self, model, tokenizer, max_seq_length, cls_id, sep_id):
        super().__init__()
        hold_untracked(self, model)
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.packer = InGraphPacker(max_seq_length, cls_id, sep_id)
        # A copy of the vocab in the export's assets/, for users who tokenize
        # outside and call the *_ids signature.
        self.vocab_file = tf.saved_model.Asset(tokenizer.vocab_file)

    def _pack(self, text_a, text_b=None):
        ids_b = None if text_b is None else self.tokenizer(text_b)
        return self.packer(self.tokenizer(text_a), ids_b)

    def _set_labels(self, label_list):
        """`label_list` (a tf.string constant) and `label_names`: the same,
        a variable readable after tf.saved_model.load (constants are not)."""
        self.label_list = tf.constant(list(label_list), tf.string)
        self.label_names = tf.Variable(list(label_list), trainable=False,
                                       dtype=tf.string, shape=[None],
                                       name="label_names")

    def signatures(self):
        """{name: tf.function} of `SIGNATURES`, plus `serving_default`."""
        functions = {name: getattr(self, name) for name in self.SIGNATURES}
        return {"serving_default": functions[self.SIGNATURES[0]],
                **functions}
