"""Creates masked-LM / next-sentence pre-training TFRecords from raw text.

A shim of `bert_tf1/create_pretraining_data.py` (its code and `--help`).
"""

if __name__ == "__main__":
    from bert_tf1.create_pretraining_data import command

    command()
