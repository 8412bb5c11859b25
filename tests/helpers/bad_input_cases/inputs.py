"""Tiny inputs and flag sets shared by the bad-input cases.

The checkpoints are the tiny ones of ../shared/fixtures. Each flag-set
helper (`_classifier`, `_squad`, ...) writes the files it needs under the
case's own folder and returns the flags its script is run with; `_export`
and `_predict` leave out a flag given as None.
"""
import json
import shutil
import socket

from tests.conftest import FIXTURES_DIR

MRPC = FIXTURES_DIR / "tf1_vocab_mrpc_classifier"   # V=30522, P=512, L=2
SQUAD = FIXTURES_DIR / "tf1_vocab_squad"            # same encoder
TINY_PRETRAINING = FIXTURES_DIR / "tf1_tiny_pretraining"  # V=512, P=64
# The original create_pretraining_data.py output: max_seq_length=128,
# max_predictions_per_seq=20.
RECORDS_128 = FIXTURES_DIR / "pretraining_data/sample_text_seed12345.tfrecord"

MRPC_HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
MRPC_ROWS = ("1\t1\t2\tThe cat sat on the mat.\tA cat was on the mat.\n"
             "0\t3\t4\tIt rained all day.\tThe sun was out.\n")
SQUAD_V1 = {"version": "1.1", "data": [{"title": "T", "paragraphs": [{
    "context": "The cat sat on the mat.",
    "qas": [{"id": "q1", "question": "Where did the cat sit?",
             "answers": [{"text": "on the mat", "answer_start": 12}]}]}]}]}


def _write(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _mrpc_data(folder, **files):
    """`folder/glue` with the given `<set>.tsv` files (train="...")."""
    data = folder / "glue"
    data.mkdir(exist_ok=True)
    for set_name, content in files.items():
        _write(data / f"{set_name}.tsv", content)
    return data


def _classifier(folder, data, **extra):
    flags = {"task_name": "MRPC", "data_dir": data,
             "vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "output_dir": folder / "out", "max_seq_length": 32,
             "train_batch_size": 2}
    flags.update(extra)
    return flags


def _config(folder, source, **changes):
    """A copy of `source`'s bert_config.json with `changes` (None: drop)."""
    config = json.loads((source / "bert_config.json").read_text())
    for key, value in changes.items():
        if value is None:
            del config[key]
        else:
            config[key] = value
    return _write(folder / "bert_config.json", json.dumps(config))


def _copy_checkpoint(source_prefix, target_prefix):
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copyfile(f"{source_prefix}{suffix}", f"{target_prefix}{suffix}")


def _pretraining(folder, **extra):
    flags = {"input_file": RECORDS_128, "output_dir": folder / "out",
             "bert_config_file": TINY_PRETRAINING / "bert_config.json",
             "init_checkpoint": TINY_PRETRAINING / "bert_model.ckpt",
             "do_train": True, "max_seq_length": 64,
             "max_predictions_per_seq": 20, "train_batch_size": 2,
             "num_train_steps": 1, "num_warmup_steps": 0}
    flags.update(extra)
    return flags


def _squad(folder, **extra):
    flags = {"vocab_file": SQUAD / "vocab.txt",
             "bert_config_file": SQUAD / "bert_config.json",
             "init_checkpoint": SQUAD / "bert_model.ckpt",
             "output_dir": folder / "out", "do_predict": True,
             "predict_file": _write(folder / "dev.json", json.dumps(SQUAD_V1)),
             "max_seq_length": 96, "doc_stride": 32, "max_query_length": 16}
    flags.update(extra)
    return flags


def _extract(folder, **extra):
    flags = {"input_file": _write(folder / "input.txt", "Hello world\n"),
             "output_file": folder / "features.jsonl",
             "vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "layers": "-1", "max_seq_length": 16}
    flags.update(extra)
    return flags


def _create_data(folder, **extra):
    corpus = _write(folder / "corpus.txt",
                    "The cat sat on the mat. It was happy.\n\n"
                    "Another document starts now. It ends here.\n")
    flags = {"input_file": corpus, "output_file": folder / "out.tfrecord",
             "vocab_file": MRPC / "vocab.txt", "max_seq_length": 32,
             "max_predictions_per_seq": 5, "dupe_factor": 1}
    flags.update(extra)
    return flags


NER_TRAIN = ("@paulwalk\tO\nIt\tO\nis\tO\nParis\tB-location\n\n"
             "John\tB-person\nSmith\tI-person\nsaid\tO\n\n")


def _ner(folder, train=NER_TRAIN, **extra):
    flags = {"vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "do_lower_case": True, "output_dir": folder / "out",
             "do_train": True, "train_file": _write(folder / "train.conll",
                                                    train),
             "max_seq_length": 32, "doc_stride": 16, "train_batch_size": 2}
    flags.update(extra)
    return flags


def _multiple_choice(folder, **extra):
    flags = {"vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "output_dir": folder / "out", "max_seq_length": 32,
             "train_batch_size": 2}
    flags.update(extra)
    return flags


SWAG_HEADER = "sent1,sent2,ending0,ending1,ending2,ending3,label\n"
SWAG_ROWS = ("The cat sat.,It,purred.,barked.,flew.,swam.,0\n"
             "He ran fast.,He,won.,lost.,slept.,sang.,0\n")
HELLASWAG_ROW = {"ctx_a": "A man sits on a roof.", "ctx_b": "he",
                 "endings": ["waves.", "falls.", "sings.", "sleeps."],
                 "label": 0}


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _export(folder, **extra):
    flags = {"model_type": "classifier", "task_name": "MRPC",
             "vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC, "max_seq_length": 32,
             "export_dir": folder / "export"}
    flags.update(extra)
    return {key: value for key, value in flags.items() if value is not None}


def _convert(folder, **extra):
    flags = {"input_format": "tf1", "input_path": MRPC,
             "output_format": "huggingface", "output_path": folder / "hf"}
    flags.update(extra)
    return flags


def _predict(folder, **extra):
    flags = {"init_checkpoint": MRPC, "model_type": "classifier",
             "task_name": "MRPC", "vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json"}
    flags.update(extra)
    return {key: value for key, value in flags.items() if value is not None}
