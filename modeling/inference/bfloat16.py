"""A bfloat16 copy of a trained model, for inference: the same model under the
`bfloat16` policy with the trained weights cast once (under
`mixed_bfloat16` every Dense call casts its float32 kernel again). Whether
it is faster depends on the CPU (oneDNN bfloat16 needs AVX-512;
benchmarks/compare.py).
"""
from modeling.inference.copies import rebuilt_copy


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
    return rebuilt_copy(model, dtype="bfloat16")
