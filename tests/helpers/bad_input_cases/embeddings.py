"""Bad inputs of run_embeddings.py: rows that do not fit --loss, scores
outside --score_range, empty texts, a pooling that disagrees with the
model folder's record, gradient caching without in-batch negatives."""
import json

from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import MRPC, _write

PAIRS = ("A man plays a guitar.\tSomeone plays music.\n"
         "The cat sleeps.\tA cat is resting.\n")
SCORED = ("A man plays a guitar.\tSomeone plays music.\t4.2\n"
          "The cat sleeps.\tStocks fell.\t0.4\n")


def _embeddings(folder, **extra):
    flags = {"vocab_file": MRPC / "vocab.txt",
             "bert_config_file": MRPC / "bert_config.json",
             "init_checkpoint": MRPC / "bert_model.ckpt",
             "output_dir": folder / "out", "max_seq_length": 16,
             "train_batch_size": 2, "do_train": True}
    flags.update(extra)
    return flags


@case("run_embeddings.py")
def embeddings_mnrl_row_with_one_column(folder):
    path = _write(folder / "pairs.tsv", PAIRS + "Only an anchor.\n")
    return (_embeddings(folder, loss="mnrl", train_file=path),
            [f"{path}:3", "1 columns", "--loss=mnrl expects 2 or 3"])


@case("run_embeddings.py")
def embeddings_cosent_row_without_score(folder):
    path = _write(folder / "scored.tsv", PAIRS)
    return (_embeddings(folder, loss="cosent", train_file=path),
            [f"{path}:1", "2 columns", "--loss=cosent expects 3"])


@case("run_embeddings.py")
def embeddings_score_outside_range(folder):
    path = _write(folder / "scored.tsv", SCORED + "A.\tB.\t5.5\n")
    return (_embeddings(folder, loss="cosine", train_file=path),
            [f"{path}:3", "score 5.5", "--score_range=0,5"])


@case("run_embeddings.py")
def embeddings_empty_text(folder):
    path = _write(folder / "pairs.tsv", PAIRS + "An anchor.\t \n")
    return (_embeddings(folder, loss="mnrl", train_file=path),
            [f"{path}:3", "column 2 is an empty text"])


@case("run_embeddings.py")
def embeddings_pooling_disagrees_with_output_dir(folder):
    path = _write(folder / "pairs.tsv", PAIRS)
    record = _write(folder / "out" / "pooling.json", json.dumps(
        {"pooling": "cls", "l2_normalize": False}))
    return (_embeddings(folder, train_file=path, pooling="mean"),
            ["--pooling=mean", str(record), "pooling=cls"])


@case("run_embeddings.py")
def embeddings_mini_batch_without_in_batch_negatives(folder):
    path = _write(folder / "scored.tsv", SCORED)
    return (_embeddings(folder, loss="cosent", train_file=path,
                        mini_batch_size=1),
            ["--mini_batch_size", "--loss=mnrl", "--loss=cosent"])
