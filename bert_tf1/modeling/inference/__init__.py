"""Inference copies of a trained model for CPU serving (`int8`,
`copies.bfloat16_inference_copy`); both leave the model untouched."""
