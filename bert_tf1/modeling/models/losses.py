"""The original scripts' losses, as functions of log-probabilities or logits.

Each is defined once per example (`per_example_*`, Keras ops); the training
losses are their weighted means, and evaluation reuses the same
definitions. Dtypes are kept, except where the original casts logits to
float32 first.
"""
from keras import ops, tree


def per_example_log_prob_loss(log_probs, labels):
    """-log p(label) for each row.

    Args:
        log_probs: float [..., num_classes] (any float dtype, kept).
        labels: int [...], class ids.
    Returns:
        float [...], the cross-entropy of each example.
    """
    labels = ops.cast(labels, "int32")
    return -ops.squeeze(
        ops.take_along_axis(log_probs, labels[..., None], axis=-1), axis=-1)


def per_example_classifier_loss(logits, label_ids):
    """Softmax cross-entropy of each row of `logits` [batch_size, num_labels].

    Returns:
        float32 [batch_size]. Source: `create_model` in the original
        `run_classifier.py` (`per_example_loss`).
    """
    log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
    return per_example_log_prob_loss(log_probs, ops.reshape(label_ids, (-1,)))


def per_example_regression_loss(predictions, labels):
    """Squared error of each example.

    Args: predictions float [batch_size, 1] or [batch_size]; labels float
    [batch_size]. Returns float32 [batch_size].
    """
    predictions = ops.reshape(ops.cast(predictions, "float32"), (-1,))
    labels = ops.reshape(ops.cast(labels, "float32"), (-1,))
    return ops.square(predictions - labels)


def masked_lm_loss(masked_lm_log_probs, masked_lm_ids, masked_lm_weights,
                   sample_weight=None):
    """Weighted mean masked-LM cross-entropy, each example optionally weighted.

    Args:
        masked_lm_log_probs: float [batch_size, num_predictions, vocab_size].
        masked_lm_ids: int [batch_size, num_predictions], the original ids.
        masked_lm_weights: float [batch_size, num_predictions], 1 real, 0 padding.
        sample_weight: float [batch_size] (or [batch_size, num_predictions]),
            or None.
    Returns:
        float32 scalar: sum(sample_weight * weight * -log p) / (sum(weight)
        + 1e-5); the original's normaliser (the number of real predictions)
        is kept, so all-ones sample weights give the unweighted loss,
        all-zero 0.

    Source: `get_masked_lm_output` in the original `run_pretraining.py`.
    """
    per_prediction = per_example_log_prob_loss(masked_lm_log_probs,
                                               masked_lm_ids)
    token_weights = ops.cast(masked_lm_weights, per_prediction.dtype)
    weights = token_weights
    if sample_weight is not None:
        sample_weight = ops.cast(_one_weight(sample_weight), weights.dtype)
        if len(sample_weight.shape) == 1:
            sample_weight = sample_weight[:, None]
        weights = token_weights * sample_weight
    return ops.sum(weights * per_prediction) / (ops.sum(token_weights) + 1e-5)


def next_sentence_loss(next_sentence_log_probs, next_sentence_labels,
                       sample_weight=None):
    """Mean next-sentence cross-entropy (`weighted_batch_mean`).

    Args:
        next_sentence_log_probs: float [batch_size, 2].
        next_sentence_labels: int [batch_size] or [batch_size, 1].
        sample_weight: float [batch_size] or None.
    Returns:
        float32 scalar.
    Source: `get_next_sentence_output` in the original `run_pretraining.py`.
    """
    labels = ops.reshape(next_sentence_labels, (-1,))
    return weighted_batch_mean(
        per_example_log_prob_loss(next_sentence_log_probs, labels),
        sample_weight)


def classifier_loss(logits, label_ids, sample_weight=None):
    """Mean softmax cross-entropy of `logits` [batch_size, num_labels], each
    example weighted by `sample_weight` [batch_size] if given
    (`weighted_batch_mean`).

    Source: `create_model` in the original `run_classifier.py`.
    """
    return weighted_batch_mean(per_example_classifier_loss(logits, label_ids),
                               sample_weight)


def squad_loss(start_logits, end_logits, start_positions, end_positions,
               sample_weight=None):
    """Mean of the start and end cross-entropies over all positions.

    Args:
        start_logits, end_logits: float [batch_size, seq_length].
        start_positions, end_positions: int [batch_size].
        sample_weight: float [batch_size] or None; each example's (start +
            end) / 2 is then weighted under Keras' reduction
            (`weighted_batch_mean`).
    Returns:
        float32 scalar.
    Source: `model_fn` in the original `run_squad.py`.
    """
    start = per_example_classifier_loss(start_logits, start_positions)
    end = per_example_classifier_loss(end_logits, end_positions)
    if sample_weight is None:
        return (ops.mean(start) + ops.mean(end)) / 2.0
    return weighted_batch_mean((start + end) / 2.0, sample_weight)


def scale_for_replicas(loss):
    """Divides a per-replica mean loss by the number of replicas in sync
    (`tf.distribute` sums gradients; the original's `CrossShardOptimizer`).
    """
    import tensorflow as tf

    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    if replicas > 1:
        loss = loss * (1.0 / replicas)
    return loss


def _one_weight(sample_weight):
    """The per-example weights (`fit` repeats one array per key of a dict `y`)."""
    if isinstance(sample_weight, (dict, list, tuple)):
        return tree.flatten(sample_weight)[0]
    return sample_weight


def weighted_batch_mean(per_example, sample_weight=None):
    """Keras' default reduction ("sum_over_batch_size") of per-example losses.

    Args:
        per_example: float [batch_size].
        sample_weight: float [batch_size] (or [batch_size, 1]), or None.
    Returns:
        scalar of per_example's dtype: mean(per_example) when sample_weight is
        None, else sum(sample_weight * per_example) / batch_size (all-zero
        weights give 0; all-ones give the mean).
    """
    if sample_weight is None:
        return ops.mean(per_example)
    # [batch_size] of a `sample_weight` [batch_size] or [batch_size, 1].
    weights = ops.reshape(ops.cast(_one_weight(sample_weight),
                                   per_example.dtype), (-1,))
    batch_size = ops.cast(ops.shape(per_example)[0], per_example.dtype)
    return ops.sum(per_example * weights) / batch_size


def weighted_tagging_loss(x, y_pred, y, sample_weight=None):
    """Mean cross-entropy over the scored tokens, each example weighted.

    Args:
        x: the model's input dict; its `label_weights` float [batch_size,
            seq_length] is 1 at each word's first word piece in the window
            that scores it, 0 elsewhere (all ones if absent).
        y_pred: float logits [batch_size, seq_length, num_labels].
        y: int label_ids [batch_size, seq_length].
        sample_weight: float [batch_size] (per example; [batch_size,
            seq_length] multiplies per token), or None.
    Returns:
        float32 scalar: sum(sample_weight * label_weights * -log p(label))
        / (sum(label_weights) + 1e-5), so a batch without scored tokens
        gives 0.

    Source: BERT paper §5.3 (the first piece of each word is classified);
    the weighting is the original `get_masked_lm_output`'s.
    """
    label_weights = None if x is None else x.get(LABEL_WEIGHTS_KEY)
    if label_weights is None:
        label_weights = ops.ones_like(y, dtype="float32")
    log_probs = ops.log_softmax(ops.cast(y_pred, "float32"), axis=-1)
    return masked_lm_loss(log_probs, y, label_weights, sample_weight)


#: The taggers' input key for the scored-token mask (`weighted_tagging_loss`).
LABEL_WEIGHTS_KEY = "label_weights"
