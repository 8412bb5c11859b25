"""Lines per second of predict_text.py's work (bert_tf1.serving.predictions.Predictor)
for a classifier and a tagger, at several batch sizes.

The models are the fixture's MRPC classifier (2 layers, hidden 32, the
released uncased vocab) and a tagger on the same encoder with a random head
(the speed does not depend on the weights); the lines are MRPC test
sentences (classifier: pairs, tagger: the first sentence). Each row is the
best of `--repeats` timed passes after one warm-up pass (which traces the
signatures). Prints a table.

Usage (from the repository root):
  python benchmarks/predict_text.py [--num_lines=512] [--repeats=2]
"""
import csv
import os
import pathlib
import sys
import tempfile
import time

from absl import app
from absl import flags

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from bert_tf1.serving import load_served_model  # noqa: E402
from bert_tf1.serving.predictions import predictor_of_model  # noqa: E402

_FIXTURE = REPO_ROOT.parent / "shared" / "fixtures" / "tf1_vocab_mrpc_classifier"

FLAGS = flags.FLAGS
flags.DEFINE_string("fixture", str(_FIXTURE),
                    "The tf1_vocab_mrpc_classifier fixture folder.")
flags.DEFINE_integer("num_lines", 512, "Lines per timed pass.")
flags.DEFINE_integer("repeats", 2, "Timed passes; the best one is reported.")
flags.DEFINE_list("batch_sizes", ["1", "32", "128"], "Batch sizes to time.")


def _pairs(fixture, count):
    with open(fixture / "mrpc_test64.tsv", encoding="utf-8") as reader:
        rows = list(csv.reader(reader, delimiter="\t", quotechar=None))[1:]
    pairs = [(row[3], row[4]) for row in rows]
    return [pairs[i % len(pairs)] for i in range(count)]


def _tagger_checkpoint(fixture, folder):
    from bert_tf1.modeling import BertConfig, checkpoints
    from bert_tf1.modeling.models import BertTokenClassifier

    model = BertTokenClassifier(
        BertConfig.from_json_file(fixture / "bert_config.json"), 5)
    checkpoints.load_tf1_checkpoint(model, fixture, verbose=False)
    checkpoints.save_tf1_checkpoint(model, os.path.join(folder,
                                                        "bert_model.ckpt"))
    return folder


def _best_seconds(predictor, rows, batch_size):
    predictor.predict(rows[:batch_size], batch_size=batch_size)  # warm-up
    best = None
    for _ in range(FLAGS.repeats):
        start = time.perf_counter()
        predictor.predict(rows, batch_size=batch_size)
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best


def _predictor(model_type, **arguments):
    """predict_text.py's predictor of a checkpoint's model."""
    model, preprocessor = load_served_model(model_type, **arguments)
    rules = ({"doc_stride": arguments["doc_stride"]}
             if "doc_stride" in arguments else {})
    return predictor_of_model(model, preprocessor, model_type,
                              arguments["label_list"], **rules)


def main(argv):
    del argv
    fixture = pathlib.Path(FLAGS.fixture)
    common = dict(bert_config_file=str(fixture / "bert_config.json"),
                  vocab_file=str(fixture / "vocab.txt"), do_lower_case=True,
                  max_seq_length=128)
    pairs = _pairs(fixture, FLAGS.num_lines)
    with tempfile.TemporaryDirectory() as folder:
        models = {
            "classifier (pairs)": (_predictor(
                "classifier", init_checkpoint=str(fixture),
                label_list=["0", "1"], **common), pairs),
            "tagger (sentences)": (_predictor(
                "tagger", init_checkpoint=_tagger_checkpoint(fixture, folder),
                label_list=["O", "B-PER", "I-PER", "B-LOC", "I-LOC"],
                doc_stride=64, **common), [(a,) for a, _ in pairs]),
        }
        print(f"{'model':<20} {'batch':>6} {'lines':>6} {'seconds':>8} "
              f"{'lines/s':>8}")
        for name, (predictor, rows) in models.items():
            for batch_size in map(int, FLAGS.batch_sizes):
                seconds = _best_seconds(predictor, rows, batch_size)
                print(f"{name:<20} {batch_size:>6} {len(rows):>6} "
                      f"{seconds:>8.2f} {len(rows) / seconds:>8.1f}")


if __name__ == "__main__":
    app.run(main)
