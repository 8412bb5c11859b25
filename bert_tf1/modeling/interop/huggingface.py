"""TF1 BERT weights <-> Hugging Face `transformers` BERT safetensors.

Read and written with `safetensors.numpy` (no torch). The name of every
weight on each side, and which are transposed (TF1 dense kernels are
[in, out], torch `Linear.weight` [out, in]): docs/moving_weights.md
("Weight names"). `classifier.*` is the TF1 head the `architectures` entry
of `config.json` names (sequence classification by default). Reading
accepts the older `LayerNorm.{gamma,beta}` names; a file without a pooler
(question answering, token classification) gets a zero one, which those
heads never use.
"""
import json
import os
import re
import shutil

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

from bert_tf1.data.io.errors import MissingFileError, UserError, reading_file
from bert_tf1.data.io.text_files import read_json
from bert_tf1.modeling.checkpoints import model_kind
from bert_tf1.modeling.config import BertConfig
from bert_tf1.modeling.naming import encoder_weight_shapes
from bert_tf1.data.io.atomic import write_directory_atomically

WEIGHTS_NAME = "model.safetensors"
INDEX_NAME = "model.safetensors.index.json"
CONFIG_NAME = "config.json"

_HEADS = (  # TF1 prefix -> HF prefix, outside the encoder
    ("cls/predictions/output_bias", "cls.predictions.bias"),
    ("cls/seq_relationship/output_weights", "cls.seq_relationship.weight"),
    ("cls/seq_relationship/output_bias", "cls.seq_relationship.bias"),
    ("cls/squad/output_weights", "qa_outputs.weight"),
    ("cls/squad/output_bias", "qa_outputs.bias"),
    ("output_weights", "classifier.weight"),
    ("output_bias", "classifier.bias"),
    ("cls/tagging/output_weights", "classifier.weight"),
    ("cls/tagging/output_bias", "classifier.bias"),
    ("cls/multiple_choice/output_weights", "classifier.weight"),
    ("cls/multiple_choice/output_bias", "classifier.bias"),
)
TOKEN_CLASSIFICATION = "BertForTokenClassification"
MULTIPLE_CHOICE = "BertForMultipleChoice"
# The TF1 scope of `classifier.*` per architecture (default: root).
_CLASSIFIER_SCOPES = {TOKEN_CLASSIFICATION: "cls/tagging/",
                      MULTIPLE_CHOICE: "cls/multiple_choice/"}
# The architecture of a weight dict: that of the first head present.
_ARCHITECTURES = (("cls/predictions/output_bias", "BertForPreTraining"),
                  ("cls/squad/output_weights", "BertForQuestionAnswering"),
                  ("cls/tagging/output_weights", TOKEN_CLASSIFICATION),
                  ("cls/multiple_choice/output_weights", MULTIPLE_CHOICE),
                  ("output_weights", "BertForSequenceClassification"))
# Config keys named alike in both, with transformers' `BertConfig` defaults.
_SHARED_CONFIG = {"hidden_size": 768, "num_hidden_layers": 12,
                  "num_attention_heads": 12, "intermediate_size": 3072,
                  "hidden_dropout_prob": 0.1,
                  "attention_probs_dropout_prob": 0.1,
                  "max_position_embeddings": 512, "type_vocab_size": 2,
                  "initializer_range": 0.02}
# Architectures whose transformers class has no pooler.
_NO_POOLER = {"cls/squad/output_weights", "cls/tagging/output_weights"}
_LEAVES = {"kernel": "weight", "gamma": "weight", "beta": "bias",
           "bias": "bias"}
_ACTIVATIONS_TO_HF = {"gelu": "gelu_new", "gelu_exact": "gelu", "relu": "relu",
                      "tanh": "tanh", "linear": "linear"}
_ACTIVATIONS_FROM_HF = {theirs: ours for ours, theirs
                        in _ACTIVATIONS_TO_HF.items()}
_ACTIVATIONS_FROM_HF["gelu_pytorch_tanh"] = "gelu"
# Every encoder/transform weight name the table covers (heads: _HEADS),
# layer_0 standing for every layer.
_KNOWN_TF1 = set(encoder_weight_shapes(BertConfig(1, num_hidden_layers=1))) | {
    f"cls/predictions/transform/{leaf}" for leaf in (
        "dense/kernel", "dense/bias", "LayerNorm/gamma", "LayerNorm/beta")}
_DECODER_WEIGHT = "cls.predictions.decoder.weight"
_DECODER_BIAS = "cls.predictions.decoder.bias"


def hf_name(tf1_name, prefix="bert."):
    """(HF name, transpose?) of a TF1 weight name, by the table above.

    Args:
        prefix: "bert." for the task models' files, "" for a `BertModel`.

    Raises:
        ValueError: a name the table does not cover.
    """
    for ours, theirs in _HEADS:
        if tf1_name == ours:
            return theirs, False
    if re.sub(r"/layer_\d+/", "/layer_0/", tf1_name) not in _KNOWN_TF1:
        raise UserError(f"No Hugging Face name for TF1 weight {tf1_name!r}.")
    if tf1_name.endswith("_embeddings"):
        return prefix + tf1_name[len("bert/"):].replace("/", ".") + ".weight", False
    scope, _, leaf = tf1_name.rpartition("/")
    if scope.startswith("bert/"):
        scope = prefix + scope[len("bert/"):]
    scope = scope.replace("/layer_", "/layer/").replace("/", ".")
    return f"{scope}.{_LEAVES[leaf]}", leaf == "kernel"


# A bare BertModel's HF name (no "bert.") -> TF1 name, for `tf1_name`.
_HF_TO_TF1 = {hf_name(name, "")[0]: name for name in _KNOWN_TF1}


def tf1_name(name, architecture_name=None):
    """(TF1 name, transpose?) of an HF tensor name (either prefix), or None
    for tensors with no TF1 counterpart (`position_ids`, the tied decoder).
    `architecture_name` (config.json `architectures`) decides the scope of
    `classifier.*`.

    Raises:
        ValueError: a name the table does not cover.
    """
    if name.endswith("embeddings.position_ids") or name in (_DECODER_WEIGHT,
                                                            _DECODER_BIAS):
        return None
    if name in ("classifier.weight", "classifier.bias"):
        scope = _CLASSIFIER_SCOPES.get(architecture_name, "")
        leaf = "weights" if name.endswith("weight") else "bias"
        return f"{scope}output_{leaf}", False
    for ours, theirs in _HEADS:
        if name == theirs:
            return ours, False
    bare = name[len("bert."):] if name.startswith("bert.") else name
    scope, _, leaf = bare.rpartition(".")
    if scope.endswith("LayerNorm"):  # also the older gamma/beta names
        leaf = {"gamma": "weight", "beta": "bias"}.get(leaf, leaf)
    ours = _HF_TO_TF1.get(re.sub(r"\.layer\.\d+\.", ".layer.0.",
                                 f"{scope}.{leaf}"))
    if ours is None:
        raise UserError(f"No TF1 name for Hugging Face tensor {name!r}.")
    layer = re.search(r"\.layer\.(\d+)\.", bare)
    if layer:
        ours = ours.replace("/layer_0/", f"/layer_{layer[1]}/")
    return ours, ours.endswith("/kernel")


def architecture(weights):
    """The HF class whose weights these are: by the heads present."""
    return next((arch for head, arch in _ARCHITECTURES if head in weights),
                "BertModel")


def tf1_to_hf(weights):
    """{HF name: array} of a TF1 weight dict (kernels transposed, copied).

    The prefix follows `architecture(weights)`: none for a bare encoder.

    Raises:
        ValueError: a TF1 name the table does not cover.
    """
    prefix = "" if architecture(weights) == "BertModel" else "bert."
    tensors = {}
    for name, value in weights.items():
        theirs, transpose = hf_name(name, prefix)
        value = np.asarray(value)
        tensors[theirs] = np.ascontiguousarray(value.T if transpose else value)
    return tensors


def hf_to_tf1(tensors, architecture_name=None):
    """{TF1 name: array} of HF tensors (kernels transposed back).

    Args:
        tensors: {transformers name: array}.
        architecture_name: the transformers class (see `tf1_name`).

    Raises:
        ValueError: an unknown tensor name, or a decoder weight that differs
            from the word embeddings (our masked LM ties them).
    """
    weights = {}
    for name, value in tensors.items():
        ours = tf1_name(name, architecture_name)
        if ours is not None:
            weights[ours[0]] = np.ascontiguousarray(value.T if ours[1] else value)
    word = "bert/embeddings/word_embeddings"
    if _DECODER_WEIGHT in tensors:
        if word not in weights:
            weights[word] = tensors[_DECODER_WEIGHT]
        elif not np.array_equal(weights[word], tensors[_DECODER_WEIGHT]):
            raise UserError(f"{_DECODER_WEIGHT} differs from the word "
                            "embeddings; this model ties them.")
    if _DECODER_BIAS in tensors and "cls/predictions/output_bias" not in weights:
        weights["cls/predictions/output_bias"] = tensors[_DECODER_BIAS]
    pooler = ("bert/pooler/dense/kernel", "bert/pooler/dense/bias")
    head = next((name for name in sorted(_NO_POOLER) if name in weights), None)
    if head and pooler[0] not in weights:
        # transformers' BertForQuestionAnswering / BertForTokenClassification
        # have no pooler; the original BertModel always has one, unused by
        # these heads: zeros.
        hidden_size = weights[head].shape[1]
        weights[pooler[0]] = np.zeros((hidden_size, hidden_size), np.float32)
        weights[pooler[1]] = np.zeros((hidden_size,), np.float32)
    return weights


def hf_config(config, architecture_name, num_labels=None, label_names=None):
    """HF `config.json` dict for a `BertConfig`.

    Args:
        num_labels: written as `id2label`/`label2id` ("0", "1", ... unless
            `label_names` gives the names, in id order).
    """
    if config.hidden_act.lower() not in _ACTIVATIONS_TO_HF:
        raise UserError(f"hidden_act {config.hidden_act!r} has no Hugging "
                        "Face equivalent.")
    result = {
        "architectures": [architecture_name], "model_type": "bert",
        "vocab_size": config.vocab_size,
        **{key: getattr(config, key) for key in _SHARED_CONFIG},
        "hidden_act": _ACTIVATIONS_TO_HF[config.hidden_act.lower()],
        "layer_norm_eps": 1e-12, "pad_token_id": 0,
        "position_embedding_type": "absolute",
    }
    if num_labels:
        names = list(label_names or [str(i) for i in range(num_labels)])
        if len(names) != num_labels:
            raise UserError(f"{len(names)} label names for a head of "
                            f"{num_labels} labels.")
        result["id2label"] = {str(i): name for i, name in enumerate(names)}
        result["label2id"] = {name: i for i, name in enumerate(names)}
    return result


def config_from_hf(hf, source=CONFIG_NAME):
    """`BertConfig` from an HF config dict.

    Raises:
        ValueError: a setting our model does not implement (layer_norm_eps
            other than 1e-12, relative positions, an unknown activation).
    """
    act = str(hf.get("hidden_act", "gelu")).lower()
    if act not in _ACTIVATIONS_FROM_HF:
        raise UserError(f"{source}: hidden_act {act!r} is not supported "
                        f"(known: {sorted(_ACTIVATIONS_FROM_HF)}).")
    eps = hf.get("layer_norm_eps", 1e-12)
    if abs(eps - 1e-12) > 1e-15:
        raise UserError(f"{source}: layer_norm_eps {eps}; this model uses "
                        "1e-12 only.")
    position = hf.get("position_embedding_type", "absolute")
    if position != "absolute":
        raise UserError(f"{source}: position_embedding_type {position!r}; "
                        "only 'absolute' is supported.")
    values = {key: hf.get(key, default)
              for key, default in _SHARED_CONFIG.items()}
    if "vocab_size" in hf:
        values["vocab_size"] = hf["vocab_size"]
    return BertConfig.from_dict(dict(values, hidden_act=_ACTIVATIONS_FROM_HF[act]),
                                source=source)


def save_hf(weights, config, output_dir, vocab_file=None, do_lower_case=True,
            label_names=None):
    """Writes `model.safetensors` and `config.json` (plus `vocab.txt` and
    `tokenizer_config.json` with `vocab_file`) to a new directory that
    `transformers` loads; `label_names` become a token classifier's
    `id2label`.

    Returns:
        (output_dir, architecture name).

    Raises:
        FileExistsError: output_dir exists.
        ValueError: a name the table does not cover.
    """
    arch = architecture(weights)
    tensors = tf1_to_hf(weights)
    head = {"BertForSequenceClassification": "output_weights",
            TOKEN_CLASSIFICATION: "cls/tagging/output_weights"}.get(arch)
    num_labels = weights[head].shape[0] if head else None
    if arch != TOKEN_CLASSIFICATION:
        label_names = None

    def write(tmp_dir):
        os.makedirs(tmp_dir, exist_ok=True)
        config_path = os.path.join(tmp_dir, CONFIG_NAME)
        _write_json(config_path,
                    hf_config(config, arch, num_labels, label_names))
        weights_path = os.path.join(tmp_dir, WEIGHTS_NAME)
        save_file(tensors, weights_path, metadata={"format": "pt"})
        # safetensors creates its file 0600; give it the mode open() gave
        # config.json (0666 minus the umask), as every other output has.
        shutil.copymode(config_path, weights_path)
        if vocab_file:
            shutil.copyfile(vocab_file, os.path.join(tmp_dir, "vocab.txt"))
            _write_json(os.path.join(tmp_dir, "tokenizer_config.json"),
                        {"tokenizer_class": "BertTokenizer",
                         "do_lower_case": bool(do_lower_case)})

    return write_directory_atomically(output_dir, write), arch


def _write_json(path, value):
    with open(path, "w", encoding="utf-8") as writer:
        json.dump(value, writer, indent=2, sort_keys=True)
        writer.write("\n")


def load_hf(path):
    """(weights, config) from an HF model directory (`config.json` plus
    `model.safetensors`, or the shards its `model.safetensors.index.json`
    lists).

    Raises:
        FileNotFoundError: no config.json or no safetensors file there (a
            `pytorch_model.bin` is not read: convert it to safetensors with
            transformers first).
        ValueError: unknown tensor names or an unsupported config.
        OtherModelError: a config or tensors of another model (RoBERTa, ...;
            `bert_tf1.modeling.checkpoints.model_kind`).
    """
    path = os.fspath(path)
    config_path, hf = _read_hf_config(path)
    model_kind.check_hf_config(hf, config_path)
    config = config_from_hf(hf, source=config_path)
    index_path = os.path.join(path, INDEX_NAME)
    if os.path.isfile(index_path):
        with reading_file(index_path, "safetensors index (JSON with a "
                          "\"weight_map\")"):
            with open(index_path, encoding="utf-8") as reader:
                shards = sorted(set(json.load(reader)["weight_map"].values()))
    elif os.path.isfile(os.path.join(path, WEIGHTS_NAME)):
        shards = [WEIGHTS_NAME]
    else:
        raise MissingFileError(
            f"No {WEIGHTS_NAME} or {INDEX_NAME} in {path}; a pytorch_model.bin "
            "must first be saved as safetensors (transformers: "
            "save_pretrained(..., safe_serialization=True)).")
    tensors = {}
    for shard in shards:
        shard_path = os.path.join(path, shard)
        if not os.path.isfile(shard_path):
            raise MissingFileError(
                f"{shard_path}: missing (listed in {index_path})")
        with reading_file(shard_path, "safetensors weights file"):
            with safe_open(shard_path, framework="np") as reader:
                # The header only, checked before any tensor is read.
                model_kind.check_hf_tensors(list(reader.keys()), shard_path)
            tensors.update(load_file(shard_path))
    return hf_to_tf1(tensors, _architecture_of(hf)), config


def _read_hf_config(path):
    """(path, dict) of the folder's config.json; MissingFileError without."""
    config_path = os.path.join(os.fspath(path), CONFIG_NAME)
    if not os.path.isfile(config_path):
        raise MissingFileError(f"No {CONFIG_NAME} in {path} (expected a "
                               "Hugging Face model directory).")
    return config_path, read_json(config_path,
                                  "a Hugging Face config (JSON)")


def _architecture_of(hf):
    names = hf.get("architectures") or [None]
    return names[0]


def read_label_names(path):
    """A token classifier's tag names from its `config.json` `id2label`, in
    id order; None for other architectures, or when the names are only the
    default "LABEL_k" / "k" (which say nothing).

    Raises:
        UserError: no config.json, or an `id2label` whose ids are not
            0..n-1.
    """
    config_path, hf = _read_hf_config(path)
    if _architecture_of(hf) != TOKEN_CLASSIFICATION:
        return None
    id2label = hf.get("id2label") or {}
    try:
        names = [id2label[str(i)] for i in range(len(id2label))]
    except KeyError:
        raise UserError(f"{config_path}: id2label keys must be 0..n-1, got "
                        f"{sorted(id2label)}.") from None
    defaults = ({str(i) for i in range(len(names))},
                {f"LABEL_{i}" for i in range(len(names))})
    return None if set(names) in defaults else names
