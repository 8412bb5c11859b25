"""The original modeling.BertModel interface, run eagerly.

Code written against google-research/bert's modeling.py builds its model
as modeling.BertModel(config=..., is_training=..., input_ids=...) and
reads `get_pooled_output()` and its siblings; here the same calls compute
the outputs at once with our Keras `bert_tf1.modeling.BertModel`
(docs/coming_from_the_original.md):

    from bert_tf1 import compat
    from bert_tf1.modeling import BertConfig

    model = compat.BertModel(config=BertConfig.from_json_file(path),
                             is_training=False, input_ids=ids)
    pooled = model.get_pooled_output()
"""
from bert_tf1.modeling import BertModel as KerasBertModel


class BertModel:
    """The original modeling.BertModel: built from the inputs, the
    outputs read through its getters.

    Args:
        config: `bert_tf1.modeling.BertConfig`.
        is_training: bool; True applies dropout (the original set the
            dropout rates to 0 otherwise), as Keras' `training`.
        input_ids: int32 [batch_size, seq_length].
        input_mask: optional int32 [batch_size, seq_length] (default: ones).
        token_type_ids: optional int32 [batch_size, seq_length] (default:
            zeros); our `segment_ids`.
        use_one_hot_embeddings: accepted for the original's signature; a
            TPU speed choice with no meaning here.
        scope: accepted for the original's signature; the weights' names
            are always the original's `bert/...`.
        encoder: optional existing `bert_tf1.modeling.BertModel` (e.g. one
            `bert_tf1.modeling.checkpoints.load_tf1_checkpoint` filled);
            default: a new one, randomly initialised, as the original's
            before `init_from_checkpoint`.

    Attributes:
        encoder: the Keras `BertModel` that computed the outputs.
    """

    def __init__(self, config, is_training, input_ids, input_mask=None,
                 token_type_ids=None, use_one_hot_embeddings=False,
                 scope=None, encoder=None):
        del use_one_hot_embeddings, scope  # the original's; no use here
        self.encoder = encoder if encoder is not None else KerasBertModel(
            config)
        inputs = {"input_ids": input_ids}
        if input_mask is not None:
            inputs["input_mask"] = input_mask
        if token_type_ids is not None:
            inputs["segment_ids"] = token_type_ids
        self._outputs = self.encoder(inputs, training=bool(is_training))

    def get_pooled_output(self):
        """float [batch_size, hidden_size]: tanh(dense) of the first token."""
        return self._outputs["pooled_output"]

    def get_sequence_output(self):
        """float [batch_size, seq_length, hidden_size]: the last layer."""
        return self._outputs["sequence_output"]

    def get_all_encoder_layers(self):
        """list of num_hidden_layers float [batch_size, seq_length,
        hidden_size]."""
        return list(self._outputs["encoder_outputs"])

    def get_embedding_output(self):
        """float [batch_size, seq_length, hidden_size]: the embeddings after
        LayerNorm and dropout, the transformer's input."""
        return self._outputs["embedding_output"]

    def get_embedding_table(self):
        """`bert/embeddings/word_embeddings`, [vocab_size, hidden_size]."""
        return self.encoder.embedding_table
