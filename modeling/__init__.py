"""Keras 3 BERT with the original google-research/bert weight layout.

    from modeling import BertConfig, BertModel, checkpoints
    config = BertConfig.from_json_file("bert_config.json")
    model = BertModel(config)
    checkpoints.load_tf1_checkpoint(model, "uncased_L-12_H-768_A-12/")

Importing `modeling` registers every layer and model with Keras (package
`bert_tf1`, see `modeling/serialization.py`), so `model.save("m.keras")` and
`keras.models.load_model("m.keras")` work without `custom_objects`.
"""
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from modeling import checkpoints  # noqa: E402
from modeling.bert_model import BertModel  # noqa: E402
from modeling.config import BertConfig, BertConfigError  # noqa: E402
from modeling.models import BertClassifier, BertPretrainer, BertSquad  # noqa: E402

__all__ = ["BertConfig", "BertConfigError", "BertModel", "BertClassifier",
           "BertPretrainer", "BertSquad", "checkpoints"]
