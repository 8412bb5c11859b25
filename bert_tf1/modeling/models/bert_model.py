"""`BertModel`: the BERT encoder with the original's weight layout; every
weight path is `<model name>/<TF1 variable name>` (`bert_tf1/modeling/naming.py`),
built at construction.
"""
import keras
from keras import ops

from bert_tf1.modeling.layers.attention import attention_bias_from_mask
from bert_tf1.modeling.config import BertConfig
from bert_tf1.modeling.layers.embeddings import BertEmbeddings
from bert_tf1.modeling.layers.initializers import create_initializer
from bert_tf1.modeling.layers.input_checks import check_encoder_inputs, require_input_dict
from bert_tf1.modeling.layers.lora import LoraMixin
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register
from bert_tf1.modeling.layers.transformer import TransformerLayer
from bert_tf1.modeling.models.pretrained import FromCheckpoint


@register
class BertEncoder(BertConfigSerializable, keras.layers.Layer):
    """The stack of `num_hidden_layers` transformer layers (scope `encoder`).

    Call args:
        hidden_states: float [batch_size, seq_length, hidden_size].
        attention_bias: float [batch_size, 1, 1, seq_length].
    Returns:
        list of num_hidden_layers float [batch_size, seq_length, hidden_size].
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "encoder")
        super().__init__(**kwargs)
        self.config = config
        self.transformer_layers = [
            TransformerLayer(config, name=f"layer_{i}", dtype=self.dtype_policy)
            for i in range(config.num_hidden_layers)]

    def build(self, input_shape):
        for layer in self.transformer_layers:
            layer.build(input_shape)

    def call(self, hidden_states, attention_bias, training=None):
        outputs = []
        for layer in self.transformer_layers:
            hidden_states = layer(hidden_states, attention_bias, training=training)
            outputs.append(hidden_states)
        return outputs


@register
class BertPooler(BertConfigSerializable, keras.layers.Layer):
    """`dense` with tanh on the first token (scope `pooler`); no dropout.

    Call args: sequence_output float [batch_size, seq_length, hidden_size].
    Returns: float [batch_size, hidden_size].
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "pooler")
        super().__init__(**kwargs)
        self.config = config
        self.dense = keras.layers.Dense(
            config.hidden_size, activation="tanh",
            kernel_initializer=create_initializer(config.initializer_range),
            name="dense", dtype=self.dtype_policy)

    def build(self, input_shape):
        self.dense.build((input_shape[0], input_shape[-1]))

    def call(self, sequence_output):
        return self.dense(sequence_output[:, 0, :])


@register
class BertModel(LoraMixin, FromCheckpoint, BertConfigSerializable, keras.Model):
    """BERT encoder (Devlin et al. 2018, section 3), the original `BertModel`.

    Args:
        config: a `BertConfig`.
        name: Keras model name; the first component of every weight path.

    `enable_lora(rank, alpha=None, targets=("query", "value"))` adds LoRA
    adapters (`bert_tf1/modeling/layers/lora.py`) and freezes the rest of the encoder
    but the pooler.

    Call args:
        inputs: dict with `input_ids` int32 [batch_size, seq_length] and,
            optionally, `input_mask` (1 real, 0 padding; default all ones) and
            `segment_ids` (default all zeros), int32 [batch_size, seq_length].
        training: bool; True enables dropout (the original's `is_training`).

    Returns:
        dict with
        - `sequence_output`: float [batch_size, seq_length, hidden_size], the
          last layer;
        - `pooled_output`: float [batch_size, hidden_size], tanh(dense) of the
          first token;
        - `encoder_outputs`: list of num_hidden_layers float
          [batch_size, seq_length, hidden_size];
        - `embedding_output`: float [batch_size, seq_length, hidden_size].

    Raises:
        TypeError: `config` is not a `BertConfig`.
        KeyError: `input_ids` is missing from the inputs.
        ValueError: `input_ids` is not [batch_size, seq_length], `input_mask`
            or `segment_ids` has another shape, or the sequence is longer
            than `max_position_embeddings` (see
            `bert_tf1/modeling/layers/input_checks.py`; the message names the input, its shape and what is expected).

    Source: `BertModel` in the original `modeling.py`; the math (tanh gelu,
    LayerNorm epsilon 1e-12, -10000 on masked attention logits, dropout
    places, truncated-normal init) is the same.
    """

    def __init__(self, config, name=None, **kwargs):
        if not isinstance(config, BertConfig):
            raise TypeError(
                f"BertModel needs a BertConfig, got {type(config).__name__}; use "
                "BertConfig.from_json_file('bert_config.json').")
        super().__init__(name=name, **kwargs)
        self.config = config
        dtype = self.dtype_policy
        self.embeddings = BertEmbeddings(config, name="embeddings", dtype=dtype)
        self.encoder = BertEncoder(config, name="encoder", dtype=dtype)
        self.pooler = BertPooler(config, name="pooler", dtype=dtype)
        self.build()

    def build(self, input_shape=None):
        hidden_shape = (None, None, self.config.hidden_size)
        # The original's variable scope; it makes every path
        # `<model name>/bert/...`.
        with keras.name_scope("bert"):
            self.embeddings.build((None, None))
            self.encoder.build(hidden_shape)
            self.pooler.build(hidden_shape)

    @property
    def embedding_table(self):
        """`bert/embeddings/word_embeddings`, [vocab_size, hidden_size]."""
        return self.embeddings.word_embeddings

    def call(self, inputs, training=None):
        require_input_dict(inputs, type(self).__name__)
        if "input_ids" not in inputs:
            raise KeyError(
                "BertModel inputs need `input_ids`; got keys "
                f"{sorted(inputs)}.")
        input_ids = check_encoder_inputs(inputs, self.config)
        input_mask = inputs.get("input_mask")
        if input_mask is None:
            input_mask = ops.ones_like(input_ids)
        segment_ids = inputs.get("segment_ids")
        if segment_ids is None:
            segment_ids = ops.zeros_like(input_ids)
        embedding_output = self.embeddings(input_ids, segment_ids, training=training)
        attention_bias = attention_bias_from_mask(
            input_mask, dtype=embedding_output.dtype)
        encoder_outputs = self.encoder(
            embedding_output, attention_bias, training=training)
        sequence_output = encoder_outputs[-1]
        return {
            "sequence_output": sequence_output,
            "pooled_output": self.pooler(sequence_output),
            "encoder_outputs": encoder_outputs,
            "embedding_output": embedding_output,
        }
