"""Inference copies of a trained model for CPU serving (`int8.quantize_int8`,
`bfloat16.bfloat16_inference_copy`); both run the model's own forward pass
and leave the model untouched.
"""
