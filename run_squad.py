"""BERT fine-tuning and prediction for SQuAD 1.1 and SQuAD 2.0.

A shim of `bert_tf1/run_squad.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.run_squad import command

    command()
