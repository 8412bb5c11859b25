"""Moving BERT weights between the TF1 layout, keras-hub and Hugging Face.

    from bert_tf1.modeling.interop.convert import convert
    convert("tf1", "uncased_L-12_H-768_A-12", "huggingface", "bert-hf/")

No imports here: `sources` and the readers sit below `bert_tf1.modeling.models`,
`convert` and `tf1` (which build task models) above it.
"""
