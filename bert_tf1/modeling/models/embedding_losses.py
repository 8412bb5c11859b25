"""Keras losses for training sentence embeddings (`SentenceEmbedder`).

Each takes `y_pred`, the embeddings float [batch, num_texts, hidden] (any
float dtype, computed in float32), and is a `keras.losses.Loss`, so it goes
into `compile(loss=...)` and weighs `sample_weight` as Keras does.
Cosine similarities normalise inside (an L2-normalised embedder's vectors
pass unchanged).

Formulas (written here from their definitions, not copied): the
sentence-transformers losses of the same names
(`sentence_transformers/losses/MultipleNegativesRankingLoss.py`,
`MultipleNegativesSymmetricRankingLoss.py`, `CoSENTLoss.py`,
`CosineSimilarityLoss.py`); CoSENT from Su Jianlin, "CoSENT" (2022);
in-batch negatives from Henderson et al. 2017, "Efficient Natural
Language Response Suggestion for Smart Reply".

In-batch negatives under a `tf.distribute` strategy are PER REPLICA: each
replica ranks its anchors against the positives (and hard negatives) of its
own slice of the batch, nothing is gathered across replicas; the effective
number of negatives is the per-replica batch size. With one device it is
the whole batch.
"""
import keras
import tensorflow as tf

from bert_tf1.modeling.layers.serialization import register


def _embeddings(y_pred, name, num_texts=None):
    """`y_pred` as float32 [batch, num_texts, hidden], rank and (when
    static) the number of texts checked."""
    y_pred = tf.cast(y_pred, tf.float32)
    shape = y_pred.shape
    if shape.rank is not None and shape.rank != 3:
        raise ValueError(
            f"{name} takes embeddings [batch, num_texts, hidden], got shape "
            f"{tuple(shape)}.")
    texts = shape[1] if shape.rank is not None else None
    if texts is not None and num_texts is not None and texts not in num_texts:
        raise ValueError(
            f"{name} takes {' or '.join(map(str, num_texts))} texts per "
            f"example, got embeddings of shape {tuple(shape)}.")
    return y_pred


def cosine_matrix(a, b):
    """Cosine similarities float32 [n, m] of rows a [n, d] and b [m, d]
    (each row divided by max(norm, 1e-6) via `tf.math.l2_normalize`)."""
    a = tf.math.l2_normalize(a, axis=-1)
    b = tf.math.l2_normalize(b, axis=-1)
    return tf.matmul(a, b, transpose_b=True)


def pair_cosine(y_pred):
    """Cosine of the two texts of each example: float32 [batch] from
    embeddings [batch, 2, hidden]."""
    a = tf.math.l2_normalize(y_pred[:, 0], axis=-1)
    b = tf.math.l2_normalize(y_pred[:, 1], axis=-1)
    return tf.reduce_sum(a * b, axis=-1)


@register
class MultipleNegativesRankingLoss(keras.losses.Loss):
    """In-batch negatives (InfoNCE): anchor i's positive is i's own, every
    other example's positive and every hard negative are its negatives.

    Per example i (n = batch, c_j the candidates: all positives, then all
    hard negatives, column by column):
        loss_i = -log softmax_j(scale * cos(anchor_i, c_j))[i]
    symmetric=True adds the positive-to-anchor term and halves the sum:
        loss_i = (loss_i + -log softmax_j(scale * cos(pos_i, anchor_j))[i]) / 2
    The batch loss is Keras' reduction (the mean, or with sample_weight
    sum(w_i * loss_i) / n). Per replica under a strategy (module docstring).

    Args:
        scale: float, the inverse temperature (sentence-transformers' 20).
        symmetric: bool, add the positive-to-anchor direction.
        name, reduction, dtype: as `keras.losses.Loss`.

    Call args:
        y_true: ignored (e.g. zeros [batch]).
        y_pred: float [batch, num_texts >= 2, hidden]; column 0 anchors,
            column 1 positives, columns 2.. hard negatives.

    Returns:
        float32 loss (per example [batch] before Keras' reduction).

    Raises:
        ValueError: y_pred not of rank 3 or with fewer than 2 texts.
    """

    def __init__(self, scale=20.0, symmetric=False,
                 name="multiple_negatives_ranking_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.scale = float(scale)
        self.symmetric = bool(symmetric)

    def call(self, y_true, y_pred):
        y_pred = _embeddings(y_pred, type(self).__name__)
        if y_pred.shape[1] is not None and y_pred.shape[1] < 2:
            raise ValueError(
                f"{type(self).__name__} needs an anchor and a positive per "
                f"example, got embeddings of shape {tuple(y_pred.shape)}.")
        anchors = y_pred[:, 0]
        hidden = tf.shape(y_pred)[-1]
        # [batch * (num_texts - 1), hidden]: positives, then each hard
        # negative column in turn.
        candidates = tf.reshape(
            tf.transpose(y_pred[:, 1:], [1, 0, 2]), [-1, hidden])
        labels = tf.range(tf.shape(y_pred)[0])
        logits = self.scale * cosine_matrix(anchors, candidates)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        if self.symmetric:
            backward = self.scale * cosine_matrix(y_pred[:, 1], anchors)
            loss = (loss + tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels, backward)) / 2.0
        return loss

    def get_config(self):
        return {**super().get_config(), "scale": self.scale,
                "symmetric": self.symmetric}


@register
class CoSENTLoss(keras.losses.Loss):
    """CoSENT: every pair of examples whose scores are ordered should have
    its cosines ordered the same way.

        s_i = scale * cos(text_a_i, text_b_i)
        loss = log(1 + sum over (i, j) with y_i < y_j of exp(s_i - s_j))

    One number per batch (not per example): Keras' reduction of it with a
    `sample_weight` [batch] multiplies it by the weights' mean. Per replica
    under a strategy (pairs are formed inside each replica's slice).

    Args:
        scale: float (sentence-transformers' 20).
        name, reduction, dtype: as `keras.losses.Loss`.

    Call args:
        y_true: float [batch] scores (any range: only their order counts).
        y_pred: float [batch, 2, hidden].

    Returns:
        float32 scalar.

    Raises:
        ValueError: y_pred not [batch, 2, hidden].
    """

    def __init__(self, scale=20.0, name="cosent_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.scale = float(scale)

    def call(self, y_true, y_pred):
        y_pred = _embeddings(y_pred, type(self).__name__, (2,))
        scores = self.scale * pair_cosine(y_pred)
        y_true = tf.reshape(tf.cast(y_true, tf.float32), [-1])
        differences = scores[:, None] - scores[None, :]
        ordered = y_true[:, None] < y_true[None, :]
        # Pairs out of order get -inf: exp() of them is 0; the leading 0
        # is the "1 +" of the formula.
        terms = tf.where(ordered, differences, tf.fill(
            tf.shape(differences), float("-inf")))
        return tf.reduce_logsumexp(tf.concat(
            [tf.zeros([1]), tf.reshape(terms, [-1])], axis=0))

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


@register
class CosineSimilarityLoss(keras.losses.Loss):
    """Regression of the pair's cosine on the score:
    loss_i = (cos(text_a_i, text_b_i) - y_i) ** 2, reduced by Keras (the
    mean squared error without sample_weight).

    Args:
        name, reduction, dtype: as `keras.losses.Loss`.

    Call args:
        y_true: float [batch], scores already in the cosine's range ([0, 1]
            or [-1, 1], as the caller maps them; run_embeddings.py maps
            --score_range to [0, 1]).
        y_pred: float [batch, 2, hidden].

    Returns:
        float32 [batch] per example before Keras' reduction.

    Raises:
        ValueError: y_pred not [batch, 2, hidden].
    """

    def __init__(self, name="cosine_similarity_loss", **kwargs):
        super().__init__(name=name, **kwargs)

    def call(self, y_true, y_pred):
        y_pred = _embeddings(y_pred, type(self).__name__, (2,))
        y_true = tf.reshape(tf.cast(y_true, tf.float32), [-1])
        return tf.square(pair_cosine(y_pred) - y_true)
