"""Moving BERT weights between the TF1 layout, keras-hub and Hugging Face
(`convert.convert`; docs/moving_weights.md), above `bert_tf1.modeling.models`:
writing a TF1 checkpoint builds the task model (`tf1.write_tf1_checkpoint`)."""
