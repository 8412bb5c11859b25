"""The encoder and the task models built on it, one model per file
(docs/architecture.md). Weight paths are `<model name>/<TF1 name>`
(`bert_tf1/modeling/naming.py`).
"""
from bert_tf1.modeling.models.bert_model import BertModel
from bert_tf1.modeling.models.classifier import BertClassifier
from bert_tf1.modeling.models.feature_tagger import BertFeatureTagger
from bert_tf1.modeling.models.multiple_choice import BertMultipleChoice
from bert_tf1.modeling.models.pretrainer import BertPretrainer
from bert_tf1.modeling.models.sentence_embedder import SentenceEmbedder
from bert_tf1.modeling.models.squad import BertSquad
from bert_tf1.modeling.models.tagger import BertTokenClassifier

__all__ = ["BertModel", "BertClassifier", "BertFeatureTagger",
           "BertMultipleChoice", "BertPretrainer", "BertSquad",
           "BertTokenClassifier", "SentenceEmbedder"]
