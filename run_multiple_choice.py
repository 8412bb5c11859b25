"""BERT fine-tuning for multiple choice: SWAG, HellaSwag or your own TSV.

A shim: the script's code (its flags, `main`) is
`bert_tf1/run_multiple_choice.py`, whose docstring `--help` prints. `python
run_multiple_choice.py`, `python -m bert_tf1.run_multiple_choice` and the
installed `bert-run-multiple-choice` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.run_multiple_choice import command

    command()
