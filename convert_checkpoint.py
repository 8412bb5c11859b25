"""Converts BERT weights between the TF1 layout, keras-hub and Hugging Face.

A shim of `bert_tf1/convert_checkpoint.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.convert_checkpoint import command

    command()
