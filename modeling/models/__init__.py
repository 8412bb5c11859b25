"""The encoder and the task models built on it, one model per file.

`BertModel` (the encoder), `BertPretrainer`, `BertClassifier`, `BertSquad`
(the original scripts' models), `BertTokenClassifier` and
`BertMultipleChoice` (the paper's tagging and SWAG), `BertFeatureTagger`
(the paper's feature-based approach); `losses`, `pretrained`
(`from_checkpoint`), `task` (what the task models share). Weight paths are
`<model name>/<TF1 name>`, so the TF1 name is the path without its first
component (`modeling/naming.py`).
"""
from bert_tf1.modeling.models.bert_model import BertModel
from bert_tf1.modeling.models.classifier import (CLASSIFIER_DROPOUT,
                                                 CLASSIFIER_INITIALIZER_RANGE,
                                                 BertClassifier)
from bert_tf1.modeling.models.feature_tagger import (FEATURE_LAYERS,
                                                     BertFeatureTagger)
from bert_tf1.modeling.models.multiple_choice import BertMultipleChoice
from bert_tf1.modeling.models.pretrainer import BertPretrainer
from bert_tf1.modeling.models.squad import BertSquad
from bert_tf1.modeling.models.tagger import BertTokenClassifier

__all__ = ["BertModel", "BertClassifier", "BertFeatureTagger",
           "BertMultipleChoice", "BertPretrainer", "BertSquad",
           "BertTokenClassifier", "FEATURE_LAYERS",
           "CLASSIFIER_DROPOUT", "CLASSIFIER_INITIALIZER_RANGE"]
