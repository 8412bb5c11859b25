"""BERT for sequence tagging (named-entity recognition, BERT paper §5.3).

A shim of `bert_tf1/run_ner.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.run_ner import command

    command()
