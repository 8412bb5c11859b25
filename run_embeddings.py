"""Sentence embeddings you can train: in-batch negatives, CoSENT, cosine.

A shim: the script's code (its flags, `main`) is `bert_tf1/run_embeddings.py`,
whose docstring `--help` prints. `python run_embeddings.py`, `python -m
bert_tf1.run_embeddings` and the installed `bert-run-embeddings` run the same
code.
"""

if __name__ == "__main__":
    from bert_tf1.run_embeddings import command

    command()
