"""Predicts from raw text in one line: JSON lines on standard output.

A shim: the script's code (its flags, `main`) is `bert_tf1/predict_text.py`,
whose docstring `--help` prints. `python predict_text.py`, `python -m
bert_tf1.predict_text` and the installed `bert-predict-text` run the same
code.
"""

if __name__ == "__main__":
    from bert_tf1.predict_text import command

    command()
