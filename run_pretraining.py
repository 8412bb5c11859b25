"""Masked-LM + next-sentence pre-training of BERT on TFRecords.

A shim of `bert_tf1/run_pretraining.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.run_pretraining import command

    command()
