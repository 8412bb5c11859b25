"""Helpers of demos/ner.sh: the pretraining corpus, the most-frequent-tag
baseline and the final table.

    python demos/ner_demo_tools.py corpus TRAIN.conll BASE_CORPUS.txt OUT.txt
    python demos/ner_demo_tools.py baseline TRAIN.conll DEV.conll OUT_DIR
    python demos/ner_demo_tools.py table NAME=DIR[:SECONDS] ...

`corpus` appends the training file's sentences (one per line, 20 sentences
per document, no tags) to a create_pretraining_data.py corpus, so the small
BERT sees in-domain text; the dev file is never used for pretraining.
`baseline` tags DEV with demos.ner.baselines.MostFrequentTagBaseline fit
on TRAIN and writes eval_results.txt with run_ner.py's keys. `table` prints
one row per run from each DIR/eval_results.txt.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))

from bert_tf1.data.io.results import write_key_value_file  # noqa: E402
from demos.ner.baselines import MostFrequentTagBaseline  # noqa: E402
from bert_tf1.data.tagging.metric import conll_scores  # noqa: E402
from bert_tf1.data.tagging.outputs import write_predictions  # noqa: E402
from bert_tf1.data.tagging.readers import read_tagged_file  # noqa: E402

SENTENCES_PER_DOCUMENT = 20


def corpus(train_file, base_corpus, output_file):
    documents = read_tagged_file(train_file, "conll", "iob2")
    lines = [" ".join(s.tokens) for d in documents for s in d.sentences]
    with open(base_corpus, encoding="utf-8") as reader:
        text = reader.read().rstrip("\n") + "\n\n"
    for start in range(0, len(lines), SENTENCES_PER_DOCUMENT):
        text += "\n".join(lines[start:start + SENTENCES_PER_DOCUMENT]) + "\n\n"
    with open(output_file, "w", encoding="utf-8") as writer:
        writer.write(text)
    print("corpus: %s + %d sentences of %s -> %s" % (
        base_corpus, len(lines), train_file, output_file))


def baseline(train_file, dev_file, output_dir):
    train = read_tagged_file(train_file, "conll", "iob2")
    dev = read_tagged_file(dev_file, "conll", "iob2")
    tags = MostFrequentTagBaseline().fit(train).predict(dev)
    scores = conll_scores([s.tags for d in dev for s in d.sentences],
                          [s for d in tags for s in d])
    result = {"eval_f1": scores.overall.f1,
              "eval_precision": scores.overall.precision,
              "eval_recall": scores.overall.recall,
              "eval_accuracy": scores.accuracy}
    result.update(("eval_f1_" + name, counts.f1)
                  for name, counts in scores.per_type.items())
    os.makedirs(output_dir, exist_ok=True)
    write_predictions(os.path.join(output_dir, "eval_predictions.txt"), dev,
                      tags)
    write_key_value_file(os.path.join(output_dir, "eval_results.txt"),
                         result)


def _results(folder):
    values = {}
    with open(os.path.join(folder, "eval_results.txt"),
              encoding="utf-8") as reader:
        for line in reader:
            key, _, value = line.strip().partition(" = ")
            values[key] = float(value)
    return values


def table(runs):
    rows = []
    types = set()
    for run in runs:
        name, _, rest = run.partition("=")
        folder, _, seconds = rest.partition(":")
        values = _results(folder)
        types.update(key[len("eval_f1_"):] for key in values
                     if key.startswith("eval_f1_"))
        rows.append((name, seconds, values))
    types = sorted(types)
    header = ["run", "train s", "F1", "P", "R"] + types
    widths = [max(len(row[0]) for row in rows + [("run",)])] + [
        max(7, len(t)) for t in header[1:]]
    print("  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                    for i, (h, w) in enumerate(zip(header, widths))))
    for name, seconds, values in rows:
        cells = [name, seconds or "-"] + [
            "%.1f" % (100 * values.get(key, 0.0))
            for key in ["eval_f1", "eval_precision", "eval_recall"]
            + ["eval_f1_" + t for t in types]]
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(cells, widths))))


def main(argv):
    command, arguments = argv[0], argv[1:]
    if command == "corpus":
        corpus(*arguments)
    elif command == "baseline":
        baseline(*arguments)
    elif command == "table":
        table(arguments)
    else:
        raise SystemExit("unknown command %r; expected corpus, baseline or "
                         "table" % command)


if __name__ == "__main__":
    main(sys.argv[1:])
