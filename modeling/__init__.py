"""Keras 3 BERT with the original google-research/bert weight layout.

    from modeling import BertConfig, BertModel, checkpoints
    config = BertConfig.from_json_file("bert_config.json")
    model = BertModel(config)
    checkpoints.load_tf1_checkpoint(model, "uncased_L-12_H-768_A-12/")

Subpackages, each one concept: `layers` (embeddings, attention, transformer,
heads), `models` (the encoder and the task models, their losses),
`checkpoints` (TF1 checkpoint files, loading, saving), `interop` (keras-hub
and Hugging Face converters), `optimization` (the original optimizer, LAMB,
the schedule), `training` (the fit loop, callbacks, training checkpoints,
strategies and precision). `config.py`, `naming.py` (the TF1 name of a
weight) and `keras_internals.py` (every private Keras/TF hook the project
uses) serve them all.
Imports go one way: nothing here imports `tasks/`, `serving/` or a script,
and of `data/` only `data/io` (tests/test_import_layers.py).

Importing `modeling` changes nothing in the process (no environment
variable, log handler or `atexit`); it raises ImportError when Keras runs
on another backend than TensorFlow. It registers every layer and model with
Keras (package `bert_tf1`, see `modeling/layers/serialization.py`), so
`model.save("m.keras")` and `keras.models.load_model("m.keras")` work
without `custom_objects`.
"""
import keras

if keras.backend.backend() != "tensorflow":
    # The layers use TensorFlow ops and the TF1 checkpoint format: no other
    # backend can run them. The backend is chosen when Keras is first
    # imported, so it cannot be switched from here.
    raise ImportError(
        f"modeling needs Keras' TensorFlow backend, but Keras uses "
        f"'{keras.backend.backend()}' (from KERAS_BACKEND or "
        f"~/.keras/keras.json): set KERAS_BACKEND=tensorflow before Keras "
        f"is first imported.")

from modeling import checkpoints  # noqa: E402
from modeling.config import BertConfig, BertConfigError  # noqa: E402
from modeling.models import (BertClassifier, BertFeatureTagger,  # noqa: E402
                             BertModel, BertMultipleChoice, BertPretrainer,
                             BertSquad, BertTokenClassifier)

__all__ = ["BertConfig", "BertConfigError", "BertModel", "BertClassifier",
           "BertFeatureTagger", "BertMultipleChoice", "BertPretrainer",
           "BertSquad", "BertTokenClassifier", "checkpoints"]
