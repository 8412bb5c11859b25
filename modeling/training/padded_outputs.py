"""Per-token outputs of a cut batch padded back to max_seq_length (dynamic
padding gives each inference batch its own length; `model.predict`
concatenates batches), inside the predict step, per replica.
"""
import keras
import tensorflow as tf

from bert_tf1.data.io.dynamic_padding import pad_to_length


class PaddedOutputs(keras.Model):
    """Inference wrapper: `model(inputs)` with every output padded along axis 1
    to `seq_length` with `value` (SQuAD's logits: a very low score). Shares
    `model`'s weights; build it under the strategy's scope.

    Call returns:
        the model's outputs, each [batch, seq_length, ...].
    """

    def __init__(self, model, seq_length, value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.inner = model
        self.seq_length = int(seq_length)
        self.value = float(value)

    def call(self, inputs, training=False):
        outputs = self.inner(inputs, training=False)
        return tf.nest.map_structure(
            lambda output: pad_to_length(output, self.seq_length, value=self.value),
            outputs)
