"""A model file of another kind than BERT, named before it is read as BERT.

RoBERTa, DistilBERT, ELECTRA, ALBERT, ... files share many names with
BERT's, so a converter or loader that maps names would take them and give a
silently wrong model (another tokenizer, position offset, shared layers).
Each check below reads only names (a config's `model_type`, tensor or
variable names) and raises `OtherModelError`: the file, what it is, what
was expected. Our own table: no library says "this is not BERT" for a file.
"""
import re

from bert_tf1.data.io.errors import UserError

#: What a BERT file of each reader is, for the messages.
_EXPECTED_HF = "a BERT model (model_type 'bert', architectures Bert*)"
_EXPECTED_TF1 = ("a BERT checkpoint (bert/embeddings/..., "
                 "bert/encoder/layer_<i>/...)")
#: First dotted part of a BERT Hugging Face tensor name (heads included).
_BERT_HF_PARTS = {"bert", "embeddings", "encoder", "pooler", "cls",
                  "classifier", "qa_outputs"}
#: (pattern of a TF1 variable name, the model it belongs to), first match.
_OTHER_TF1 = (
    (re.compile(r"^bert/encoder/(transformer/group_\d+/|"
                r"embedding_hidden_mapping_in/)"),
     "ALBERT (shared layer groups)"),
    (re.compile(r"^(electra|discriminator_predictions|generator"
                r"|generator_predictions)/"), "ELECTRA"),
    (re.compile(r"^(roberta|distilbert|albert|deberta|xlnet|transformer)/"),
     None),
)


class OtherModelError(UserError):
    """A file holds a model of another kind than the reader expects."""


def _raise(path, found, expected):
    raise OtherModelError(f"{path}: {found}; expected {expected}. This "
                          "reader takes BERT only: converting it would give "
                          "a silently wrong model")


def _base_architecture(name):
    """transformers' class name without a TF/Flax prefix."""
    return re.sub(r"^(TF|Flax)(?=[A-Z])", "", str(name))


def check_hf_config(hf, path):
    """A Hugging Face `config.json` dict says BERT: `model_type` "bert" (or
    none, as older files), every `architectures` entry a Bert* class
    (`BertForMaskedLM`, `TFBertModel`, ... stay accepted).

    Raises:
        OtherModelError: naming `path`, the model_type / architecture.
    """
    model_type = hf.get("model_type")
    architectures = [str(name) for name in hf.get("architectures") or []]
    also = f" (architectures {', '.join(architectures)})" if (
        architectures) else ""
    if model_type is not None and model_type != "bert":
        _raise(path, f"model_type {model_type!r}{also}", _EXPECTED_HF)
    other = [name for name in architectures
             if not _base_architecture(name).startswith("Bert")]
    if other:
        _raise(path, f"architectures {', '.join(other)}", _EXPECTED_HF)


def check_hf_tensors(names, path):
    """Every tensor name of a safetensors file is a BERT one (`bert.*`, a
    bare BertModel's `embeddings.*`/`encoder.*`/`pooler.*`, the heads).

    Raises:
        OtherModelError: naming `path` and the first other prefix.
    """
    for name in sorted(names):
        if name.split(".", 1)[0] not in _BERT_HF_PARTS:
            prefix = name.split(".", 1)[0] + "."
            _raise(path, f"tensor {name!r} has the prefix {prefix!r} of "
                   "another model", "BERT tensors (bert.*, or the "
                   "embeddings.*/encoder.*/pooler.* of a BertModel)")


def check_keras_hub_config(preset_config, path):
    """A keras-hub preset's `config.json` dict names a BertBackbone.

    Raises:
        OtherModelError: naming `path` and the class it names.
    """
    name = str(preset_config.get("class_name", ""))
    if name and name != "BertBackbone":
        _raise(path, f"a {name} preset", "a BertBackbone preset")


def check_tf1_names(names, path):
    """A TF1 checkpoint's variable names are no other model's (ALBERT's
    shared layers, ELECTRA's discriminator, ...).

    Raises:
        OtherModelError: naming `path`, the model and one of its names.
    """
    for pattern, model in _OTHER_TF1:
        name = next((name for name in sorted(names) if pattern.match(name)),
                    None)
        if name is not None:
            model = model or name.split("/", 1)[0]
            _raise(path, f"a checkpoint of {model} (it holds {name!r})",
                   _EXPECTED_TF1)
