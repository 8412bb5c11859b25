"""Keras 3 BERT with the original google-research/bert weight layout.

    from bert_tf1.modeling import BertConfig, BertModel, checkpoints
    config = BertConfig.from_json_file("bert_config.json")
    model = BertModel(config)
    checkpoints.load_tf1_checkpoint(model, "uncased_L-12_H-768_A-12/")

Subpackages: docs/architecture.md. Importing `modeling` changes nothing in
the process; it registers every layer and model with Keras (so `.keras`
files load without `custom_objects`) and raises ImportError when Keras runs
on another backend than TensorFlow.
"""
import keras

if keras.backend.backend() != "tensorflow":
    # TensorFlow ops and the TF1 checkpoint format: no other backend.
    raise ImportError(
        f"modeling needs Keras' TensorFlow backend, but Keras uses "
        f"'{keras.backend.backend()}' (from KERAS_BACKEND or "
        f"~/.keras/keras.json): set KERAS_BACKEND=tensorflow before Keras "
        f"is first imported.")

from bert_tf1.modeling import checkpoints  # noqa: E402
from bert_tf1.modeling.config import BertConfig, BertConfigError  # noqa: E402
from bert_tf1.modeling.models import (BertClassifier, BertFeatureTagger,  # noqa: E402
                             BertModel, BertMultipleChoice, BertPretrainer,
                             BertSquad, BertTokenClassifier,
                             SentenceEmbedder)

__all__ = ["BertConfig", "BertConfigError", "BertModel", "BertClassifier",
           "BertFeatureTagger", "BertMultipleChoice", "BertPretrainer",
           "BertSquad", "BertTokenClassifier", "SentenceEmbedder", "checkpoints"]
