"""Converts BERT weights between the TF1 layout, keras-hub and Hugging Face.

A shim: the script's code (its flags, `main`) is
`bert_tf1/convert_checkpoint.py`, whose docstring `--help` prints. `python
convert_checkpoint.py`, `python -m bert_tf1.convert_checkpoint` and the
installed `bert-convert-checkpoint` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.convert_checkpoint import command

    command()
