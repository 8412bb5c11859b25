"""Entities from tag ids, in-graph, with conlleval's chunk rules.

The rules of `bert_tf1.data.tagging.schemes.entity_spans` (conlleval's
startOfChunk/endOfChunk with seqeval's E-/S- extension); IOB1, IOB2 and
BIOES tags are read alike.
"""
import tensorflow as tf

from bert_tf1.data.tagging.schemes import OUTSIDE, split_tag

#: Prefix codes; "O" is 0.
PREFIXES = (OUTSIDE, "B", "I", "E", "S")
_O, _B, _I, _E, _S = range(len(PREFIXES))


def label_tables(label_list):
    """(prefixes, types, type_names) of `label_list` (each "O" or
    "<B|I|E|S>-<TYPE>"): lists of int [num_labels] (type 0 for "O") and the
    type names (index 0: "").

    Raises:
        ValueError: a label of another form.
    """
    type_names = [""]
    prefixes, types = [], []
    for label in label_list:
        prefix, entity_type = split_tag(label)
        if prefix not in PREFIXES or (prefix != OUTSIDE and not entity_type):
            raise ValueError("label %r is not O or <prefix>-<type> with a "
                             "prefix among B, I, E, S" % (label,))
        if prefix == OUTSIDE:
            prefixes.append(_O)
            types.append(0)
            continue
        if entity_type not in type_names:
            type_names.append(entity_type)
        prefixes.append(PREFIXES.index(prefix))
        types.append(type_names.index(entity_type))
    return prefixes, types, type_names


def entity_spans(tag_ids, prefixes, types):
    """(starts, ends, type_ids) ragged int32 [batch, (entities)] of
    ragged `tag_ids` int32 [batch, (words)], by `label_tables`' `prefixes`
    and `types`; an entity covers words [start, end) of its row."""
    dense_prefix = tf.gather(prefixes, tag_ids).to_tensor(default_value=_O)
    dense_type = tf.gather(types, tag_ids).to_tensor(default_value=0)
    batch = tf.shape(dense_prefix)[0]
    # One "O" before and after every row: entities end at the row's end.
    pad = tf.zeros([batch, 1], tf.int32)
    prefix = tf.concat([pad, dense_prefix, pad], axis=1)
    entity_type = tf.concat([pad, dense_type, pad], axis=1)
    previous, current = prefix[:, :-1], prefix[:, 1:]
    previous_type, current_type = entity_type[:, :-1], entity_type[:, 1:]
    other_type = tf.not_equal(previous_type, current_type)

    def among(codes, values):
        return tf.reduce_any(tf.stack([tf.equal(codes, v) for v in values]),
                             axis=0)

    ends = tf.not_equal(previous, _O) & (
        among(previous, (_E, _S)) | other_type | among(current, (_B, _S, _O)))
    starts = tf.not_equal(current, _O) & (
        among(current, (_B, _S)) | other_type | among(previous, (_O, _E, _S)))
    # Column i is the boundary before word i (i == num_words: the row's end).
    columns = tf.broadcast_to(tf.range(tf.shape(starts)[1]), tf.shape(starts))
    start_columns = tf.ragged.boolean_mask(columns, starts)
    end_columns = tf.ragged.boolean_mask(columns, ends)
    where = tf.stack([tf.cast(start_columns.value_rowids(), tf.int32),
                      start_columns.flat_values], axis=1)
    type_ids = start_columns.with_flat_values(
        tf.gather_nd(entity_type[:, 1:], where))
    return start_columns, end_columns, type_ids


def iob2_tables(label_list, type_names):
    """(outside_id, begin_ids, inside_ids) to write entities back as IOB2
    tags (lists indexed by `type_names` of `label_tables`), or None unless
    `label_list` holds "O" and "B-X", "I-X" for every type X."""
    if "O" not in label_list:
        return None
    begin_ids, inside_ids = [0], [0]
    for name in type_names[1:]:
        if "B-" + name not in label_list or "I-" + name not in label_list:
            return None
        begin_ids.append(label_list.index("B-" + name))
        inside_ids.append(label_list.index("I-" + name))
    return label_list.index("O"), begin_ids, inside_ids


def render_iob2(tag_ids, starts, ends, type_ids, outside_id, begin_ids,
                inside_ids):
    """The IOB2 tag ids, ragged int32 [batch, (words)] like `tag_ids`, of
    the entities `entity_spans` found (`iob2_tables` ids): in-graph
    `bert_tf1.data.tagging.schemes.convert_tags(tags, "iob2")`."""
    row_start = tf.gather(tf.cast(tag_ids.row_splits, tf.int32),
                          tf.cast(starts.value_rowids(), tf.int32))
    first = row_start + starts.flat_values
    spans = tf.ragged.range(first, row_start + ends.flat_values)
    entity = tf.cast(spans.value_rowids(), tf.int32)
    entity_type = tf.gather(type_ids.flat_values, entity)
    ids = tf.where(tf.equal(spans.flat_values, tf.gather(first, entity)),
                   tf.gather(tf.constant(begin_ids, tf.int32), entity_type),
                   tf.gather(tf.constant(inside_ids, tf.int32), entity_type))
    flat = tf.tensor_scatter_nd_update(
        tf.fill(tf.shape(tag_ids.flat_values), tf.constant(outside_id,
                                                           tf.int32)),
        spans.flat_values[:, None], ids)
    return tag_ids.with_flat_values(flat)
