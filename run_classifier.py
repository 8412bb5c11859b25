"""BERT fine-tuning for sentence (pair) classification: GLUE and XNLI.

A shim: the script's code (its flags, `main`) is
`bert_tf1/run_classifier.py`, whose docstring `--help` prints. `python
run_classifier.py`, `python -m bert_tf1.run_classifier` and the installed
`bert-run-classifier` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.run_classifier import command

    command()
