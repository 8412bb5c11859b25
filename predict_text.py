"""Predicts from raw text in one line: JSON lines on standard output.

A shim of `bert_tf1/predict_text.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.predict_text import command

    command()
