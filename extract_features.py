"""Extracts pre-computed BERT activations as JSON lines.

A shim of `bert_tf1/extract_features.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.extract_features import command

    command()
