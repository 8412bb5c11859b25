"""Damaged copies of good files, as users meet them (tests only)."""
import numpy as np
import tensorflow as tf


def nan_checkpoint(source_prefix, prefix, name="bert/embeddings/word_embeddings",
                   row=7):
    """A copy of checkpoint `source_prefix` at `prefix` with one NaN row in
    tensor `name` (or one NaN value, for a vector)."""
    reader = tf.train.load_checkpoint(str(source_prefix))
    names = sorted(reader.get_variable_to_shape_map())
    values = {n: reader.get_tensor(n) for n in names}
    values[name] = values[name].copy()
    values[name][row] = np.nan
    tf.raw_ops.SaveV2(prefix=str(prefix), tensor_names=names,
                      shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(values[n]) for n in names])
    return prefix


def record_offsets(path):
    """Byte offsets of the records of a TFRecord file, in order."""
    data = path.read_bytes()
    offsets, offset = [], 0
    while offset < len(data):
        offsets.append(offset)
        offset += 12 + int.from_bytes(data[offset:offset + 8], "little") + 4
    return offsets


def cut_record_file(source, target, record):
    """`target`: `source` cut short in the middle of record number `record`."""
    data = source.read_bytes()
    start = record_offsets(source)[record]
    target.write_bytes(data[:start + 20])
    return target


def corrupt_record_file(source, target, record):
    """`target`: `source` with a data byte of record `record` flipped."""
    data = bytearray(source.read_bytes())
    data[record_offsets(source)[record] + 12 + 3] ^= 0xFF
    target.write_bytes(bytes(data))
    return target
