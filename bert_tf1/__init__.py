"""BERT for TensorFlow 2 / Keras 3 with the original google-research/bert
checkpoints: the one import name of this project.

    from bert_tf1 import BertClassifier
    model = BertClassifier.from_checkpoint("uncased_L-12_H-768_A-12/", num_labels=2)

The folders and `run_*.py` scripts at the repository root are its
subpackages and modules (docs/differences.md, "One import name"): a wheel
holds them inside this folder, in a clone this package reaches the root.

The names below are imported on first use: `import bert_tf1` loads no
TensorFlow and changes nothing in the process.
"""
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_CLONE_ROOT = os.path.dirname(_HERE)
if (not os.path.isdir(os.path.join(_HERE, "modeling"))
        and os.path.isfile(os.path.join(_CLONE_ROOT, "modeling", "__init__.py"))):
    # A clone (or an editable install): the subpackages sit beside this folder.
    __path__.append(_CLONE_ROOT)  # noqa: F821  (a package's own __path__)

from bert_tf1.lazy_exports import lazy_exports  # noqa: E402

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
    "BertPreprocessor": "bert_tf1.data.tokenization",
    "FullTokenizer": "bert_tf1.data.tokenization",
    "create_optimizer": "bert_tf1.modeling.optimization",
    "load_tf1_checkpoint": "bert_tf1.modeling.checkpoints",
    "save_tf1_checkpoint": "bert_tf1.modeling.checkpoints",
    "export_saved_model": "bert_tf1.serving",
    "export_model": "bert_tf1.serving",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
