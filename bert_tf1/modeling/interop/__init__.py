"""Reading and writing keras-hub and Hugging Face weights, and which
checkpoint a path holds (`sources`): below `bert_tf1.modeling.models`."""
