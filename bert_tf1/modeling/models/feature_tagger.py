"""The feature-based tagger of BERT paper §5.3 (Table 7): a FROZEN encoder,
one of six choices of its activations (`FEATURE_LAYERS`), a two-layer BiLSTM,
a classifier. The paper's "weighted" sums are plain sums here (it gives no
weights), so the features are one cacheable vector per token.
"""
import keras
from keras import ops

from bert_tf1.modeling.layers.bilstm import BiLSTMTaggingHead
from bert_tf1.modeling.layers.input_checks import encoder_inputs, require_input_dict
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.bert_model import BertModel
from bert_tf1.modeling.models.task import OwnLoss

FEATURE_LAYERS = ("embeddings", "second_to_last", "last", "sum_last_four",
                  "concat_last_four", "sum_all")
#: Encoder layers each choice needs (the embedding output needs none).
_LAYERS_NEEDED = {"embeddings": 0, "second_to_last": 2, "last": 1,
                  "sum_last_four": 4, "concat_last_four": 4, "sum_all": 1}
#: The input key that carries precomputed features instead of token ids.
FEATURES_KEY = "features"


def check_feature_layers(choice, num_hidden_layers):
    """Raises ValueError unless `choice` is one of FEATURE_LAYERS that an
    encoder of `num_hidden_layers` layers can give (e.g. `concat_last_four`
    needs 4)."""
    if choice not in FEATURE_LAYERS:
        raise ValueError(f"unknown feature layers {choice!r}; expected one of "
                         f"{', '.join(FEATURE_LAYERS)}")
    needed = _LAYERS_NEEDED[choice]
    if num_hidden_layers < needed:
        raise ValueError(f"{choice} needs at least {needed} encoder layers, "
                         f"the config has num_hidden_layers="
                         f"{num_hidden_layers}")


def select_features(encoder_output, choice):
    """The activations of `choice` from a `BertModel` output dict.

    Args:
        encoder_output: dict with `embedding_output` and `encoder_outputs`
            (list of float [batch_size, seq_length, hidden_size]).
        choice: one of FEATURE_LAYERS.
    Returns:
        float [batch_size, seq_length, hidden_size] (4 * hidden_size for
        `concat_last_four`).
    """
    layers = encoder_output["encoder_outputs"]
    if choice == "embeddings":
        return encoder_output["embedding_output"]
    if choice == "second_to_last":
        return layers[-2]
    if choice == "last":
        return layers[-1]
    if choice == "concat_last_four":
        return ops.concatenate(layers[::-1][:4], axis=-1)
    chosen = layers[-4:] if choice == "sum_last_four" else layers
    return sum(chosen[1:], chosen[0])


@register
class BertFeatureTagger(OwnLoss, BertConfigSerializable, keras.Model):
    """Frozen `BertModel` -> chosen activations -> BiLSTM -> tag logits.

    The encoder is not trainable and runs without dropout, so callers may
    compute its activations once (`encoder_features`) and feed them back
    under `inputs["features"]`, skipping it (bert_tf1/tasks/tagging_cache.py).

    Weights: the encoder `bert/*` (frozen), and the head
    `cls/tagging_lstm/*` (bert_tf1/modeling/layers/bilstm.py).

    Args:
        config: `BertConfig`.
        num_labels: int >= 1.
        feature_layers: one of FEATURE_LAYERS.
        lstm_units: units per LSTM direction (the paper: 768).
        dropout_rate: the head's dropout.

    Call args:
        inputs: dict with either int32 [batch_size, seq_length] `input_ids`
            (+ `input_mask`, `segment_ids`), or `features` float
            [batch_size, seq_length, width] + `input_mask`.
        training: bool (dropout in the head only).
    Returns:
        float32 logits [batch_size, seq_length, num_labels].

    Raises:
        ValueError: feature_layers unknown or needing more layers than the
            config has.
    """

    def __init__(self, config, num_labels, feature_layers="concat_last_four",
                 lstm_units=768, dropout_rate=0.1, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        check_feature_layers(feature_layers, config.num_hidden_layers)
        self.config = config
        self.num_labels = int(num_labels)
        self.feature_layers = feature_layers
        self.lstm_units = int(lstm_units)
        self.dropout_rate = float(dropout_rate)
        self.bert = BertModel(config, dtype=self.dtype_policy)
        self.bert.trainable = False
        self.head = BiLSTMTaggingHead(
            self.num_labels, self.feature_width, self.lstm_units,
            dropout_rate=self.dropout_rate,
            initializer_range=config.initializer_range,
            dtype=self.dtype_policy)
        self.build()

    @property
    def feature_width(self):
        """int, the width of the features (4 * hidden for the concatenation,
        else hidden)."""
        factor = 4 if self.feature_layers == "concat_last_four" else 1
        return factor * self.config.hidden_size

    def build(self, input_shape=None):
        with keras.name_scope("cls"):
            self.head.build()

    def encoder_features(self, inputs):
        """The frozen encoder's chosen activations (no dropout).

        Args:
            inputs: dict of int32 [batch_size, seq_length] `input_ids`,
                `input_mask`, `segment_ids`.
        Returns:
            float [batch_size, seq_length, feature_width].
        """
        output = self.bert(encoder_inputs(inputs, self), training=False)
        return select_features(output, self.feature_layers)

    def call(self, inputs, training=None):
        require_input_dict(inputs, type(self).__name__)
        if FEATURES_KEY in inputs:
            features = inputs[FEATURES_KEY]
            input_mask = inputs["input_mask"]
        else:
            features = self.encoder_features(inputs)
            input_mask = inputs.get("input_mask")
            if input_mask is None:
                input_mask = ops.ones_like(inputs["input_ids"])
        return self.head(features, input_mask, training=training)

    def task_loss(self, x, y, y_pred, sample_weight):
        """As `BertTokenClassifier.task_loss`."""
        return losses.weighted_tagging_loss(x, y_pred, y, sample_weight)

    def get_config(self):
        config = super().get_config()
        config.update(num_labels=self.num_labels,
                      feature_layers=self.feature_layers,
                      lstm_units=self.lstm_units,
                      dropout_rate=self.dropout_rate)
        return config
