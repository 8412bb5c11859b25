"""One vector per sequence from a BERT layer's token vectors (sentence
embeddings), for extract_features.py, the encoder export's `embed_text` and
`SentenceEmbedder`; and a model folder's record of its pooling
(`POOLING_FILE`).

Source: sentence-transformers `models.Pooling` (mean over the real tokens,
`[CLS]`/`[SEP]` included; max with padding masked; cls token) and
`models.Normalize` (L2, norm at least 1e-12).
"""
import json
import os

import tensorflow as tf

from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.data.io.errors import UserError

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


# -- the pooling record of a model folder --------------------------------

#: A model folder's record of how its sentence vectors are pooled:
#: {"pooling": "mean", "l2_normalize": true}. run_embeddings.py writes it
#: into --output_dir, fetch_pretrained.py beside all-MiniLM-L6-v2 (mean and
#: L2, its sentence-transformers modules Pooling + Normalize); every later
#: step (evaluation, export, predict_text.py, extract_features.py, Beam)
#: reads it.
POOLING_FILE = "pooling.json"


def _record_path(folder):
    return f"{os.fspath(folder).rstrip('/')}/{POOLING_FILE}"


def _check_pooling(pooling, l2_normalize, source):
    if pooling not in POOLINGS or not isinstance(l2_normalize, bool):
        raise UserError(
            f"{source}: pooling {pooling!r}, l2_normalize {l2_normalize!r}; "
            f"expected pooling one of {', '.join(POOLINGS)} and l2_normalize "
            "true or false.")
    return pooling, l2_normalize


def read_pooling_record(folder):
    """The pooling recorded in `folder`'s pooling.json.

    Args:
        folder: str or os.PathLike, a model folder (local or gs://).

    Returns:
        (pooling: str, l2_normalize: bool), or None when the folder holds
        no pooling.json.

    Raises:
        UserError: the file is no JSON object with a known `pooling` and a
            boolean `l2_normalize` (the message names the file).
    """
    path = _record_path(folder)
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path, "r") as reader:
        text = reader.read()
    try:
        record = json.loads(text)
    except ValueError as error:
        raise UserError(f"{path} is not JSON ({error}); expected "
                        '{"pooling": "mean", "l2_normalize": true}.') from None
    if not isinstance(record, dict):
        record = {}
    return _check_pooling(record.get("pooling"), record.get("l2_normalize"),
                          path)


def write_pooling_record(folder, pooling, l2_normalize):
    """Records `pooling` and `l2_normalize` in `folder`/pooling.json
    (atomically; the folder is created when missing).

    Args:
        folder: str or os.PathLike, the model folder (local or gs://).
        pooling: "mean", "cls" or "max".
        l2_normalize: bool.

    Returns:
        str, the record's path. The same record already there is kept.

    Raises:
        UserError: an unknown pooling or a non-bool l2_normalize; or the
            folder already records another pooling (the message names the
            file, the recorded and the given values), and nothing is written.
    """
    _check_pooling(pooling, l2_normalize, "pooling record")
    path = _record_path(folder)
    recorded = read_pooling_record(folder)
    if recorded is not None:
        if recorded != (pooling, l2_normalize):
            raise UserError(
                f"{path} records pooling={recorded[0]}, l2_normalize="
                f"{str(recorded[1]).lower()}; given pooling={pooling}, "
                f"l2_normalize={str(l2_normalize).lower()}. Use the recorded "
                "values or another output folder.")
        return path
    tf.io.gfile.makedirs(os.fspath(folder))
    write_text_atomically(path, json.dumps(
        {"pooling": pooling, "l2_normalize": l2_normalize}, indent=2) + "\n")
    return path
