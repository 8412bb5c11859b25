"""What every task model shares besides its head: `encoder=`,
`preprocessor=`, `from_checkpoint` and the loss rule of `compute_loss`.

The preprocessor runs in the input pipeline, never inside `call` (as
keras-hub's `Task`), so the graph stays ids in, logits out. It is any Keras
layer mapping a string tensor [batch] (or a pair) to the input dict, e.g.
`bert_tf1.data.tokenization.BertPreprocessor` (import `bert_tf1.data.tokenization` before
`keras.models.load_model` of a model saved with one).
"""
import keras
import numpy as np
import tensorflow as tf

from bert_tf1.modeling.keras_internals import (all_layers, trace_predict_for,
                                               with_end_stopped_epoch)
from bert_tf1.modeling.layers.input_checks import positive_count
from bert_tf1.modeling.layers.lora import LoraMixin
from bert_tf1.modeling.models import losses
from bert_tf1.modeling.models.bert_model import BertModel
from bert_tf1.modeling.models.pretrained import FromCheckpoint


def _is_text_leaf(leaf):
    if isinstance(leaf, (str, bytes)):
        return True
    dtype = getattr(leaf, "dtype", None)
    if isinstance(dtype, tf.dtypes.DType):
        return dtype == tf.string
    return dtype is not None and np.dtype(dtype).kind in "USO"


def _is_text(value):
    """True when every leaf of `value` is a string (Python, NumPy or TF)."""
    leaves = tf.nest.flatten(value)
    return bool(leaves) and all(_is_text_leaf(leaf) for leaf in leaves)


def _as_text_arrays(x):
    """Texts as a tuple of 1-D arrays or tensors (one per segment)."""
    if isinstance(x, (tuple, list)) and len(x) == 2 and not isinstance(
            x[0], (str, bytes)):
        return tuple(x)
    return x


class OwnLoss:
    """Mixin: `compute_loss` is a loss given to `compile` when set, else the
    model's `task_loss(x, y, y_pred, sample_weight)` (the original's loss,
    `sample_weight` [batch_size] weighting examples), scaled for replicas;
    None when `y` is None (Keras' inference calls)."""

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None,
                     training=True):
        if getattr(self, "loss", None) is not None:  # compile(loss=...)
            return super().compute_loss(x, y, y_pred, sample_weight,
                                        training=training)
        if y is None:
            return None
        return losses.scale_for_replicas(
            self.task_loss(x, y, y_pred, sample_weight))


class TaskModel(LoraMixin, OwnLoss, FromCheckpoint):
    """Mixin for the task models built on a `BertModel`.

    Constructor args every task model takes:
        config: `BertConfig` (or None with `encoder=`).
        encoder: optional existing `BertModel` to build on (its config is
            used and its weights are shared) instead of a new one.
        preprocessor: optional Keras layer from raw text to the inputs
            (e.g. `bert_tf1.data.tokenization.BertPreprocessor`), applied by `fit`,
            `evaluate` and `predict` in the input pipeline; saved with the
            model.

    Raises (construction):
        TypeError: encoder is not a BertModel, neither it nor config is
            given, or `num_labels` is missing where needed.
        ValueError: both are given and differ, or `num_labels` < 1.

    `enable_lora(rank, alpha=None, targets=("query", "value"))`: LoRA on the
    encoder (`bert_tf1.modeling.layers.lora.LoraMixin`); the head stays trainable.
    """

    #: Attribute names of the head layers `build` builds in scope `cls`.
    _CLS_HEADS = ()

    def _init_encoder(self, config, encoder, preprocessor, num_labels=None):
        """Sets `bert` (a new `BertModel(config)` unless `encoder` is given),
        its `config` and `preprocessor`; and `num_labels` (checked >= 1)
        for a class with a `_LABELS_HEAD`."""
        name = type(self).__name__
        if self._LABELS_HEAD:
            if num_labels is None:
                raise TypeError(f"{name} needs num_labels.")
            self.num_labels = positive_count(num_labels, "num_labels")
        if encoder is None:
            if config is None:
                raise TypeError(f"{name} needs a BertConfig (config=) or an "
                                "existing BertModel (encoder=).")
            encoder = BertModel(config, dtype=self.dtype_policy)
        elif not isinstance(encoder, BertModel):
            raise TypeError(f"{name} encoder= must be a BertModel, got "
                            f"{type(encoder).__name__}.")
        elif config is not None and (
                config.to_dict() != encoder.config.to_dict()):
            raise ValueError(f"{name}: config= differs from the config of "
                             "encoder=; pass one of them.")
        self.config = encoder.config
        self.bert = encoder
        self.preprocessor = preprocessor

    def build(self, input_shape=None):
        with keras.name_scope("cls"):
            for head in self._CLS_HEADS:
                getattr(self, head).build()

    def get_config(self):
        config = super().get_config()
        if self._LABELS_HEAD:
            config["num_labels"] = self.num_labels
        if getattr(self, "preprocessor", None) is not None:
            config["preprocessor"] = keras.saving.serialize_keras_object(
                self.preprocessor)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("preprocessor"), dict):
            config["preprocessor"] = keras.saving.deserialize_keras_object(
                config["preprocessor"])
        return super().from_config(config)

    def make_train_function(self, force=False):
        """`keras.Model.make_train_function`, with the optimizer's slots
        created first (`fit` and `train_on_batch` call it before their first
        step).

        Without a distribution strategy, Keras (TensorFlow backend) leaves
        the optimizer to build itself inside the first step's trace; a
        `tf.function` that created variables is then traced a second time,
        the whole train step again (the fixture classifier's first
        `train_on_batch`: ~4.6 -> ~2.5 CPU s, measured). A model with a
        layer not built yet is left to Keras: its variables would be
        missing from the slots.
        """
        optimizer = getattr(self, "optimizer", None)
        if (optimizer is not None and not optimizer.built
                and all(layer.built for layer in all_layers(self))):
            with self.distribute_strategy.scope():
                optimizer.build(self.trainable_variables)
        return super().make_train_function(force=force)

    # -- raw text in the input pipeline ------------------------------------

    def _text_dataset(self, x, y=None, sample_weight=None, batch_size=None,
                      shuffle=False):
        """A tf.data pipeline of preprocessed batches, or None when there is
        no preprocessor or `x` is not text (ids pass through unchanged)."""
        preprocessor = getattr(self, "preprocessor", None)
        if preprocessor is None or x is None or isinstance(x, dict):
            return None
        if isinstance(x, tf.data.Dataset):
            dataset = x
        else:
            x = _as_text_arrays(x)
            if not _is_text(x):
                return None
            parts = tuple(part for part in (x, y, sample_weight)
                          if part is not None)
            dataset = tf.data.Dataset.from_tensor_slices(
                parts if len(parts) > 1 else (x,))
            if shuffle:  # what fit(shuffle=True) does to arrays: each epoch
                dataset = dataset.shuffle(int(dataset.cardinality()))
            dataset = dataset.batch(batch_size or 32)

        @tf.autograph.experimental.do_not_convert  # Python branches only
        def apply(*data):
            if len(data) == 1 or _is_text(data):
                # x alone; a pair of text tensors is x too.
                features = data[0] if len(data) == 1 else data
                return preprocessor(_as_text_arrays(features))
            return (preprocessor(_as_text_arrays(data[0])),) + tuple(data[1:])

        return dataset.map(apply, num_parallel_calls=tf.data.AUTOTUNE
                           ).prefetch(tf.data.AUTOTUNE)

    def fit(self, x=None, y=None, batch_size=None, sample_weight=None,
            validation_data=None, **kwargs):
        """`keras.Model.fit`; with a preprocessor, `x` may be raw text: a
        string array [batch], a pair (texts_a, texts_b), or a tf.data
        dataset of (texts, labels[, weights]) batches. A callback that stops
        it early leaves no input iterator to the garbage collector
        (`keras_internals.EndStoppedEpoch`)."""
        kwargs["callbacks"] = with_end_stopped_epoch(kwargs.get("callbacks"))
        dataset = self._text_dataset(x, y, sample_weight, batch_size,
                                     shuffle=kwargs.get("shuffle", True))
        if validation_data is not None and dataset is not None and not (
                isinstance(validation_data, tf.data.Dataset)):
            validation_data = self._text_dataset(
                *validation_data, batch_size=batch_size) or validation_data
        elif isinstance(validation_data, tf.data.Dataset):
            validation_data = (self._text_dataset(validation_data)
                               or validation_data)
        if dataset is None:
            return super().fit(x=x, y=y, batch_size=batch_size,
                               sample_weight=sample_weight,
                               validation_data=validation_data, **kwargs)
        # Shuffled above; Keras does not shuffle a dataset (and warns).
        kwargs["shuffle"] = False
        return super().fit(dataset, validation_data=validation_data,
                           **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, sample_weight=None,
                 **kwargs):
        """`keras.Model.evaluate`, raw text accepted as in `fit`."""
        dataset = self._text_dataset(x, y, sample_weight, batch_size)
        if dataset is None:
            return super().evaluate(x=x, y=y, batch_size=batch_size,
                                    sample_weight=sample_weight, **kwargs)
        return super().evaluate(dataset, **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        """`keras.Model.predict`, raw text accepted as in `fit`; a dataset's
        batches of different lengths share one trace
        (`keras_internals.trace_predict_for`)."""
        dataset = self._text_dataset(x, batch_size=batch_size)
        if dataset is None:
            trace_predict_for(self, x)
            return super().predict(x, batch_size=batch_size, **kwargs)
        trace_predict_for(self, dataset)
        return super().predict(dataset, **kwargs)
