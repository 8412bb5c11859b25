"""One vector per sequence from a BERT layer's token vectors (sentence
embeddings), for extract_features.py and the encoder export's `embed_text`.

Source: sentence-transformers `models.Pooling` (mean over the real tokens,
`[CLS]`/`[SEP]` included; max with padding masked; cls token) and
`models.Normalize` (L2, norm at least 1e-12).
"""
import tensorflow as tf

#: The pooling modes (`none` is extract_features.py's per-token output).
POOLINGS = ("mean", "cls", "max")


def pool_sequence(sequence_output, input_mask, pooling, l2_normalize=False):
    """Pools token vectors into one vector per sequence.

    Args:
        sequence_output: float tensor [batch, seq_length, hidden] (any float
            dtype; computed in float32).
        input_mask: int or bool tensor [batch, seq_length], 1 for real
            tokens.
        pooling: "mean", "cls" or "max".
        l2_normalize: divide each vector by its L2 norm.

    Returns:
        float32 tensor [batch, hidden]. A row without real tokens pools to
        zeros (mean) or to the masked value -1e9 (max).

    Raises:
        ValueError: an unknown `pooling`.
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling {pooling!r}; expected one of "
                         f"{', '.join(POOLINGS)}")
    values = tf.cast(sequence_output, tf.float32)
    # expand_dims: a new_axis strided slice is no LiteRT builtin op.
    mask = tf.expand_dims(tf.cast(input_mask, tf.float32), -1)
    if pooling == "cls":
        pooled = values[:, 0]
    elif pooling == "mean":
        pooled = tf.reduce_sum(values * mask, axis=1) / tf.maximum(
            tf.reduce_sum(mask, axis=1), 1e-9)
    else:
        pooled = tf.reduce_max(values * mask + (1.0 - mask) * -1e9, axis=1)
    if l2_normalize:
        norm = tf.norm(pooled, axis=-1, keepdims=True)
        pooled = pooled / tf.maximum(norm, 1e-12)
    return pooled
