"""The BiLSTM tagging head of the feature-based approach (BERT paper §5.3,
Table 7): two bidirectional LSTM layers, then a per-token classifier.

Weight names (under the scope the owning model builds it in, `cls/`):

    tagging_lstm/layer_<i>/forward_lstm/lstm_cell/kernel            [in, 4 units]
    tagging_lstm/layer_<i>/forward_lstm/lstm_cell/recurrent_kernel  [units, 4 units]
    tagging_lstm/layer_<i>/forward_lstm/lstm_cell/bias              [4 units]
    tagging_lstm/layer_<i>/backward_lstm/lstm_cell/...              (the same)
    tagging_lstm/output_weights  [num_labels, 2 units]  (the original's [out, in])
    tagging_lstm/output_bias     [num_labels]

Gates are Keras' order (input, forget, cell, output), forget bias 1.
"""
import keras
from keras import ops

from bert_tf1.modeling.layers.heads import transposed_dense
from bert_tf1.modeling.layers.initializers import create_initializer
from bert_tf1.modeling.layers.serialization import register

#: The head's scope name (`cls/tagging_lstm/...`).
BILSTM_SCOPE = "tagging_lstm"


@register
class BiLSTMTaggingHead(keras.layers.Layer):
    """Stacked bidirectional LSTMs and a per-token classifier.

    Dropout (`dropout_rate`) is applied to the input of every LSTM layer and
    to the classifier's input, in training only. Padding positions
    (`input_mask` 0) are skipped by both directions, so a window's logits
    do not depend on how far it is padded; their own logits are 0 + bias.

    Args:
        num_labels: int >= 1.
        input_width: int, the width of the features fed in.
        lstm_units: int >= 1, units per direction (the paper: 768).
        num_layers: int >= 1 (the paper: 2).
        dropout_rate: float in [0, 1).
        initializer_range: stddev of the classifier's truncated normal.

    Call args:
        features: float [batch_size, seq_length, input_width].
        input_mask: int or bool [batch_size, seq_length], 1 at real tokens.
        training: bool.
    Returns:
        float32 logits [batch_size, seq_length, num_labels].
    """

    def __init__(self, num_labels, input_width, lstm_units=768, num_layers=2,
                 dropout_rate=0.1, initializer_range=0.02, **kwargs):
        kwargs.setdefault("name", BILSTM_SCOPE)
        super().__init__(**kwargs)
        self.num_labels = int(num_labels)
        self.input_width = int(input_width)
        self.lstm_units = int(lstm_units)
        self.num_layers = int(num_layers)
        self.dropout_rate = float(dropout_rate)
        self.initializer_range = float(initializer_range)
        for name, value in (("num_labels", self.num_labels),
                            ("input_width", self.input_width),
                            ("lstm_units", self.lstm_units),
                            ("num_layers", self.num_layers)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}.")
        if not 0.0 <= self.dropout_rate < 1.0:
            raise ValueError(f"dropout_rate must be in [0, 1), got "
                             f"{dropout_rate}.")
        self.lstm_layers = [
            keras.layers.Bidirectional(
                keras.layers.LSTM(self.lstm_units, return_sequences=True,
                                  name="lstm", dtype=self.dtype_policy),
                name=f"layer_{index}", dtype=self.dtype_policy)
            for index in range(self.num_layers)]
        self.dropout = keras.layers.Dropout(self.dropout_rate,
                                            dtype=self.dtype_policy)

    def build(self, input_shape=None):
        width = self.input_width
        for layer in self.lstm_layers:
            layer.build((None, None, width))
            width = 2 * self.lstm_units
        self.output_weights = self.add_weight(
            name="output_weights", shape=(self.num_labels, width),
            initializer=create_initializer(self.initializer_range))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.num_labels,), initializer="zeros")

    def call(self, features, input_mask, training=None):
        mask = ops.cast(input_mask, "bool")
        hidden = features
        for layer in self.lstm_layers:
            hidden = layer(self.dropout(hidden, training=training), mask=mask,
                           training=training)
        hidden = self.dropout(hidden, training=training)
        return transposed_dense(hidden, self.output_weights, self.output_bias)

    def compute_mask(self, *args, **kwargs):
        # The logits carry no Keras mask: the loss weights say what counts.
        return None

    def get_config(self):
        config = super().get_config()
        config.update(num_labels=self.num_labels, input_width=self.input_width,
                      lstm_units=self.lstm_units, num_layers=self.num_layers,
                      dropout_rate=self.dropout_rate,
                      initializer_range=self.initializer_range)
        return config
