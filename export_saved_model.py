"""Exports a trained BERT as a SavedModel that serves raw text.

A shim of `bert_tf1/export_saved_model.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.export_saved_model import command

    command()
