"""Inference copies of a trained model, for serving on CPU.

- `int8.quantize_int8(model)`: the encoder's Dense layers quantized to int8
  with Keras's own `quantize("int8")`, run under XLA;
- `bfloat16.bfloat16_inference_copy(model)`: the model with its weights
  cast to bfloat16 once, instead of on every call.

Both run the model's own forward pass and leave the model, its weights, names
and checkpoints untouched.
"""
