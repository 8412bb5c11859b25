"""BERT's word boundaries with character offsets, inside the graph.

`InGraphWordSplitter(do_lower_case)`: tf.string [batch] -> the words
`BasicTokenizer` makes, each as the input's substring with code-point and
byte offsets. Every code point gets a class from Python's tables
(unicode_tables): TRANSPARENT (deleted by `_clean_text`: splits nothing),
MARK (lower-casing only: vanishes with accent stripping; joins the word
before it), SPACE, OWN (CJK and punctuation: a word by itself), OTHER (runs
form words). A word's substring tokenized alone gives one basic token
(except where Python's final-sigma rule looks across punctuation); a Python
whose tables would split one character into several tokens raises
NotImplementedError. Source: tokenization.py BasicTokenizer (offsets: own
code).
"""
import functools

import numpy as np
import tensorflow as tf

from bert_tf1.data.tokenization import unicode_tables
from bert_tf1.data.tokenization.full_tokenizer import BasicTokenizer

OTHER, SPACE, OWN, TRANSPARENT, MARK = 0, 1, 2, 3, 4


@functools.lru_cache(maxsize=None)
def word_classes(do_lower_case):
    """The class of every code point (module docstring).

    Returns:
      numpy int8 array of length 0x110000 (surrogates: OTHER).

    Raises:
      NotImplementedError: a character lower-casing to several tokens or a
        space (no Python up to 3.13 has one).
    """
    classes = np.zeros(unicode_tables.MAX_CODE_POINT + 1, dtype=np.int8)
    own = set(unicode_tables.punctuation_code_points())
    if do_lower_case:
        punctuation = unicode_tables.punctuation_code_points()
        spaces = unicode_tables.space_code_points()
        # Joined by "\n", the characters are transformed independently.
        cps = [cp for cp in unicode_tables._joinable_code_points()
               if cp not in spaces]
        # BasicTokenizer's lower-casing and accent stripping, one pass.
        text = BasicTokenizer()._run_strip_accents(
            "\n".join(map(chr, cps)).lower())
        for cp, out in zip(cps, text.split("\n")):
            if out == chr(cp):
                continue
            own.discard(cp)
            if not out:
                classes[cp] = MARK
            elif any(ord(c) in punctuation for c in out):
                if len(out) != 1:
                    raise NotImplementedError(
                        "U+%04X lower-cases to %r, more than one token: not "
                        "supported by the in-graph word splitter" % (cp, out))
                own.add(cp)
            elif any(c.isspace() for c in out):
                raise NotImplementedError(
                    "U+%04X lower-cases to %r, which holds a space" % (cp, out))
    for cp in own:
        classes[cp] = OWN
    for cp in unicode_tables.cjk_code_points():
        classes[cp] = OWN
    for cp in unicode_tables.space_code_points():
        classes[cp] = SPACE
    for cp in unicode_tables.deleted_code_points():
        classes[cp] = TRANSPARENT
    return classes


def _runs(classes):
    """(starts, values): classes[cp] == values[i] for starts[i] <= cp <
    starts[i + 1]; starts[0] == 0."""
    change = np.flatnonzero(np.diff(classes)) + 1
    starts = np.concatenate([[0], change]).astype(np.int32)
    return starts, classes[starts].astype(np.int32)


def _utf8_length(code_points):
    """Bytes of each code point in UTF-8 (int32 tensor in, int32 out)."""
    return (1 + tf.cast(code_points >= 0x80, tf.int32)
            + tf.cast(code_points >= 0x800, tf.int32)
            + tf.cast(code_points >= 0x10000, tf.int32))


class InGraphWordSplitter(tf.Module):
    """Raw text -> BasicTokenizer's words with offsets, in-graph.

    Call: `splitter(texts)`, tf.string [batch] (invalid UTF-8 skipped) ->
    dict of tf.RaggedTensor [batch, (words)]: `words` tf.string (input
    substrings), `start`, `end` int32 code-point offsets (end exclusive),
    `byte_start`, `byte_end` int32 byte offsets.
    """

    def __init__(self, do_lower_case=True, name=None):
        super().__init__(name=name)
        self.do_lower_case = bool(do_lower_case)
        starts, values = _runs(word_classes(self.do_lower_case))
        with tf.init_scope():
            self._run_starts = tf.constant(starts)
            self._run_classes = tf.constant(values)

    def classes(self, code_points):
        """int32 class of each code point (an int32 tensor of any shape)."""
        index = tf.searchsorted(self._run_starts, tf.reshape(code_points, [-1]),
                                side="right") - 1
        return tf.reshape(tf.gather(self._run_classes, index),
                          tf.shape(code_points))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)],
                 autograph=False)
    def __call__(self, texts):
        chars, byte_starts = tf.strings.unicode_decode_with_offsets(
            texts, "UTF-8", errors="ignore")
        chars = tf.cast(chars, tf.int32)
        code_points = chars.flat_values
        rows = tf.cast(chars.value_rowids(), tf.int32)
        row_splits = tf.cast(chars.row_splits, tf.int32)
        char_index = tf.range(tf.size(code_points)) - tf.gather(row_splits,
                                                                rows)
        byte_start = tf.cast(byte_starts.flat_values, tf.int32)
        byte_end = byte_start + _utf8_length(code_points)
        classes = self.classes(code_points)

        # Deleted characters are as if absent.
        kept = tf.not_equal(classes, TRANSPARENT)
        classes, rows, char_index, byte_start, byte_end = (
            tf.boolean_mask(t, kept)
            for t in (classes, rows, char_index, byte_start, byte_end))
        # Word boundaries: on the characters that are not marks.
        is_core = tf.not_equal(classes, MARK)
        core_classes = tf.boolean_mask(classes, is_core)
        core_rows = tf.boolean_mask(rows, is_core)
        previous_class = tf.concat([[SPACE], core_classes[:-1]], 0)
        previous_row = tf.concat([[-1], core_rows[:-1]], 0)
        starts_word = tf.logical_or(
            tf.equal(core_classes, OWN),
            tf.logical_and(tf.equal(core_classes, OTHER), tf.logical_or(
                tf.not_equal(previous_class, OTHER),
                tf.not_equal(previous_row, core_rows))))
        num_words = tf.reduce_sum(tf.cast(starts_word, tf.int32))
        core_word = tf.where(
            tf.equal(core_classes, SPACE), -1,
            tf.cumsum(tf.cast(starts_word, tf.int32)) - 1)
        # A mark belongs to the word of the nearest character before it that
        # is not a mark, if that one is in a word of the same row.
        previous_core = tf.cumsum(tf.cast(is_core, tf.int32)) - 1
        safe = tf.maximum(previous_core, 0)
        mark_word = tf.where(
            tf.logical_and(previous_core >= 0,
                           tf.equal(tf.gather(core_rows, safe), rows)),
            tf.gather(core_word, safe), -1)
        word_of_char = tf.where(is_core, tf.gather(core_word, safe), mark_word)
        in_word = word_of_char >= 0
        word_of_char, rows, char_index, byte_start, byte_end = (
            tf.boolean_mask(t, in_word)
            for t in (word_of_char, rows, char_index, byte_start, byte_end))

        def per_word(reduce, values):
            return reduce(values, word_of_char, num_words)

        word_rows = per_word(tf.math.unsorted_segment_min, rows)
        start = per_word(tf.math.unsorted_segment_min, char_index)
        end = per_word(tf.math.unsorted_segment_max, char_index) + 1
        first_byte = per_word(tf.math.unsorted_segment_min, byte_start)
        last_byte = per_word(tf.math.unsorted_segment_max, byte_end)
        words = tf.strings.substr(tf.gather(texts, word_rows), first_byte,
                                  last_byte - first_byte, unit="BYTE")
        nrows = tf.shape(texts, out_type=tf.int32)[0]

        def ragged(values):
            return tf.RaggedTensor.from_value_rowids(values, word_rows,
                                                     nrows=nrows)

        return {"words": ragged(words), "start": ragged(start),
                "end": ragged(end), "byte_start": ragged(first_byte),
                "byte_end": ragged(last_byte)}
