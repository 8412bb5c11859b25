"""The encoder and the task models built on it, one model per file.

- `bert_model.BertModel`: the encoder (`bert/*` weights);
- `pretrainer.BertPretrainer`, `classifier.BertClassifier`,
  `squad.BertSquad`: the original scripts' task models;
- `tagger.BertTokenClassifier` (sequence tagging, paper §5.3) and
  `multiple_choice.BertMultipleChoice` (SWAG, paper §4.4): the paper's
  tasks the original never shipped;
- `feature_tagger.BertFeatureTagger` (the feature-based approach, paper
  §5.3 Table 7: frozen encoder, BiLSTM);
- `losses`: the per-example and training losses their `compute_loss` uses
  (a `compile(loss=)` loss replaces them; `sample_weight` weights examples);
- `pretrained`: `from_checkpoint` (Google, fine-tuned, Hugging Face and
  keras-hub folders); `task`: what the task models share (`encoder=`,
  `preprocessor=` for raw text in `fit`/`evaluate`/`predict`).

Each task model builds every weight when constructed. Weight paths are
`<task model name>/<TF1 name>` for the head and `<encoder name>/bert/...` for
the encoder, so the TF1 name is always the path without its first component
(`modeling/naming.py`).
"""
from modeling.models.bert_model import BertModel
from modeling.models.classifier import (CLASSIFIER_DROPOUT,
                                        CLASSIFIER_INITIALIZER_RANGE,
                                        BertClassifier)
from modeling.models.feature_tagger import (FEATURE_LAYERS,
                                            BertFeatureTagger)
from modeling.models.multiple_choice import BertMultipleChoice
from modeling.models.pretrainer import BertPretrainer
from modeling.models.squad import BertSquad
from modeling.models.tagger import BertTokenClassifier

__all__ = ["BertModel", "BertClassifier", "BertFeatureTagger",
           "BertMultipleChoice", "BertPretrainer", "BertSquad",
           "BertTokenClassifier", "FEATURE_LAYERS",
           "CLASSIFIER_DROPOUT", "CLASSIFIER_INITIALIZER_RANGE"]
