"""A model rebuilt from its config with another model's weights, and the
bfloat16 inference copy: the same model under the `bfloat16` policy with the
trained weights cast once (under `mixed_bfloat16` every Dense call casts its
float32 kernel again). Whether it is faster depends on the CPU (oneDNN
bfloat16 needs AVX-512; benchmarks/compare.py).
"""
import keras

from bert_tf1.modeling.layers import lora
from bert_tf1.modeling.naming import tf1_name


def rebuilt_copy(model, dtype=None):
    """A new model of `model`'s class and config holding its weights.

    Args:
        model: a built Keras model of this project (`BertModel`,
            `BertClassifier`, `BertSquad`, `BertPretrainer`, ...).
        dtype: None (the model's policy), or a Keras dtype policy name for
            the copy (e.g. "bfloat16"); the weights are cast to it.
    Returns:
        The copy; its weights are `model`'s, matched by TF1 name (the
        copy's inner models may get other Keras names); a LoRA model's copy
        has no LoRA but the merged kernels (`lora.merged_weights`).
    Raises:
        ValueError: the copy's weight names differ from the model's (a model
            not built by its constructor).
    """
    config = model.get_config()
    config.pop("lora", None)
    if dtype is not None:
        config["dtype"] = dtype
    copy = type(model).from_config(config)
    source = lora.merged_weights(model)
    paths = sorted(tf1_name(weight, copy) for weight in copy.weights)
    if paths != sorted(source):
        raise ValueError(
            f"A copy of {model.name} has weights {paths[:3]}..., the model "
            f"{sorted(source)[:3]}...; expected the same paths.")
    for weight in copy.weights:
        weight.assign(keras.ops.cast(source[tf1_name(weight, copy)], weight.dtype))
    return copy


def bfloat16_inference_copy(model):
    """`rebuilt_copy(model, dtype="bfloat16")`: the same model with
    bfloat16 weights (rounded) and compute, for inference only. Its outputs
    are bfloat16 where the model computes in its compute dtype (the
    classifier and SQuAD heads return float32).

    Raises:
        ValueError: see `rebuilt_copy`.
    """
    return rebuilt_copy(model, dtype="bfloat16")
