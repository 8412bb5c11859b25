"""Faster inference copies of a trained model, for serving on CPU.

- `int8.quantize_int8(model)`: int8 matmuls through oneDNN (needs
  `TF_ENABLE_ONEDNN_OPTS=1`), same outputs within int8 rounding;
- `bfloat16.bfloat16_inference_copy(model)`: the model with its weights
  cast to bfloat16 once, instead of on every call.

Neither changes the model's weights, names or checkpoints.
"""
