"""Batches cut to their longest example, and training batches of similar length.

The record files keep the original fixed layout ([..., max_seq_length] per
example); these tf.data steps run after parsing, on whole batches:

- `cut_to_longest` (a `Dataset.map` function): every tensor of a batch whose
  last axis is the sequence axis ([batch, seq] or [batch, num_choices, seq])
  is cut to `padded_length` of the batch's longest real example (the most
  ones of any `input_mask` row), rounded up to a multiple of `MULTIPLE`.
  BERT's attention never reads a padded position (its mask adds -10000 to
  their scores, which float32 softmax turns into exactly 0), so the real
  positions' outputs are those of the fixed layout up to float rounding.
- `group_by_length`: training batches drawn from length-sorted stretches
  of the (repeating, shuffled) example stream, Hugging Face's
  `group_by_length` recipe (its `LengthGroupedSampler`): each stretch of
  `MEGABATCH` batches is sorted by real length, cut into batches, and the
  stretch's batches are shuffled. A stretch is a permutation of the stream's
  examples in the same positions, so every example is drawn exactly as often as
  without it (once per epoch) and no example waits for a bucket to fill.
  (`tasks/tagging_cache.py`'s feature-based tagger uses
  `bucket_by_sequence_length` instead: there a window of a rare length can
  wait in its bucket for several epochs, which its frozen-feature BiLSTM
  training accepts.)

Source: none in the original (it always pads to max_seq_length); the
multiple of 8 keeps shapes few (tf.function traces) and tensor-core
friendly.
"""
import tensorflow as tf

__all__ = ["MULTIPLE", "MEGABATCH", "padded_length", "real_lengths",
           "cut_to_longest", "group_by_length", "pad_to_length"]

#: Cut lengths are multiples of this (at least this, at most max_seq_length).
MULTIPLE = 8
#: Batches per length-sorted stretch of `group_by_length` (Hugging Face's 50).
MEGABATCH = 50


def padded_length(longest, seq_length, multiple=MULTIPLE):
    """`longest` rounded up to a multiple of `multiple`, at least `multiple`,
    at most `seq_length` (int or scalar int32 tensor)."""
    rounded = (longest + multiple - 1) // multiple * multiple
    return tf.minimum(tf.maximum(rounded, multiple), seq_length)


def real_lengths(input_mask):
    """Real tokens per example: int32 [batch] from int input_mask
    [batch, seq] or [batch, num_choices, seq] (the most of any choice)."""
    counts = tf.reduce_sum(tf.cast(tf.not_equal(input_mask, 0), tf.int32),
                           axis=-1)
    return tf.reduce_max(tf.reshape(counts, [tf.shape(counts)[0], -1]),
                         axis=1)


def _inputs(element):
    return element[0] if isinstance(element, tuple) else element


def cut_to_longest(seq_length, mask_key="input_mask"):
    """A `Dataset.map` function cutting a batch to its longest example.

    Args:
        seq_length: int, the records' max_seq_length.
        mask_key: the features key whose ones mark real tokens.

    Returns:
        function of a batch element, `features` or `(features, ...)` with
        `features` a dict holding `mask_key`, to the same structure where
        every tensor of rank >= 2 whose static last axis is `seq_length`
        (inputs, per-token labels and weights) is cut along that axis to
        `padded_length(longest real example, seq_length)`; other tensors
        (per-example labels, ids) are unchanged.
    """
    def cut(*element):
        element = element[0] if len(element) == 1 else element
        length = padded_length(
            tf.reduce_max(real_lengths(_inputs(element)[mask_key])),
            seq_length)

        def cut_one(tensor):
            if tensor.shape.rank >= 2 and tensor.shape[-1] == seq_length:
                return tensor[..., :length]
            return tensor

        return tf.nest.map_structure(cut_one, element)

    return cut


def group_by_length(dataset, batch_size, seq_length, seed=None,
                    mask_key="input_mask", megabatch=MEGABATCH):
    """Training batches of similar real length, cut to their longest.

    Args:
        dataset: repeating stream of training batches of `batch_size`
            (already shuffled as the task shuffles), fixed layout.
        batch_size: int.
        seq_length: int, the records' max_seq_length.
        seed: optional seed of the batch shuffle.
        mask_key: as `cut_to_longest`.
        megabatch: batches per length-sorted stretch.

    Returns:
        The stream re-batched: each stretch of `megabatch` batches sorted
        by real length (stable) and cut into batches of `batch_size`, the
        stretch's batches in random order, each cut by `cut_to_longest`.
        Stretch k holds exactly the examples of `dataset`'s batches
        k * megabatch .. (k + 1) * megabatch - 1.
    """
    def sort_by_length(*element):
        element = element[0] if len(element) == 1 else element
        order = tf.argsort(real_lengths(_inputs(element)[mask_key]),
                           stable=True)
        # The stretch's batches (consecutive runs of the sorted order) in
        # random order, so no batch leaves its stretch.
        runs = tf.reshape(order, [megabatch, batch_size])
        order = tf.reshape(tf.random.shuffle(runs, seed=seed), [-1])
        return tf.nest.map_structure(lambda t: tf.gather(t, order), element)

    stream = dataset.unbatch().batch(batch_size * megabatch,
                                     drop_remainder=True)
    stream = stream.map(sort_by_length).unbatch()
    stream = stream.batch(batch_size, drop_remainder=True)
    return stream.map(cut_to_longest(seq_length, mask_key),
                      num_parallel_calls=tf.data.AUTOTUNE).prefetch(
                          tf.data.AUTOTUNE)


def pad_to_length(tensor, seq_length, axis=1, value=0):
    """`tensor` padded with `value` at the end of `axis` to `seq_length` (a
    tensor already that long is returned as it is)."""
    missing = seq_length - tf.shape(tensor)[axis]
    paddings = [[0, 0]] * tensor.shape.rank
    paddings[axis] = [0, missing]
    return tf.pad(tensor, paddings, constant_values=tf.cast(value, tensor.dtype))
