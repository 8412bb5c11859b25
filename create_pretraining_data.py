"""Creates masked-LM / next-sentence pre-training TFRecords from raw text.

A shim: the script's code (its flags, `main`) is
`bert_tf1/create_pretraining_data.py`, whose docstring `--help` prints.
`python create_pretraining_data.py`, `python -m
bert_tf1.create_pretraining_data` and the installed `bert-create-
pretraining-data` run the same code.
"""

if __name__ == "__main__":
    from bert_tf1.create_pretraining_data import command

    command()
