"""TF1 BERT weights <-> keras-hub `BertBackbone` (no heads: cls/*,
output_*). Names and shapes: docs/moving_weights.md ("Weight names"); the
attention reshapes are exact: the original splits [H] into heads as [A, D]
(head-major), the order of keras' EinsumDense kernels.
"""
import math
import os

import keras_hub

from bert_tf1.data.io.errors import MissingFileError, UserError, reading_file
from bert_tf1.data.io.text_files import read_json
from bert_tf1.modeling.checkpoints import model_kind
from bert_tf1.modeling.config import BertConfig
from bert_tf1.modeling.naming import encoder_weight_shapes
from bert_tf1.data.io.atomic import (OutputExistsError, atomic_output,
                                    write_directory_atomically)

WEIGHTS_SUFFIX = ".weights.h5"

_RENAMES = (
    ("bert/embeddings/word_embeddings", "token_embedding/embeddings"),
    ("bert/embeddings/position_embeddings", "position_embedding/embeddings"),
    ("bert/embeddings/token_type_embeddings", "segment_embedding/embeddings"),
    ("bert/embeddings/LayerNorm/", "embeddings_layer_norm/"),
    ("bert/pooler/dense/", "pooled_dense/"),
)
_LAYER_RENAMES = (
    ("attention/self/", "self_attention_layer/"),
    ("attention/output/dense/", "self_attention_layer/attention_output/"),
    ("attention/output/LayerNorm/", "self_attention_layer_norm/"),
    ("intermediate/dense/", "feedforward_intermediate_dense/"),
    ("output/dense/", "feedforward_output_dense/"),
    ("output/LayerNorm/", "feedforward_layer_norm/"),
)
_LAYER_PREFIX = "bert/encoder/layer_"
# `BertBackbone` argument and attribute -> `BertConfig` field.
_BACKBONE_ARGS = {"vocabulary_size": "vocab_size",
                  "num_layers": "num_hidden_layers",
                  "num_heads": "num_attention_heads",
                  "hidden_dim": "hidden_size",
                  "intermediate_dim": "intermediate_size",
                  "dropout": "hidden_dropout_prob",
                  "max_sequence_length": "max_position_embeddings",
                  "num_segments": "type_vocab_size"}


def keras_hub_path(tf1_name):
    """BertBackbone weight path of a TF1 encoder weight name, or None for a
    name with no place in a backbone (heads)."""
    for ours, theirs in _RENAMES:
        if tf1_name.startswith(ours):
            return theirs + tf1_name[len(ours):]
    if tf1_name.startswith(_LAYER_PREFIX):
        index, _, rest = tf1_name[len(_LAYER_PREFIX):].partition("/")
        for ours, theirs in _LAYER_RENAMES:
            if rest.startswith(ours):
                return f"transformer_layer_{index}/{theirs}{rest[len(ours):]}"
    return None


def backbone_for_config(config):
    """An untrained `keras_hub.models.BertBackbone` shaped as `config`.

    Raises:
        ValueError: `hidden_act` is not "gelu" (the backbone's only
            activation).
    """
    if config.hidden_act.lower() != "gelu":
        raise UserError(
            f"keras-hub's BertBackbone uses tanh-gelu only; this config has "
            f"hidden_act {config.hidden_act!r}.")
    return keras_hub.models.BertBackbone(**{
        theirs: getattr(config, ours) for theirs, ours in _BACKBONE_ARGS.items()})


def config_for_backbone(backbone):
    """The `BertConfig` of a `BertBackbone` (initializer_range 0.02, the
    backbone's initializer)."""
    return BertConfig(
        **{ours: getattr(backbone, theirs)
           for theirs, ours in _BACKBONE_ARGS.items()},
        hidden_act="gelu", attention_probs_dropout_prob=backbone.dropout,
        initializer_range=0.02)


def tf1_to_backbone(weights, config):
    """A `BertBackbone` holding the `bert/*` weights of a TF1 weight dict
    (other names ignored), shaped as `config`.

    Raises:
        UserError: a backbone weight has no TF1 counterpart, or a shape does
            not fit after the reshape.
    """
    backbone = backbone_for_config(config)
    by_path = {variable.path: variable for variable in backbone.weights}
    sources = {keras_hub_path(name): name for name in weights
               if keras_hub_path(name) is not None}
    missing = sorted(set(by_path) - set(sources))
    if missing:
        raise UserError(f"The TF1 weights lack {len(missing)} backbone "
                        f"weight(s), e.g. {missing[:3]}.")
    for path, variable in by_path.items():
        value = weights[sources[path]]
        if value.size != math.prod(variable.shape):
            raise UserError(f"{sources[path]} {list(value.shape)} does not fit "
                            f"{path} {list(variable.shape)}.")
        variable.assign(value.reshape(variable.shape))
    return backbone


def backbone_to_tf1(backbone):
    """(weights, config): the TF1 `bert/*` weight dict of a `BertBackbone`.

    Raises:
        ValueError: the backbone has a weight this table does not know.
    """
    config = config_for_backbone(backbone)
    template = {keras_hub_path(name): (name, shape) for name, shape
                in encoder_weight_shapes(config).items()}
    weights = {}
    for variable in backbone.weights:
        if variable.path not in template:
            raise ValueError(f"Backbone weight {variable.path} has no TF1 "
                             "counterpart.")
        name, shape = template[variable.path]
        weights[name] = variable.numpy().reshape(shape)
    return weights, config


def save_backbone(backbone, path, vocab_file=None, do_lower_case=True):
    """Writes a backbone as a keras-hub preset folder (plus its tokenizer when
    `vocab_file` is given) or, for a path ending in `.weights.h5`, a weights
    file; atomically.

    Raises:
        FileExistsError: path exists.
    """
    path = os.fspath(path)
    if path.endswith(WEIGHTS_SUFFIX):
        if os.path.exists(path):
            raise OutputExistsError(f"Output {path} already exists; not "
                                  "overwriting it. Choose a new path.")
        # Keras wants the `.weights.h5` ending on the file it writes: keep it
        # as the suffix moved into place.
        with atomic_output(path[:-len(WEIGHTS_SUFFIX)],
                           suffixes=(WEIGHTS_SUFFIX,)) as temp:
            backbone.save_weights(temp + WEIGHTS_SUFFIX)
        return path

    def write(tmp_dir):
        backbone.save_to_preset(tmp_dir)
        if vocab_file:
            keras_hub.models.BertTokenizer(
                vocabulary=vocab_file, lowercase=do_lower_case).save_to_preset(tmp_dir)

    return write_directory_atomically(path, write)


def load_backbone(path, config=None):
    """A `BertBackbone` from a preset folder, or from a `.weights.h5` file and
    the `BertConfig` it was saved with.

    Raises:
        ValueError: a `.weights.h5` file without `config`.
        FileNotFoundError: nothing at path.
        OtherModelError: a preset of another backbone class (RoBERTa, ...).
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise MissingFileError(f"No keras-hub preset or weights file at {path}.")
    preset_config = os.path.join(path, "config.json")
    if os.path.isfile(preset_config):
        model_kind.check_keras_hub_config(read_json(
            preset_config, "a keras-hub preset config (JSON)"), preset_config)
    if path.endswith(WEIGHTS_SUFFIX):
        if config is None:
            raise UserError(f"{path} holds weights only; give the BertConfig "
                            "(--bert_config_file) it was saved with.")
        backbone = backbone_for_config(config)
        with reading_file(path, "keras-hub .weights.h5 file for this config"):
            backbone.load_weights(path)
        return backbone
    # A local folder only (checked above): nothing is downloaded.
    with reading_file(path, "keras-hub BertBackbone preset folder"):
        return keras_hub.models.BertBackbone.from_preset(path)
