"""The sentence embedder: one pooled vector per text from the encoder's last
layer (sentence-transformers' Transformer + Pooling [+ Normalize] modules),
trained with the in-batch or scored-pair losses of `embedding_losses.py`.
"""
import keras
from keras import ops

from bert_tf1.modeling.layers.input_checks import encoder_inputs, positive_count
from bert_tf1.modeling.layers.lora import DEFAULT_TARGETS
from bert_tf1.modeling.layers.serialization import BertConfigSerializable, register
from bert_tf1.modeling.models import gradient_cache
from bert_tf1.modeling.models.multiple_choice import flatten_choices
from bert_tf1.modeling.models.task import TaskModel
from bert_tf1.modeling.pooling import POOLINGS, pool_sequence


@register
class SentenceEmbedder(TaskModel, BertConfigSerializable, keras.Model):
    """Sentence embeddings: `pool_sequence` over the last layer's tokens.

    Weights: the encoder only (`bert/...`, TF1 names; the pooler is kept
    but unused and frozen, so a classifier's or the original's checkpoint
    loads and saves unchanged).

    Args:
        config, encoder, preprocessor: see `TaskModel`.
        pooling: "mean" (default, all-MiniLM-L6-v2's), "cls" or "max"
            (`bert_tf1.modeling.pooling.pool_sequence`).
        l2_normalize: bool, divide each vector by its L2 norm.
        mini_batch_size: None, or an int >= 1: `fit` trains with gradient
            caching (`gradient_cache.cached_train_step`: the batch embedded
            in chunks of this many examples, the loss on all embeddings,
            then backward chunk by chunk with the same dropout masks), so
            large in-batch-negative batches fit in memory. The gradients
            are those of the whole batch at once.

    Call args:
        inputs: dict of int32 `input_ids`, `input_mask`, `segment_ids`,
            either [batch, seq_length] (one text per example) or
            [batch, num_texts, seq_length] (the texts of one example:
            anchor, positive[, hard negative], or a scored pair).
        training: bool; enables the encoder's dropout.

    Returns:
        float32 [batch, hidden_size], or [batch, num_texts, hidden_size]
        for rank-3 inputs.

    Raises:
        ValueError: an unknown pooling, mini_batch_size < 1, or
            `input_ids` of rank other than 2 or 3.

    In `fit`, dropout draws depend on the seeds and the batch number only
    (`gradient_cache.seed_dropout_for_batch`), so a run resumed from a
    checkpoint trains as the uninterrupted run did.

    Compile it with a loss of `bert_tf1.modeling.models.embedding_losses`
    (which take [batch, num_texts, hidden] embeddings); without `y`, `fit`
    passes zeros as the (ignored) labels of the in-batch loss.

    Source: sentence-transformers `SentenceTransformer` (Transformer,
    Pooling, Normalize modules); gradient caching from Gao et al. 2021,
    "Scaling Deep Contrastive Learning Batch Size under Memory Limited
    Setup", as in sentence-transformers' CachedMultipleNegativesRankingLoss.
    """

    def __init__(self, config=None, pooling="mean", l2_normalize=False,
                 mini_batch_size=None, encoder=None, preprocessor=None,
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if pooling not in POOLINGS:
            raise ValueError(f"SentenceEmbedder pooling {pooling!r}; expected "
                             f"one of {', '.join(POOLINGS)}.")
        self._init_encoder(config, encoder, preprocessor)
        if encoder is None:
            # The pooler is unused: frozen, so `fit` warns of no missing
            # gradients (a shared `encoder=` is left as it is).
            self.bert.pooler.trainable = False
        self.pooling = pooling
        self.l2_normalize = bool(l2_normalize)
        self.mini_batch_size = (None if mini_batch_size is None else
                                positive_count(mini_batch_size,
                                               "mini_batch_size"))
        self.build()

    def call(self, inputs, training=None):
        inputs = encoder_inputs(inputs, self)
        input_ids = inputs["input_ids"]
        rank = len(input_ids.shape)
        if rank not in (2, 3):
            raise ValueError(
                f"SentenceEmbedder input `input_ids` has shape "
                f"{tuple(input_ids.shape)}; expected [batch, seq_length] or "
                "[batch, num_texts, seq_length].")
        if rank == 3:
            num_texts = ops.shape(input_ids)[1]
            inputs = {key: flatten_choices(value)
                      for key, value in inputs.items()}
        input_mask = inputs.get("input_mask")
        if input_mask is None:
            input_mask = ops.ones_like(inputs["input_ids"])
        sequence_output = self.bert(inputs, training=training)[
            "sequence_output"]
        pooled = pool_sequence(sequence_output, input_mask, self.pooling,
                               self.l2_normalize)
        if rank == 3:
            pooled = ops.reshape(
                pooled, (-1, num_texts, self.config.hidden_size))
        return pooled

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        """The compiled loss; `y` None becomes zeros [batch] (the in-batch
        loss ignores it), so `fit(x)` needs no labels."""
        if y is None and getattr(self, "loss", None) is not None \
                and y_pred is not None:
            y = ops.zeros((ops.shape(y_pred)[0],), "float32")
        return super().compute_loss(x, y, y_pred, sample_weight,
                                    training=training)

    def task_loss(self, x, y, y_pred, sample_weight):
        raise ValueError(
            "SentenceEmbedder has no loss of its own: compile it with one of "
            "bert_tf1.modeling.models.embedding_losses (e.g. loss="
            "MultipleNegativesRankingLoss()).")

    def train_step(self, data):
        """Keras' train step, or with `mini_batch_size` set the
        gradient-caching one (`gradient_cache.cached_train_step`); dropout
        draws as a function of the batch number
        (`gradient_cache.seed_dropout_for_batch`: resumed runs are exact)."""
        gradient_cache.seed_dropout_for_batch(self)
        if self.mini_batch_size is None:
            return super().train_step(data)
        return gradient_cache.cached_train_step(self, data,
                                                self.mini_batch_size)

    def enable_lora(self, rank, alpha=None, targets=DEFAULT_TARGETS):
        """`TaskModel.enable_lora`; the unused pooler stays frozen."""
        pooler_trainable = self.bert.pooler.trainable
        super().enable_lora(rank, alpha, targets)
        self.bert.pooler.trainable = pooler_trainable

    def get_config(self):
        return {**super().get_config(), "pooling": self.pooling,
                "l2_normalize": self.l2_normalize,
                "mini_batch_size": self.mini_batch_size}
