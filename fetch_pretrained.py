"""Fetches a known pretrained BERT and converts it to the Google layout.

A shim: the script's code (its flags, `main`) is
`bert_tf1/fetch_pretrained.py`, whose docstring `--help` prints. `python
fetch_pretrained.py`, `python -m bert_tf1.fetch_pretrained` and the
installed `bert-fetch-pretrained` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.fetch_pretrained import command

    command()
