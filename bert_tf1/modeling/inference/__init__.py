"""Inference copies of a trained model for CPU serving (`int8`,
`bfloat16`); both leave the model untouched."""
