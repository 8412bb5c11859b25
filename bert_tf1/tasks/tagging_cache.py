"""The feature-based tagger's frozen activations, computed once and cached.

Stored as `<split>_features.<key>.tf_record` in output_dir (`key`: 16 hex
of `cache_key`, a hash of what they depend on; a new key replaces the
split's older file).
Record k holds window k: `features` (raw little-endian float32 [length,
width], its real positions) and `length`; labels come from the windows.
"""
import glob
import hashlib
import json
import os
import time

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.atomic import remove_quietly
from bert_tf1.data.io.tfrecord import RecordFileWriter
from bert_tf1.modeling.naming import tf1_name

#: Bump when the record layout or the feature computation changes.
CACHE_VERSION = "1"
ENCODER_KEYS = ("input_ids", "input_mask", "segment_ids")
LABEL_KEYS = ("input_mask", "label_ids", "label_weights")
#: Training batches hold windows of similar length (buckets of this many
#: positions), each padded only to its longest window.
BUCKET_WIDTH = 16


def window_arrays(features):
    """dict of int32 [N, max_seq_length] input_ids, input_mask,
    segment_ids, label_ids and float32 label_weights of a non-empty list of
    bert_tf1.data.tagging.features.TaggingFeatures."""
    arrays = {key: np.asarray([getattr(f, key) for f in features], np.int32)
              for key in ENCODER_KEYS + ("label_ids",)}
    arrays["label_weights"] = np.asarray(
        [f.label_weights for f in features], np.float32)
    return arrays


def cache_key(model, arrays):
    """Hex SHA-256 of what the cached activations depend on: `model`'s
    (a bert_tf1.modeling.BertFeatureTagger) feature_layers, config and encoder
    weights, and the encoder inputs of `arrays` (from window_arrays)."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"version": CACHE_VERSION,
                              "feature_layers": model.feature_layers,
                              "config": model.config.to_dict()},
                             sort_keys=True).encode())
    for variable in sorted(model.bert.weights, key=tf1_name):
        digest.update(tf1_name(variable).encode())
        digest.update(np.ascontiguousarray(variable.numpy()).tobytes())
    for key in ENCODER_KEYS:
        value = np.ascontiguousarray(arrays[key], np.int32)
        digest.update(repr(value.shape).encode())
        digest.update(value.tobytes())
    return digest.hexdigest()


def _example(rows):
    return tf.train.Example(features=tf.train.Features(feature={
        "features": tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[np.ascontiguousarray(rows, "<f4").tobytes()])),
        "length": tf.train.Feature(int64_list=tf.train.Int64List(
            value=[rows.shape[0]])),
    })).SerializeToString()


class FeatureCache:
    """Computes (once) and finds the cached activations of a split, with
    `model` (bert_tf1.modeling.BertFeatureTagger, encoder weights loaded) running
    `batch_size` windows per call; `encoder_batches` counts those calls."""

    def __init__(self, model, batch_size):
        self.model = model
        self.batch_size = int(batch_size)
        self.encoder_batches = 0
        self._encode = None

    def _encoder(self, seq_length):
        if self._encode is None:
            spec = {key: tf.TensorSpec([None, seq_length], tf.int32)
                    for key in ENCODER_KEYS}
            self._encode = tf.function(
                lambda inputs: tf.cast(self.model.encoder_features(inputs),
                                       tf.float32),
                input_signature=[spec], autograph=False)
        return self._encode

    def ensure(self, folder, split, arrays):
        """The path of the complete cache file of `arrays` (from
        window_arrays) for `split` ("train", "eval", "predict") in `folder`,
        computed unless already there."""
        path = os.path.join(folder, "%s_features.%s.tf_record" % (
            split, cache_key(self.model, arrays)[:16]))
        count = len(arrays["input_ids"])
        if tf.io.gfile.exists(path) and count == int(
                tf.data.TFRecordDataset(path).reduce(
                    0, tf.autograph.experimental.do_not_convert(lambda n, _: n + 1))):
            logging.info("Feature cache: reusing %s (%d windows, "
                         "feature_layers=%s).", path, count,
                         self.model.feature_layers)
            return path
        for stale in glob.glob(os.path.join(glob.escape(folder),
                                            "%s_features.*.tf_record" % split)):
            remove_quietly(stale)
        started = time.perf_counter()
        encode = self._encoder(arrays["input_ids"].shape[1])
        with RecordFileWriter(path) as writer:
            for start in range(0, count, self.batch_size):
                batch = {key: arrays[key][start:start + self.batch_size]
                         for key in ENCODER_KEYS}
                values = encode(batch).numpy()
                self.encoder_batches += 1
                for row, mask in zip(values, batch["input_mask"]):
                    writer.write(_example(row[:int(mask.sum())]))
            writer.commit()
        logging.info("Feature cache: ran the frozen encoder on %d windows in "
                     "%.1f s -> %s.", count, time.perf_counter() - started,
                     path)
        return path

    def dataset(self, folder, split, windows, batch_size):
        """(`cached_dataset` of `windows`' activations, its path), the
        cache file computed first unless already there (`ensure`)."""
        arrays = window_arrays(windows)
        path = self.ensure(folder, split, arrays)
        return cached_dataset(path, arrays, self.model.feature_width,
                              split == "train", batch_size), path


def cached_dataset(path, arrays, width, is_training, batch_size, seed=None):
    """Batches ({"features": float32 [B, T, width], "input_mask": int32
    [B, T], "label_weights": float32 [B, T]}, label_ids int32 [B, T]) of the
    activations at `path` (`FeatureCache.ensure` of `arrays`): training
    repeats, shuffles (buffer 100) and buckets by length (BUCKET_WIDTH);
    else every window once, in order, T = max_seq_length."""
    seq_length = arrays["input_ids"].shape[1]
    labels = tf.data.Dataset.from_tensor_slices(
        {key: arrays[key] for key in LABEL_KEYS})
    dataset = tf.data.Dataset.zip((tf.data.TFRecordDataset(path), labels))
    parsing = {"features": tf.io.FixedLenFeature([], tf.string),
               "length": tf.io.FixedLenFeature([], tf.int64)}

    @tf.autograph.experimental.do_not_convert  # no tensor control flow
    def parse(record, window):
        parsed = tf.io.parse_single_example(record, parsing)
        length = tf.cast(parsed["length"], tf.int32)
        values = tf.reshape(tf.io.decode_raw(parsed["features"], tf.float32),
                            [length, width])
        return values, {key: value[:length] for key, value in window.items()}

    @tf.autograph.experimental.do_not_convert
    def as_inputs(values, window):
        return ({"features": values, "input_mask": window["input_mask"],
                 "label_weights": window["label_weights"]},
                window["label_ids"])

    if is_training:
        dataset = dataset.repeat().shuffle(100, seed=seed).map(parse)
        boundaries = list(range(BUCKET_WIDTH + 1, seq_length + 1,
                                BUCKET_WIDTH))
        dataset = dataset.bucket_by_sequence_length(
            tf.autograph.experimental.do_not_convert(
                lambda values, window: tf.shape(values)[0]),
            boundaries,
            [batch_size] * (len(boundaries) + 1), drop_remainder=True)
    else:
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(
            len(arrays["input_ids"])))
        dataset = dataset.map(parse).padded_batch(
            batch_size, padded_shapes=(
                [seq_length, width], {key: [seq_length] for key in LABEL_KEYS}))
    return dataset.map(as_inputs).prefetch(tf.data.AUTOTUNE)
