"""The encoder and the task models built on it, one model per file.

- `bert_model.BertModel`: the encoder (`bert/*` weights);
- `pretrainer.BertPretrainer`, `classifier.BertClassifier`,
  `squad.BertSquad`: the original scripts' task models;
- `losses`: the per-example and training losses their `compute_loss` uses.

Each task model builds every weight when constructed. Weight paths are
`<task model name>/<TF1 name>` for the head and `<encoder name>/bert/...` for
the encoder, so the TF1 name is always the path without its first component
(`modeling/naming.py`).
"""
from modeling.models.bert_model import BertModel
from modeling.models.classifier import (CLASSIFIER_DROPOUT,
                                        CLASSIFIER_INITIALIZER_RANGE,
                                        BertClassifier)
from modeling.models.pretrainer import BertPretrainer
from modeling.models.squad import BertSquad

__all__ = ["BertModel", "BertClassifier", "BertPretrainer", "BertSquad",
           "CLASSIFIER_DROPOUT", "CLASSIFIER_INITIALIZER_RANGE"]
