"""BERT for sequence tagging (named-entity recognition, BERT paper §5.3).

A shim: the script's code (its flags, `main`) is `bert_tf1/run_ner.py`,
whose docstring `--help` prints. `python run_ner.py`, `python -m
bert_tf1.run_ner` and the installed `bert-run-ner` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.run_ner import command

    command()
