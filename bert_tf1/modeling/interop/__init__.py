"""Moving BERT weights between the TF1 layout, keras-hub and Hugging Face
(`convert.convert`; docs/moving_weights.md). No imports here: `sources` and
the readers sit below `bert_tf1.modeling.models`, `convert` and `tf1` (which
build task models) above it.
"""
