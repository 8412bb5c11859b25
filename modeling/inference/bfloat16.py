"""A bfloat16 copy of a trained model, for inference.

Under the `mixed_bfloat16` policy every Dense call casts its float32 kernel to
bfloat16 again (a full pass over the weights per call). For inference the
weights do not change, so `bfloat16_inference_copy(model)` builds the same
model under the `bfloat16` policy (weights stored and used in bfloat16; Keras'
LayerNormalization still normalizes in float32) with the trained weights cast
once. The forward pass is the model's own.

Whether bfloat16 is faster at all depends on the CPU: TensorFlow 2.21 runs
bfloat16 matmuls with oneDNN only on CPUs with AVX-512 (with AMX, fastest);
elsewhere (AVX2) it falls back to Eigen, which converts to float32 inside the
matmul and is slower than the float32 oneDNN path (see benchmarks/compare.py).
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
