"""Masked-LM + next-sentence pre-training of BERT on TFRecords.

A shim: the script's code (its flags, `main`) is
`bert_tf1/run_pretraining.py`, whose docstring `--help` prints. `python
run_pretraining.py`, `python -m bert_tf1.run_pretraining` and the installed
`bert-run-pretraining` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.run_pretraining import command

    command()
