"""BERT for TensorFlow 2 / Keras 3 with the original google-research/bert
checkpoints: the one import name of this project.

    from bert_tf1 import BertClassifier
    model = BertClassifier.from_checkpoint("uncased_L-12_H-768_A-12/", num_labels=2)

Its subpackages `modeling`, `data`, `tasks`, `serving` and the scripts'
modules (`bert_tf1/run_classifier.py`, ...) are folders and files of this
package: the import path is the file path, in a clone and in a wheel alike
(docs/differences.md, "One import name"). The `run_*.py` files at the
repository root are shims that run these modules.

The names below are imported on first use: `import bert_tf1` loads no
TensorFlow and changes nothing in the process.
"""
from typing import TYPE_CHECKING

from bert_tf1.lazy_exports import lazy_exports

#: Public name -> the module that defines it.
_EXPORTS = {
    "BertConfig": "bert_tf1.modeling.config",
    "BertConfigError": "bert_tf1.modeling.config",
    "BertModel": "bert_tf1.modeling.models",
    "BertClassifier": "bert_tf1.modeling.models",
    "BertSquad": "bert_tf1.modeling.models",
    "BertTokenClassifier": "bert_tf1.modeling.models",
    "BertFeatureTagger": "bert_tf1.modeling.models",
    "BertMultipleChoice": "bert_tf1.modeling.models",
    "BertPretrainer": "bert_tf1.modeling.models",
    "SentenceEmbedder": "bert_tf1.modeling.models",
    "BertPreprocessor": "bert_tf1.data.tokenization",
    "FullTokenizer": "bert_tf1.data.tokenization",
    "create_optimizer": "bert_tf1.modeling.optimization",
    "load_tf1_checkpoint": "bert_tf1.modeling.checkpoints",
    "save_tf1_checkpoint": "bert_tf1.modeling.checkpoints",
    "export_model": "bert_tf1.serving",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # for editors and type checkers; Python loads them late
    from bert_tf1.modeling.config import BertConfig, BertConfigError
    from bert_tf1.modeling.models import (
        BertClassifier, BertFeatureTagger, BertModel, BertMultipleChoice,
        BertPretrainer, BertSquad, BertTokenClassifier, SentenceEmbedder)
    from bert_tf1.data.tokenization import BertPreprocessor, FullTokenizer
    from bert_tf1.modeling.optimization import create_optimizer
    from bert_tf1.modeling.checkpoints import (
        load_tf1_checkpoint, save_tf1_checkpoint)
    from bert_tf1.serving import export_model
