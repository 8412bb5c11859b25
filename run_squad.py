"""BERT fine-tuning and prediction for SQuAD 1.1 and SQuAD 2.0.

A shim: the script's code (its flags, `main`) is `bert_tf1/run_squad.py`,
whose docstring `--help` prints. `python run_squad.py`, `python -m
bert_tf1.run_squad` and the installed `bert-run-squad` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.run_squad import command

    command()
