"""Exports a trained BERT as a SavedModel that serves raw text.

A shim: the script's code (its flags, `main`) is
`bert_tf1/export_saved_model.py`, whose docstring `--help` prints. `python
export_saved_model.py`, `python -m bert_tf1.export_saved_model` and the
installed `bert-export-saved-model` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.export_saved_model import command

    command()
