"""Sentence embeddings you can train: in-batch negatives, CoSENT, cosine.

A shim of `bert_tf1/run_embeddings.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.run_embeddings import command

    command()
