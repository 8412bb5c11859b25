"""Batches cut to their longest example, and training batches of similar length.

`PaddingInputExample` fills the last batch on TPU (zero features, weight 0).
`cut_to_longest` cuts a batch's sequence axis to its longest real example
rounded up to `MULTIPLE` (padded positions contribute exactly 0);
`group_by_length` is Hugging Face's `LengthGroupedSampler` recipe. Source:
none in the original (it always pads to max_seq_length).
"""
import tensorflow as tf

#: Cut lengths are multiples of this (at least this, at most max_seq_length).
MULTIPLE = 8
#: Batches per length-sorted stretch of `group_by_length` (Hugging Face's 50).
MEGABATCH = 50


class PaddingInputExample:
    """A fake example padding a set to a multiple of a batch (all-zero
    features, `is_real_example=False`); classifier and multiple-choice.

    Source: run_classifier.py `PaddingInputExample`.
    """


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


def cut_to_longest(seq_length):
    """A `Dataset.map` function cutting a batch to its longest example.

    Returns:
        function of a batch element (`features` or `(features, ...)`, with
        "input_mask" in `features`) cutting every tensor of rank >= 2 whose
        static last axis is `seq_length` to `padded_length(longest)`.
    """
    @tf.autograph.experimental.do_not_convert  # no tensor control flow
    def cut(*element):
        element = element[0] if len(element) == 1 else element
        length = padded_length(
            tf.reduce_max(real_lengths(_inputs(element)["input_mask"])),
            seq_length)

        def cut_one(tensor):
            if tensor.shape.rank >= 2 and tensor.shape[-1] == seq_length:
                return tensor[..., :length]
            return tensor

        return tf.nest.map_structure(cut_one, element)

    return cut


def group_by_length(dataset, batch_size, seq_length, seed=None,
                    megabatch=MEGABATCH):
    """Training batches of similar real length, cut to their longest.

    Args:
        dataset: repeating, shuffled stream of fixed-layout batches.
        batch_size, seq_length: ints.
        seed: optional seed of the batch shuffle.
        megabatch: batches per length-sorted stretch.

    Returns:
        The stream re-batched; stretch k holds exactly the examples of
        `dataset`'s batches k * megabatch .. (k + 1) * megabatch - 1.
    """
    @tf.autograph.experimental.do_not_convert  # no tensor control flow
    def sort_by_length(*element):
        element = element[0] if len(element) == 1 else element
        order = tf.argsort(real_lengths(_inputs(element)["input_mask"]),
                           stable=True)
        # The stretch's batches in random order.
        runs = tf.reshape(order, [megabatch, batch_size])
        order = tf.reshape(tf.random.shuffle(runs, seed=seed), [-1])
        return tf.nest.map_structure(lambda t: tf.gather(t, order), element)

    stream = dataset.unbatch().batch(batch_size * megabatch,
                                     drop_remainder=True)
    stream = stream.map(sort_by_length).unbatch()
    stream = stream.batch(batch_size, drop_remainder=True)
    return stream.map(cut_to_longest(seq_length),
                      num_parallel_calls=tf.data.AUTOTUNE).prefetch(
                          tf.data.AUTOTUNE)


def pad_to_length(tensor, seq_length, axis=1, value=0):
    """`tensor` padded with `value` at the end of `axis` to `seq_length` (a
    tensor already that long is returned as it is)."""
    missing = seq_length - tf.shape(tensor)[axis]
    paddings = [[0, 0]] * tensor.shape.rank
    paddings[axis] = [0, missing]
    return tf.pad(tensor, paddings, constant_values=tf.cast(value, tensor.dtype))
