"""BERT fine-tuning for sentence (pair) classification: GLUE and XNLI.

A shim of `bert_tf1/run_classifier.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.run_classifier import command

    command()
