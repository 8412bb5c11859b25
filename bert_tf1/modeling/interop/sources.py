"""Which checkpoint a path holds, and loading it into a built model: the
finder below the models (`bert_tf1.modeling.models.pretrained.FromCheckpoint` builds
the model in between). Accepted paths (`find_checkpoint`): a Google folder or
`bert_model.ckpt` prefix; a fine-tuned `output_dir` or its `best/` (config:
`bert_config.json` there or one folder up, else beside the checkpoint its
`init_checkpoint.txt` names, else `config=`); a Hugging Face folder; a local
keras-hub preset folder. Weights are matched by TF1 name: a head of another
shape is an error, a missing head is initialised and logged.
"""
import collections
import os

import numpy as np
from absl import logging

from bert_tf1.data.io.atomic import is_remote
from bert_tf1.data.io.errors import MissingFileError
from bert_tf1.modeling import checkpoints
from bert_tf1.modeling.config import BertConfig

#: The Google folders' config file.
TF1_CONFIG_NAME = "bert_config.json"
#: Written in a fine-tuned output_dir by the scripts (bert_tf1/tasks/checks.py): the
#: prefix training started from, whose folder holds bert_config.json.
INIT_CHECKPOINT_RECORD = "init_checkpoint.txt"
# PyTorch's weights mark the layout too: loading them says to save them as
# safetensors first (`huggingface.load_hf`).
_HF_FILES = ("model.safetensors", "model.safetensors.index.json",
             "pytorch_model.bin", "pytorch_model.bin.index.json")
_KERAS_HUB_FILES = ("metadata.json", "model.weights.h5")

CheckpointSource = collections.namedtuple(
    "CheckpointSource", ["kind", "path", "config", "weights"])
CheckpointSource.__doc__ = """What `find_checkpoint` found.

kind: "tf1", "huggingface" or "keras_hub"; path: the TF1 prefix or the
folder; config: its `BertConfig`; weights: {TF1 name: array} (None for tf1,
which is read by `checkpoints.load_tf1_checkpoint`).
"""


def tf1_config(prefix, path, remedy="pass config= (a BertConfig or the "
               f"path of the {TF1_CONFIG_NAME} it was trained with)"):
    """bert_config.json of a TF1 checkpoint: beside it, one folder up (a
    `best/` folder of an output_dir), or beside the checkpoint named in the
    output_dir's init_checkpoint.txt.

    Raises:
        MissingFileError: none there; names `path` and says `remedy`.
    """
    folder = os.path.dirname(prefix)
    for candidate in (folder, os.path.dirname(folder)):
        config_file = os.path.join(candidate, TF1_CONFIG_NAME)
        if os.path.isfile(config_file):
            return BertConfig.from_json_file(config_file)
    for candidate in (folder, os.path.dirname(folder)):
        record = os.path.join(candidate, INIT_CHECKPOINT_RECORD)
        if os.path.isfile(record):
            with open(record, encoding="utf-8") as reader:
                init = reader.read().strip()
            config_file = os.path.join(os.path.dirname(init), TF1_CONFIG_NAME)
            if init and os.path.isfile(config_file):
                return BertConfig.from_json_file(config_file)
    raise MissingFileError(
        f"No {TF1_CONFIG_NAME} for checkpoint {prefix} (looked in {folder}, "
        "its parent folder and the checkpoint named in its "
        f"{INIT_CHECKPOINT_RECORD}); {remedy}. Path given: {path}")


def checkpoint_kind(path):
    """"huggingface" or "keras_hub" for a folder of that layout (by its file
    names, nothing read), else "tf1" (a prefix or a folder holding one)."""
    path = os.fspath(path)
    if not is_remote(path) and os.path.isdir(path):
        files = set(os.listdir(path))
        if files & set(_HF_FILES) and "config.json" in files:
            return "huggingface"
        if set(_KERAS_HUB_FILES) <= files:
            return "keras_hub"
    return "tf1"


def find_checkpoint(path, config=None):
    """What kind of checkpoint `path` is, with its config.

    Args:
        path: str or os.PathLike (see the module docstring).
        config: optional `BertConfig` or bert_config.json path; for a TF1
            checkpoint it replaces the search for one.
    Returns:
        CheckpointSource.
    Raises:
        bert_tf1.modeling.checkpoints.CheckpointNotFoundError: nothing checkpoint-like
            at path.
        MissingFileError: a TF1 checkpoint without a config to be found.
        UserError: an unsupported Hugging Face config.
    """
    path = os.fspath(path)
    if config is not None and not isinstance(config, BertConfig):
        config = BertConfig.from_json_file(os.fspath(config))
    kind = checkpoint_kind(path)
    if kind == "huggingface":
        from bert_tf1.modeling.interop import huggingface

        weights, hf_config = huggingface.load_hf(path)
        return CheckpointSource(kind, path, hf_config, weights)
    if kind == "keras_hub":
        from bert_tf1.modeling.interop import keras_hub

        weights, hub_config = keras_hub.backbone_to_tf1(
            keras_hub.load_backbone(path))
        return CheckpointSource(kind, path, hub_config, weights)
    prefix = checkpoints.resolve_checkpoint(path)
    return CheckpointSource("tf1", prefix, config or tf1_config(prefix, path),
                            None)


def assign_weights(model, weights, source):
    """Assigns a {TF1 name: array} dict to `model` as `load_tf1_checkpoint`
    loads a checkpoint: every shape is checked before anything is assigned.

    Returns:
        bert_tf1.modeling.checkpoints.LoadStatus.
    Raises:
        CheckpointMismatchError: no name matches, or a shape differs (every
            such weight named with both shapes).
    """
    variables = checkpoints.check_shapes(
        model, {name: list(np.shape(value))
                for name, value in weights.items()}, source)
    loaded = sorted(name for name in variables if name in weights)
    for name in loaded:
        variables[name].assign(
            np.asarray(weights[name]).astype(variables[name].dtype))
    return checkpoints.LoadStatus(source, loaded,
                                  sorted(set(variables) - set(weights)),
                                  sorted(set(weights) - set(variables)))


def load_weights_from(model, source):
    """Loads a `CheckpointSource` into a built model; logs (absl) what was
    loaded and warns of every weight the checkpoint lacks (a new head).

    Returns:
        bert_tf1.modeling.checkpoints.LoadStatus.
    """
    if source.kind == "tf1":
        status = checkpoints.load_tf1_checkpoint(model, source.path,
                                                 verbose=False)
    else:
        status = assign_weights(model, source.weights, source.path)
    logging.info("%s: loaded %d weights from %s (%s).", model.name,
                 len(status.loaded), source.path, source.kind)
    if status.missing:
        logging.warning(
            "%s: %d weights are not in %s and were freshly initialised "
            "(train them before use): %s", model.name, len(status.missing),
            source.path, ", ".join(status.missing))
    if status.unused:
        logging.info("%s: %d checkpoint weights unused: %s", model.name,
                     len(status.unused), ", ".join(status.unused))
    return status


def head_size(source, tf1_name):
    """The first dimension of a head weight in the checkpoint, or None."""
    if source.kind == "tf1":
        shape = checkpoints.list_checkpoint(source.path).get(tf1_name)
    else:
        value = source.weights.get(tf1_name)
        shape = None if value is None else np.shape(value)
    return None if shape is None else int(shape[0])
