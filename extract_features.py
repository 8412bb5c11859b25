"""Extracts pre-computed BERT activations as JSON lines.

A shim: the script's code (its flags, `main`) is
`bert_tf1/extract_features.py`, whose docstring `--help` prints. `python
extract_features.py`, `python -m bert_tf1.extract_features` and the
installed `bert-extract-features` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.extract_features import command

    command()
