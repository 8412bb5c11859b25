"""Keras serialization of our layers and models.

Every layer, model, optimizer and learning-rate schedule registers under the
package `bert_tf1`, so `keras.models.load_model("m.keras")` finds the classes
once `modeling` is imported. A `BertConfig` argument is stored as its plain
dict; sub-layers are rebuilt from it in `__init__` (same weight paths, same
TF1 names, same tied MLM decoder).
"""
import keras

from bert_tf1.modeling.config import BertConfig

PACKAGE = "bert_tf1"


def register(cls):
    """Registers `cls` as `bert_tf1>ClassName` for Keras deserialization."""
    return keras.saving.register_keras_serializable(package=PACKAGE)(cls)


class BertConfigSerializable:
    """`get_config`/`from_config` for a class built from a `BertConfig`.

    For layers and models whose constructor takes `config` (a `BertConfig`,
    kept as `self.config`) plus Keras' own keyword arguments (`name`,
    `trainable`, `dtype`). Subclasses with more arguments add them to
    `get_config` (their `from_config` passes them on unchanged).
    """

    def get_config(self):
        # Layer's own (name, trainable, dtype), skipping a parent class's
        # other constructor arguments (TransposedDense's).
        config = keras.layers.Layer.get_config(self)
        config["config"] = self.config.to_dict()
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["config"] = BertConfig.from_dict(
            config["config"], source=f"{cls.__name__} config")
        return cls(**config)
