"""Moving BERT weights between the TF1 layout, keras-hub and Hugging Face.

    from modeling.interop import convert
    convert("tf1", "uncased_L-12_H-768_A-12", "huggingface", "bert-hf/")
"""
from modeling.interop.convert import FORMATS, convert, read_weights

__all__ = ["FORMATS", "convert", "read_weights"]
