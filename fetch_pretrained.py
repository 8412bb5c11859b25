"""Fetches a known pretrained BERT and converts it to the Google layout.

A shim of `bert_tf1/fetch_pretrained.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.fetch_pretrained import command

    command()
