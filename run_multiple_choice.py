"""BERT fine-tuning for multiple choice: SWAG, HellaSwag or your own TSV.

A shim of `bert_tf1/run_multiple_choice.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.run_multiple_choice import command

    command()
