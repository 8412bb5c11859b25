"""Tiny model files of another kind than BERT, written by the tests (never
committed): Hugging Face folders, TF1 checkpoints and keras-hub preset
configs whose names say RoBERTa, ALBERT, ELECTRA, ... .

Each writer takes the folder (or prefix) to write and returns it.
"""
import json

import numpy as np

# The encoder of a tiny Hugging Face BERT config (no model_type: callers add).
HF_BERT = {"vocab_size": 30522, "hidden_size": 32, "num_hidden_layers": 2,
           "num_attention_heads": 2, "intermediate_size": 64,
           "max_position_embeddings": 512, "type_vocab_size": 2}


def hf_folder(folder, config, tensor_names):
    """`folder/config.json` (`config`) and `folder/model.safetensors`
    holding a [2, 2] float32 zero tensor per name."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    save_file({name: np.zeros((2, 2), np.float32) for name in tensor_names},
              str(folder / "model.safetensors"))
    return folder


def tf1_checkpoint(prefix, names):
    """A TF1 name-based checkpoint at `prefix` (`.index` + one data file)
    with a [2, 2] float32 zero variable per name, and a bert_config.json
    beside it (the tiny MRPC fixture's shape: V=30522, P=512)."""
    import tensorflow as tf

    prefix.parent.mkdir(parents=True, exist_ok=True)
    names = sorted(names)
    tf.raw_ops.SaveV2(prefix=str(prefix), tensor_names=names,
                      shape_and_slices=[""] * len(names),
                      tensors=[tf.zeros((2, 2)) for _ in names])
    (prefix.parent / "bert_config.json").write_text(json.dumps(dict(
        HF_BERT, hidden_act="gelu", hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1, initializer_range=0.02)))
    return prefix


def keras_hub_preset(folder, class_name):
    """A keras-hub preset folder whose config.json names `class_name`
    (e.g. "RobertaBackbone"), with its metadata.json; no weights."""
    folder.mkdir(parents=True, exist_ok=True)
    module = class_name.lower().replace("backbone", "")
    (folder / "config.json").write_text(json.dumps({
        "module": f"keras_hub.src.models.{module}.{module}_backbone",
        "class_name": class_name, "config": {"vocabulary_size": 50265},
        "registered_name": f"keras_hub>{class_name}"}))
    (folder / "metadata.json").write_text(json.dumps({
        "keras_version": "3.0", "keras_hub_version": "0.32.0"}))
    return folder


#: A RoBERTa checkpoint's tensor names (transformers' RobertaModel layout).
ROBERTA_TENSORS = ("roberta.embeddings.word_embeddings.weight",
                   "roberta.encoder.layer.0.attention.self.query.weight",
                   "lm_head.dense.weight")
#: Google's ALBERT TF1 names: one shared group of layers.
ALBERT_VARIABLES = (
    "bert/embeddings/word_embeddings",
    "bert/encoder/embedding_hidden_mapping_in/kernel",
    "bert/encoder/transformer/group_0/inner_group_0/attention_1/self/query/"
    "kernel")
#: Google's ELECTRA TF1 names (the discriminator and its head).
ELECTRA_VARIABLES = (
    "electra/embeddings/word_embeddings",
    "electra/encoder/layer_0/attention/self/query/kernel",
    "discriminator_predictions/dense/kernel")
