"""A bfloat16 copy of a trained model, for inference: the same model under the
`bfloat16` policy with the trained weights cast once (under
`mixed_bfloat16` every Dense call casts its float32 kernel again). Whether
it is faster depends on the CPU (oneDNN bfloat16 needs AVX-512;
benchmarks/compare.py).
"""
from bert_tf1.modeling.inference.copies import rebuilt_copy


def bfloat16_inference_copy(model):
    """`copies.rebuilt_copy(model, dtype="bfloat16")`: the same model with
    bfloat16 weights (rounded) and compute, for inference only. Its outputs
    are bfloat16 where the model computes in its compute dtype (the
    classifier and SQuAD heads return float32).

    Raises:
        ValueError: see `rebuilt_copy`.
    """
    return rebuilt_copy(model, dtype="bfloat16")
