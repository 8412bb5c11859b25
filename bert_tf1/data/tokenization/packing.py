"""Packing `[CLS] A [SEP] (B [SEP])` with the original's truncation, segment
ids, input mask and zero padding: in Python (run_classifier.py
convert_single_example / _truncate_seq_pair) and in-graph (`InGraphPacker`:
keras_hub's MultiSegmentPacker, truncate="round_robin", keeps the same
prefixes as the original's "pop from the longer, B on ties").
"""
import collections

import keras_hub
import tensorflow as tf
import tensorflow_text as tf_text
from bert_tf1.data.io.errors import UserError

PackedInputs = collections.namedtuple(
    "PackedInputs", ["tokens", "input_ids", "input_mask", "segment_ids"])
PackedInputs.__doc__ = """Packed model inputs of one example.

tokens: list of str, the real tokens ([CLS] ... [SEP]) without padding;
input_ids, input_mask, segment_ids: lists of int of length max_seq_length
(padding: id 0, mask 0, segment 0).
"""


def truncate_seq_pair(tokens_a, tokens_b, max_length):
    """Pops from the longer list (tokens_b on ties), in place, until their
    total length <= max_length.

    Raises:
      ValueError: max_length < 0.

    Source: run_classifier.py, _truncate_seq_pair.
    """
    if max_length < 0:
        raise ValueError("truncate_seq_pair: max_length must be >= 0, got %d"
                         % max_length)
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def _check_max_seq_length(max_seq_length, is_pair):
    minimum = 3 if is_pair else 2
    if max_seq_length < minimum:
        raise UserError(
            "max_seq_length=%d is too small for %s ([CLS], [SEP]%s): it "
            "must be at least %d" % (
                max_seq_length, "a pair" if is_pair else "one segment",
                ", [SEP]" if is_pair else "", minimum))


def pack_segments(segment_a, segment_b, max_seq_length, cls, sep):
    """(items, segment_ids) of [CLS] A [SEP] (B [SEP]), truncated to
    max_seq_length; an empty or None B packs A alone. Inputs not modified.

    Raises:
      ValueError: max_seq_length too small for the special tokens.

    Source: run_classifier.py, convert_single_example.
    """
    segment_a = list(segment_a)
    segment_b = list(segment_b) if segment_b else None
    _check_max_seq_length(max_seq_length, segment_b is not None)
    if segment_b is not None:
        truncate_seq_pair(segment_a, segment_b, max_seq_length - 3)
    else:
        segment_a = segment_a[:max_seq_length - 2]
    items = [cls] + segment_a + [sep]
    segment_ids = [0] * len(items)
    if segment_b:
        items += segment_b + [sep]
        segment_ids += [1] * (len(segment_b) + 1)
    return items, segment_ids


def _pad(values, max_seq_length):
    return values + [0] * (max_seq_length - len(values))


def pack_tokens(tokens_a, tokens_b, max_seq_length, tokenizer):
    """Packs WordPiece tokens into fixed-length model inputs.

    Args:
      tokens_a, tokens_b: lists of str (tokens_b may be None).
      max_seq_length: int, the output length.
      tokenizer: has convert_tokens_to_ids (e.g. FullTokenizer).

    Returns:
      PackedInputs(tokens, input_ids, input_mask, segment_ids).

    Raises:
      ValueError: max_seq_length too small.
      KeyError (tokenization.VocabLookupError): a token is not in the vocab.

    Source: run_classifier.py, convert_single_example (the packing part).
    """
    tokens, segment_ids = pack_segments(tokens_a, tokens_b, max_seq_length,
                                        "[CLS]", "[SEP]")
    input_ids = tokenizer.convert_tokens_to_ids(tokens)
    return PackedInputs(tokens=tokens,
                        input_ids=_pad(input_ids, max_seq_length),
                        input_mask=_pad([1] * len(input_ids), max_seq_length),
                        segment_ids=_pad(segment_ids, max_seq_length))


def pack_ids(ids_a, ids_b, max_seq_length, cls_id, sep_id):
    """Like pack_tokens, for ids: returns a dict of int lists input_ids,
    input_mask, segment_ids, each of length max_seq_length."""
    input_ids, segment_ids = pack_segments(ids_a, ids_b, max_seq_length,
                                           cls_id, sep_id)
    return {"input_ids": _pad(input_ids, max_seq_length),
            "input_mask": _pad([1] * len(input_ids), max_seq_length),
            "segment_ids": _pad(segment_ids, max_seq_length)}


class InGraphPacker(object):
    """In-graph packing of ragged ids, same numbers as `pack_ids`.

    Call: `packer(ids_a[, ids_b])`, int32 [batch, (tokens)] ragged or dense
    -> dict of int32 [batch, max_seq_length] input_ids, input_mask,
    segment_ids.

    Raises:
      UserError: max_seq_length too small for the special tokens (at call).

    Source: run_classifier.py convert_single_example / _truncate_seq_pair.
    """

    def __init__(self, max_seq_length, cls_id, sep_id):
        self.max_seq_length = int(max_seq_length)
        self.cls_id = int(cls_id)
        self.sep_id = int(sep_id)
        # Pad -1 marks padding for the mask (id 0 may be a real token).
        self._packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length=self.max_seq_length, start_value=self.cls_id,
            end_value=self.sep_id, pad_value=-1, truncate="round_robin",
            dtype="int32")

    # Plain TF code: autograph (e.g. in Dataset.map) would only slow tracing.
    @tf.autograph.experimental.do_not_convert
    def __call__(self, ids_a, ids_b=None):
        _check_max_seq_length(self.max_seq_length, ids_b is not None)
        ids_a = _as_ragged_int32(ids_a)
        token_ids, segment_ids = self._packer((ids_a,))
        if ids_b is not None:
            ids_b = _as_ragged_int32(ids_b)
            pair_ids, pair_segments = self._packer((ids_a, ids_b))
            if self.max_seq_length <= 4:
                pair_ids = self._drop_sep_after_emptied_b(
                    ids_a, ids_b, pair_ids)
            # The original packs a row whose B has no tokens as a single
            # segment (`if tokens_b:`), without a second [SEP].
            has_b = (ids_b.row_lengths() > 0)[:, tf.newaxis]
            token_ids = tf.where(has_b, pair_ids, token_ids)
            segment_ids = tf.where(has_b, pair_segments, segment_ids)
        return packed_features(token_ids, segment_ids)

    def _drop_sep_after_emptied_b(self, ids_a, ids_b, pair_ids):
        """Pads the last [SEP] where truncation emptied B (max_seq_length 3
        or 4): the original writes none then."""
        budget = self.max_seq_length - 3
        _, trimmed_b = tf_text.RoundRobinTrimmer(budget).trim(
            [ids_a, ids_b])
        emptied = trimmed_b.row_lengths() == 0
        last = tf.reduce_sum(tf.cast(tf.not_equal(pair_ids, -1), tf.int32),
                             axis=1) - 1
        positions = tf.range(self.max_seq_length)[tf.newaxis, :]
        drop = emptied[:, tf.newaxis] & tf.equal(positions,
                                                 last[:, tf.newaxis])
        return tf.where(drop, -1, pair_ids)


def packed_features(token_ids, segment_ids):
    """The int32 model inputs of a `MultiSegmentPacker`'s -1-padded outputs
    (padding, and a dropped [SEP], is 0 in `input_ids`, mask, segments)."""
    real = tf.not_equal(token_ids, -1)
    return {"input_ids": tf.where(real, token_ids, 0),
            "input_mask": tf.cast(real, tf.int32),
            "segment_ids": tf.where(real, tf.cast(segment_ids, tf.int32), 0)}


def _as_ragged_int32(ids):
    """Ragged int32 [batch, (tokens)] from a ragged or dense tensor."""
    if not isinstance(ids, tf.RaggedTensor):
        ids = tf.RaggedTensor.from_tensor(tf.convert_to_tensor(ids))
    if ids.ragged_rank != 1 or ids.shape.rank != 2:
        raise ValueError("expected ids of shape [batch, (tokens)], got %s"
                         % (ids.shape,))
    return tf.cast(ids, tf.int32)
