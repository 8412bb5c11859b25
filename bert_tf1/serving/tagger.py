"""Serving a `BertTokenClassifier` (run_ner.py) from raw text or words.

Everything runs in the graph: the sliding windows over each text's word
pieces and the max-context window of every word (below: the rules of
`bert_tf1/data/tagging`, those of the original run_squad.py's windows and
`_check_is_max_context`, scores in float64 as Python computes them so ties
break the same way) and `bert_tf1.serving.entity_spans`; given the same
words, the tags equal `run_ner.py --do_predict`'s.
"""
import tensorflow as tf

from bert_tf1.data.tokenization.in_graph_words import InGraphWordSplitter
from bert_tf1.serving.entity_spans import (entity_spans, iob2_tables, label_tables,
                                            render_iob2)
from bert_tf1.serving.text_module import (TextServing, ids_features,
                                          ids_signature, softmax_outputs,
                                          text_signature)


def _window_spans(num_pieces, max_pieces, doc_stride):
    """(rows, starts, lengths [num_windows], first_window, counts [batch])."""
    # Every window but the last is full: the original's stride is constant.
    stride = min(int(doc_stride), int(max_pieces))
    extra = tf.maximum(num_pieces - max_pieces, 0)
    counts = tf.where(num_pieces > 0, 1 + (extra + stride - 1) // stride, 0)
    window_rows = tf.repeat(tf.range(tf.size(num_pieces)), counts)
    first_window = tf.cumsum(counts, exclusive=True)
    index_in_text = (tf.range(tf.size(window_rows))
                     - tf.gather(first_window, window_rows))
    starts = index_in_text * stride
    lengths = tf.minimum(max_pieces, tf.gather(num_pieces, window_rows) - starts)
    return window_rows, starts, lengths, first_window, counts


def window_features(pieces, max_seq_length, doc_stride, cls_id, sep_id):
    """(features, spans) of every window of every text of `pieces`
    (ragged int32 [batch, (pieces)]): features int32 [num_windows,
    max_seq_length] `input_ids`, `input_mask`, `segment_ids`; spans int32
    `rows`, `starts`, `lengths` [num_windows], `first_window`,
    `num_windows` [batch]."""
    max_pieces = max_seq_length - 2
    num_pieces = tf.cast(pieces.row_lengths(), tf.int32)
    rows, starts, lengths, first_window, counts = _window_spans(
        num_pieces, max_pieces, doc_stride)
    positions = tf.range(max_seq_length)[tf.newaxis, :]
    in_window = tf.logical_and(positions >= 1,
                               positions <= lengths[:, tf.newaxis])
    text_start = tf.gather(tf.cast(pieces.row_splits, tf.int32), rows)
    flat_index = (text_start + starts)[:, tf.newaxis] + positions - 1
    flat_pieces = pieces.flat_values
    gathered = tf.gather(flat_pieces, tf.clip_by_value(
        flat_index, 0, tf.maximum(tf.size(flat_pieces) - 1, 0)))
    ids = tf.where(in_window, gathered, 0)
    ids = tf.where(tf.equal(positions, 0), cls_id, ids)
    ids = tf.where(tf.equal(positions, lengths[:, tf.newaxis] + 1), sep_id, ids)
    mask = tf.cast(positions <= lengths[:, tf.newaxis] + 1, tf.int32)
    features = {"input_ids": ids, "input_mask": mask,
                "segment_ids": tf.zeros_like(ids)}
    spans = {"rows": rows, "starts": starts, "lengths": lengths,
             "first_window": first_window, "num_windows": counts}
    return features, spans


def max_context_positions(piece_positions, word_rows, spans, max_seq_length,
                          doc_stride):
    """(windows, positions) int32 [num_words]: where each word is read,
    its first piece (`piece_positions` int32 [num_words] among the pieces of
    its text `word_rows`) in its max-context window of `spans`
    (`window_features`)."""
    max_pieces = max_seq_length - 2
    stride = min(int(doc_stride), int(max_pieces))
    # The windows holding piece p start at k * stride with
    # k * stride <= p < k * stride + max_pieces: at most this many of them.
    num_candidates = (max_pieces + stride - 1) // stride + 1
    lowest = tf.maximum(0, (piece_positions - max_pieces + stride) // stride)
    candidates = lowest[:, tf.newaxis] + tf.range(num_candidates)[tf.newaxis]
    count = tf.gather(spans["num_windows"], word_rows)[:, tf.newaxis]
    exists = candidates < count
    global_index = tf.gather(spans["first_window"], word_rows)[:, tf.newaxis] + (
        tf.minimum(candidates, tf.maximum(count - 1, 0)))
    starts = tf.gather(spans["starts"], global_index)
    lengths = tf.gather(spans["lengths"], global_index)
    position = piece_positions[:, tf.newaxis]
    inside = exists & (starts <= position) & (position < starts + lengths)
    left = position - starts
    right = starts + lengths - 1 - position
    score = (tf.cast(tf.minimum(left, right), tf.float64)
             + 0.01 * tf.cast(lengths, tf.float64))
    score = tf.where(inside, score, tf.constant(-float("inf"), tf.float64))
    best = tf.reduce_max(score, axis=1, keepdims=True)
    # The first candidate with the best score (tf.argmax leaves ties open).
    first = tf.reduce_min(tf.where(
        tf.equal(score, best), tf.range(num_candidates)[tf.newaxis],
        num_candidates), axis=1)
    chosen = tf.stack([tf.range(tf.size(first)), first], axis=1)
    windows = tf.gather_nd(global_index, chosen)
    return windows, piece_positions - tf.gather_nd(starts, chosen) + 1


class TaggerServing(TextServing):
    """Signatures of a `BertTokenClassifier`.

    - `tag_text(text)` tf.string [batch] (= serving_default): `words`
      tf.string, `word_start`, `word_end` int32 (code point offsets, end
      exclusive) [batch, max_words], `num_words` int32 [batch]; the tag
      outputs `tag` tf.string, `tag_id` int32, `tag_probability` float32
      [batch, max_words] (IOB2 label lists: entities written back as IOB2,
      as run_ner.py's predictions.txt; else the argmax), `logits` float32
      [batch, max_words, num_labels]; `entity_type`, `entity_text`
      tf.string, `entity_start`, `entity_end` int32 [batch, max_entities],
      `num_entities` int32 [batch];
    - `tag_words(words)` tf.string [batch, max_words] ("" is padding): the
      same, entity bounds as word indices and `entity_text` the words
      joined by " ";
    - `tag_ids(input_ids, input_mask, segment_ids)` int32 [batch,
      seq_length]: `logits`, `probabilities`, `tag_id`, `tag` per position.

    Args: a `BertTokenClassifier`, the `InGraphFullTokenizer` of its vocab
    and case, run_ner.py's window flags, the ids of [CLS], [SEP], [UNK], and
    the `label_list` (tag id k is label_list[k]).

    Raises:
        ValueError: label_list does not fit the model's outputs.
    """

    SIGNATURES = ("tag_text", "tag_words", "tag_ids")

    def __init__(self, model, tokenizer, max_seq_length, doc_stride, cls_id,
                 sep_id, unk_id, label_list):
        super().__init__(model, tokenizer, max_seq_length, cls_id, sep_id)
        num_labels = getattr(model, "num_labels", len(label_list))
        if len(label_list) != num_labels:
            raise ValueError("%d labels for a model with %d outputs"
                             % (len(label_list), num_labels))
        self.doc_stride = int(doc_stride)
        self.cls_id, self.sep_id, self.unk_id = cls_id, sep_id, unk_id
        self.words = InGraphWordSplitter(tokenizer.do_lower_case)
        prefixes, types, type_names = label_tables(label_list)
        self._set_labels(label_list)
        self._prefixes = tf.constant(prefixes, tf.int32)
        self._types = tf.constant(types, tf.int32)
        self._type_names = tf.constant(type_names, tf.string)
        # IOB2 labels: tags written back from the entities, as run_ner.py.
        self._iob2 = iob2_tables(list(label_list), type_names)

    # -- the shared path: ragged words -> per-word logits --------------------

    def _word_pieces(self, flat_words):
        """Ragged int32 pieces [num_words, (pieces)], never empty."""
        pieces = self.tokenizer(flat_words)
        empty = tf.cast(tf.equal(pieces.row_lengths(), 0), tf.int64)
        unk = tf.RaggedTensor.from_row_lengths(
            tf.fill([tf.cast(tf.reduce_sum(empty), tf.int32)], self.unk_id),
            empty)
        return tf.concat([pieces, unk], axis=1)

    def tagging_features(self, words):
        """(features, windows, positions) of ragged `words` tf.string
        [batch, (words)]: int32 [num_windows, max_seq_length] model inputs,
        and int32 [num_words] the window and position where each word is
        read (`window_features`, `max_context_positions`)."""
        pieces = self._word_pieces(words.flat_values)
        counts = tf.cast(pieces.row_lengths(), tf.int32)
        first_piece = tf.cumsum(counts, exclusive=True)
        word_rows = tf.cast(words.value_rowids(), tf.int32)
        text_pieces = tf.RaggedTensor.from_row_splits(
            pieces.flat_values,
            tf.gather(tf.concat([[0], tf.cumsum(counts)], 0),
                      tf.cast(words.row_splits, tf.int32)))
        text_start = tf.gather(tf.cast(text_pieces.row_splits, tf.int32),
                               word_rows)
        features, spans = window_features(
            text_pieces, self.max_seq_length, self.doc_stride, self.cls_id,
            self.sep_id)
        windows, positions = max_context_positions(
            first_piece - text_start, word_rows, spans, self.max_seq_length,
            self.doc_stride)
        return features, windows, positions

    def _tags(self, words):
        """(ragged tag outputs with the `logits` [batch, (words), labels]
        at first pieces, (entity starts, ends, type names), entity rows)."""
        features, windows, positions = self.tagging_features(words)
        flat = tf.gather_nd(self.model(features, training=False),
                            tf.stack([windows, positions], 1))
        logits = words.with_flat_values(flat)
        tag_id = logits.with_flat_values(
            tf.argmax(flat, axis=-1, output_type=tf.int32))
        starts, ends, types = entity_spans(tag_id, self._prefixes,
                                           self._types)
        if self._iob2 is not None:
            tag_id = render_iob2(tag_id, starts, ends, types, *self._iob2)
        probability = tf.gather(tf.nn.softmax(flat), tag_id.flat_values,
                                batch_dims=1)
        tags = {"logits": logits, "tag_id": tag_id,
                "tag": tag_id.with_flat_values(
                    tf.gather(self.label_list, tag_id.flat_values)),
                "tag_probability": logits.with_flat_values(probability)}
        return tags, (starts, ends, tf.gather(
            self._type_names, types)), tf.cast(starts.value_rowids(), tf.int32)

    # -- signatures -----------------------------------------------------------

    @text_signature
    def tag_text(self, text):
        split = self.words(text)
        words = split["words"]
        tags, (starts, ends, types), rows = self._tags(words)

        def word_value(name, index, shift=0):
            where = tf.stack([rows, index.flat_values + shift], axis=1)
            return tf.gather_nd(split[name].to_tensor(), where)

        byte_start = word_value("byte_start", starts)
        byte_end = word_value("byte_end", ends, -1)
        entity_text = tf.strings.substr(tf.gather(text, rows), byte_start,
                                        byte_end - byte_start, unit="BYTE")
        outputs = {
            "words": words.to_tensor(default_value=""),
            "word_start": split["start"].to_tensor(),
            "word_end": split["end"].to_tensor(),
            "num_words": tf.cast(words.row_lengths(), tf.int32),
            **_entities(starts, types, word_value("start", starts),
                        word_value("end", ends, -1), entity_text)}
        outputs.update({name: value.to_tensor(
            default_value="" if value.dtype == tf.string else 0)
            for name, value in tags.items()})
        return outputs

    @tf.function(input_signature=[
        tf.TensorSpec([None, None], tf.string, name="words")])
    def tag_words(self, words):
        present = tf.not_equal(words, "")
        ragged = tf.ragged.boolean_mask(words, present)
        columns = tf.ragged.boolean_mask(
            tf.broadcast_to(tf.range(tf.shape(words)[1]), tf.shape(words)),
            present)
        tags, (starts, ends, types), rows = self._tags(ragged)
        # Entity bounds as columns of the input; text: the words joined.
        dense_columns = columns.to_tensor()
        start_column = tf.gather_nd(dense_columns, tf.stack(
            [rows, starts.flat_values], 1))
        end_column = tf.gather_nd(dense_columns, tf.stack(
            [rows, ends.flat_values - 1], 1)) + 1
        spans = tf.ragged.range(starts.flat_values, ends.flat_values)
        entity_words = tf.gather_nd(ragged.to_tensor(), tf.stack(
            [tf.gather(rows, tf.cast(spans.value_rowids(), tf.int32)),
             spans.flat_values], 1))
        entity_text = tf.strings.reduce_join(
            spans.with_flat_values(entity_words), axis=1, separator=" ")
        scatter_at = tf.stack([tf.cast(columns.value_rowids(), tf.int32),
                               columns.flat_values], 1)
        shape = tf.shape(words)
        outputs = {}
        for name, value in tags.items():
            outputs[name] = tf.tensor_scatter_nd_update(
                tf.fill(tf.concat([shape, tf.shape(value.flat_values)[1:]], 0),
                        tf.constant("" if value.dtype == tf.string else 0,
                                    value.dtype)),
                scatter_at, value.flat_values)
        outputs.update(_entities(starts, types, start_column, end_column,
                                 entity_text))
        return outputs

    @ids_signature
    def tag_ids(self, input_ids, input_mask, segment_ids):
        outputs = softmax_outputs(self.model(
            ids_features(input_ids, input_mask, segment_ids), training=False),
            "tag_id")
        outputs["tag"] = tf.gather(self.label_list, outputs["tag_id"])
        return outputs


def _entities(starts, types, start, end, text):
    """The dense entity outputs [batch, max_entities] of their values."""
    return {"entity_type": types.to_tensor(default_value=""),
            "entity_start": starts.with_flat_values(start).to_tensor(),
            "entity_end": starts.with_flat_values(end).to_tensor(),
            "entity_text": starts.with_flat_values(text).to_tensor(
                default_value=""),
            "num_entities": tf.cast(starts.row_lengths(), tf.int32)}
