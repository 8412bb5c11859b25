"""Keras serialization of our layers and models.

Every layer, model, optimizer and learning-rate schedule registers under the
package `bert_tf1` (the one registration package), so
`keras.models.load_model("m.keras")` finds the classes without
`custom_objects` once `modeling` is imported. A `BertConfig` argument is
stored in the Keras config as its plain dict (`BertConfig.to_dict`) and turned
back into a `BertConfig` by `from_config`.

Sub-layers are not serialized one by one: each layer and model creates its
sub-layers in `__init__` from the `BertConfig`, so rebuilding the top object
from its config rebuilds the same tree, with the same weight paths (hence the
same TF1 names, see `modeling/naming.py`) and the same tied MLM decoder.
"""
import keras

from modeling.config import BertConfig

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
        # keras.layers.Layer.get_config gives name, trainable and dtype: the
        # Keras arguments. Called directly so that a parent class with other
        # constructor arguments (TransposedDense) does not add its own.
        config = keras.layers.Layer.get_config(self)
        config["config"] = self.config.to_dict()
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["config"] = BertConfig.from_dict(
            config["config"], source=f"{cls.__name__} config")
        return cls(**config)
