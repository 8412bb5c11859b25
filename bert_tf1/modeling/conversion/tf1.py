"""TF1 name-based checkpoints as plain `{TF1 name: numpy array}` dicts, read
from and written as the original's layout (`bert_model.ckpt.*` +
`bert_config.json`).
"""
import os

import numpy as np
import tensorflow as tf

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling import checkpoints
from bert_tf1.modeling.checkpoints.files import iter_tensors, read_variables
from bert_tf1.modeling.checkpoints.model_kind import check_tf1_names
from bert_tf1.modeling.interop import huggingface, sources
from bert_tf1.modeling.models.bert_model import BertModel
from bert_tf1.modeling.config import BertConfig
from bert_tf1.data.io.atomic import write_directory_atomically
from bert_tf1.modeling.models import (BertClassifier, BertMultipleChoice,
                                      BertPretrainer, BertSquad, BertTokenClassifier)

VOCAB_NAME = "vocab.txt"
#: run_ner.py's tag list beside a tagger checkpoint: one tag per line, line
#: k is tag id k (the format of bert_tf1/data/tagging/outputs.py).
LABEL_LIST_NAME = "label_list.txt"
TAGGING_WEIGHTS = "cls/tagging/output_weights"


def read_tf1_weights(checkpoint):
    """Every weight of a TF1 checkpoint, optimizer state left out.

    Args:
        checkpoint: a prefix or a directory (`checkpoints.resolve_checkpoint`).

    Returns:
        (prefix, {TF1 name: numpy array}).

    Raises:
        FileNotFoundError: no checkpoint there.
        OtherModelError: ALBERT, ELECTRA, ... variable names.
    """
    prefix = checkpoints.resolve_checkpoint(checkpoint)
    names = [name for name in read_variables(prefix)
             if not checkpoints.is_optimizer_state(name)]
    check_tf1_names(names, prefix)
    return prefix, dict(iter_tensors(prefix, sorted(names)))


def find_config(checkpoint_prefix, bert_config_file=None):
    """`bert_config_file`, else the checkpoint's (`sources.tf1_config`).

    Raises:
        FileNotFoundError: none found; the message says where it looked.
    """
    if bert_config_file:
        return BertConfig.from_json_file(bert_config_file)
    return sources.tf1_config(checkpoint_prefix, checkpoint_prefix,
                              "pass bert_config_file (--bert_config_file)")


def model_for_weights(weights, config):
    """The task model whose weight names are those in `weights`.

    By the heads present, as `huggingface.architecture` decides.

    Raises:
        ValueError: the names are not exactly those of that model; the message
            lists missing and unexpected names.
    """
    arch = huggingface.architecture(weights)
    if arch == huggingface.TOKEN_CLASSIFICATION:
        model = BertTokenClassifier(config, weights[TAGGING_WEIGHTS].shape[0])
    elif arch == "BertForSequenceClassification":
        model = BertClassifier(config, weights["output_weights"].shape[0])
    else:
        model = {"BertForPreTraining": BertPretrainer,
                 "BertForQuestionAnswering": BertSquad,
                 huggingface.MULTIPLE_CHOICE: BertMultipleChoice,
                 "BertModel": BertModel}[arch](config)
    expected = set(checkpoints.model_weights_by_name(model))
    missing = sorted(expected - set(weights))
    unexpected = sorted(set(weights) - expected)
    if missing or unexpected:
        raise UserError(
            f"The weights do not form a {type(model).__name__}: missing "
            f"{missing[:5] or 'none'}, unexpected {unexpected[:5] or 'none'} "
            f"({len(missing)} and {len(unexpected)} in all). Use encoder_only "
            "(--encoder_only) to keep only bert/*.")
    return model


def encoder_only(weights):
    """The `bert/*` weights (embeddings, encoder, pooler) of a weight dict."""
    return {name: value for name, value in weights.items()
            if name.startswith("bert/")}


def write_tf1_checkpoint(weights, config, output_dir, vocab_file=None,
                         label_names=None, finish=None):
    """Writes `output_dir/bert_model.ckpt.*` and `bert_config.json` (plus
    `vocab.txt`, and a tagger's `label_names` as `label_list.txt`), as one
    folder renamed into place; `finish(temp_dir)` may add files first.

    Args:
        weights: {TF1 name: numpy array} forming one task model (see
            `model_for_weights`).
        config: BertConfig.
        output_dir: directory to create; must not exist.

    Returns:
        str, the checkpoint prefix written.

    Raises:
        FileExistsError: output_dir exists.
        UserError: names or shapes do not fit the config, or label_names
            of another length than the tagging head.
    """
    model = model_for_weights(weights, config)
    if TAGGING_WEIGHTS not in weights:
        label_names = None
    elif label_names is not None and (
            len(label_names) != weights[TAGGING_WEIGHTS].shape[0]):
        raise UserError(f"{len(label_names)} label names for a tagging head "
                        f"of {weights[TAGGING_WEIGHTS].shape[0]} labels.")
    variables = checkpoints.model_weights_by_name(model)
    for name, variable in variables.items():
        value = np.asarray(weights[name])
        if tuple(value.shape) != tuple(variable.shape):
            raise UserError(f"{name}: shape {list(value.shape)} does not fit "
                            f"the config's {list(variable.shape)}.")
        variable.assign(value.astype(variable.dtype))

    def write(tmp_dir):
        tf.io.gfile.makedirs(tmp_dir)
        checkpoints.save_tf1_checkpoint(
            model, os.path.join(tmp_dir, checkpoints.RELEASED_CHECKPOINT_NAME))
        config.to_json_file(os.path.join(tmp_dir, sources.TF1_CONFIG_NAME))
        if vocab_file:
            tf.io.gfile.copy(vocab_file, os.path.join(tmp_dir, VOCAB_NAME))
        if label_names:
            with tf.io.gfile.GFile(os.path.join(tmp_dir, LABEL_LIST_NAME),
                                   "w") as writer:
                writer.write("".join(name + "\n" for name in label_names))
        if finish is not None:
            finish(tmp_dir)

    write_directory_atomically(output_dir, write)
    return os.path.join(output_dir, checkpoints.RELEASED_CHECKPOINT_NAME)
