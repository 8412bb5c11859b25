"""A bfloat16 copy of a trained model, for inference.

Under the `mixed_bfloat16` policy every Dense call casts its float32 kernel to
bfloat16 again (a full pass over the weights per call, ~6% of a BERT-Base
forward pass at batch 8 x 128). For inference the weights do not change, so
`bfloat16_inference_copy(model)` builds the same model under the `bfloat16`
policy (weights stored and used in bfloat16; Keras' LayerNormalization still
normalizes in float32) with the trained weights cast once.

Whether bfloat16 is faster at all depends on the CPU: TensorFlow 2.21 runs
bfloat16 matmuls with oneDNN only on CPUs with AVX-512; elsewhere (AVX2) it
falls back to Eigen, which converts to float32 inside the matmul and is slower
than the float32 oneDNN path (see benchmarks/compare.py and README).
"""
import keras

from modeling.naming import tf1_name


def bfloat16_inference_copy(model):
    """The same model with bfloat16 weights and compute, for inference only.

    Args:
        model: a built Keras model of this project (`BertModel`,
            `BertClassifier`, `BertSquad`, `BertPretrainer`), any policy.
    Returns:
        A new model of the same class and config under the "bfloat16" policy,
        whose weights are `model`'s (same paths) rounded to bfloat16. Its
        outputs are bfloat16 where the model computes in its compute dtype
        (the classifier and SQuAD heads return float32).
    Raises:
        ValueError: the copy's weight names differ from the model's (a model
            not built by its constructor).
    """
    config = model.get_config()
    config["dtype"] = "bfloat16"
    copy = type(model).from_config(config)
    # By TF1 name: the copy's inner models may get other Keras names.
    source = {tf1_name(weight): weight for weight in model.weights}
    paths = sorted(tf1_name(weight) for weight in copy.weights)
    if paths != sorted(source):
        raise ValueError(
            f"bfloat16_inference_copy: the copy of {model.name} has weights "
            f"{paths[:3]}..., the model {sorted(source)[:3]}...; expected the "
            "same paths.")
    for weight in copy.weights:
        weight.assign(keras.ops.cast(source[tf1_name(weight)], weight.dtype))
    return copy
