"""The data of `benchmarks/embeddings.py`: fixed splits and one batch order.

    python benchmarks/embedding_data.py --out_dir=/tmp/emb_data

Standard library only, so the peer's virtual environment (torch and
sentence-transformers, no TensorFlow) reads the same files. Every rule is
fixed here, so both sides see the same texts, pairs and batches:

- **STS-B** (`../shared/data/glue/STS-B`): `train.tsv` (5,749 pairs) and
  `dev.tsv` (1,500 pairs): `sentence1`, `sentence2`, `score` (0-5), found by
  the header's names. Read as GLUE's own reader does, `csv` with tab and
  `quotechar=None`: the texts hold unbalanced `"` (a default `csv` reader
  would join lines).
- **QNLI** (`../shared/data/glue/QNLI/dev.tsv`, 5,463 pairs), split by
  question: a question whose UTF-8 sha256, read as a hexadecimal integer, is
  even goes to the training half, odd to the evaluation half (every pair of a
  question lands in one half). Training: the training half's `entailment`
  pairs (question, sentence). Evaluation: the evaluation half's questions with
  at least one `entailment` sentence, against a corpus of all the
  evaluation half's distinct sentences (either label); relevant: the
  question's `entailment` sentences.
- **SQuAD v1.1 dev** (`../shared/data/squad/dev-v1.1.json.zip`, 48
  articles), split by article: articles at even positions in the file
  (0, 2, ...) train, odd positions evaluate. Each context is cut into
  sentences by `split_sentences` (below); a question's sentence is the one
  holding the character `answer_start`. Training: (question, the sentence
  holding its first answer). Evaluation: the evaluation articles' questions
  against a corpus of their distinct sentences; relevant: the sentences
  holding any of the question's answers (dev has up to 3 answers).
- Every QNLI and SQuAD text has its runs of whitespace (SQuAD holds line
  breaks inside a few contexts) made one space (`clean`), so a text is one
  field of a TSV line.
- **Batch order** (`batch_order`): for each epoch a `random.Random(seed *
  1000 + epoch)` shuffle of the training rows, then batches filled in that
  order with no text twice in a batch (a row whose anchor or positive is
  already in the open batch waits for the next batch; in-batch negatives
  would otherwise hold a positive as a negative, what
  sentence-transformers' `NoDuplicatesBatchSampler` avoids); the last
  partial batch of an epoch is dropped. `write_ordered` writes the rows in
  that order, every epoch after the other, so a trainer that reads the file
  once, in order, in batches of the given size, sees exactly these batches.
"""
import argparse
import csv
import hashlib
import json
import os
import random
import re
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "data")
GLUE = os.path.join(SHARED, "glue")
SQUAD_ZIP = os.path.join(SHARED, "squad", "dev-v1.1.json.zip")

# A sentence ends at `.`, `!` or `?` (with closing quotes or brackets right
# after it) followed by whitespace and then an upper-case letter, a digit, or
# an opening quote or bracket. Not split: "U.S. Army" is split (known limit
# of the rule, the same for both sides), "3.5" or "e.g. the" are not.
_SENTENCE_END = re.compile(r"""[.!?]["'\u201d\u2019)\]]*\s+(?=[A-Z0-9"'\u201c\u2018(\[])""")


def clean(text):
    """`text` with each run of whitespace one space, stripped."""
    return " ".join(text.split())


def split_sentences(text):
    """Cuts `text` into sentences by the rule above.

    Returns:
        a list of `(start, end)` character offsets into `text`, covering it
        from its first non-space character to its end; each span stripped
        of the whitespace at its ends.
    """
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        spans.append((start, end))
        start = end
    spans.append((start, len(text)))
    stripped = []
    for begin, end in spans:
        piece = text[begin:end]
        left = len(piece) - len(piece.lstrip())
        right = len(piece.rstrip())
        if right > left:
            stripped.append((begin + left, begin + right))
    return stripped


def _read_tsv(path):
    with open(path, encoding="utf-8", newline="") as reader:
        rows = list(csv.reader(reader, delimiter="\t", quotechar=None))
    return rows[0], rows[1:]


def sts_b(split, glue_dir=GLUE):
    """STS-B `split` ("train" or "dev"): a list of (sentence1, sentence2,
    score float in [0, 5]).

    Raises:
        ValueError: a row without the header's columns or a score outside
            0-5, naming the file and line.
    """
    path = os.path.join(glue_dir, "STS-B", f"{split}.tsv")
    header, rows = _read_tsv(path)
    a, b, s = (header.index(name) for name in
               ("sentence1", "sentence2", "score"))
    pairs = []
    for line, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise ValueError(f"{path}:{line}: {len(row)} columns, expected "
                             f"{len(header)}")
        score = float(row[s])
        if not 0.0 <= score <= 5.0:
            raise ValueError(f"{path}:{line}: score {score} outside 0-5")
        pairs.append((row[a], row[b], score))
    return pairs


def _train_half(text):
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % 2 == 0


def _retrieval(queries_with_relevant_texts, corpus_texts):
    """(query, [relevant texts]) + corpus -> dict of queries, corpus and
    relevant index lists, queries without a relevant text left out."""
    index = {}
    corpus = []
    for text in corpus_texts:
        if text not in index:
            index[text] = len(corpus)
            corpus.append(text)
    queries, relevant = [], []
    for query, texts in queries_with_relevant_texts:
        ids = sorted({index[text] for text in texts})
        if ids:
            queries.append(query)
            relevant.append(ids)
    return {"queries": queries, "corpus": corpus, "relevant": relevant}


def qnli(glue_dir=GLUE):
    """QNLI dev split by question (module docstring).

    Returns:
        (train pairs [(question, sentence)], evaluation dict with
        "queries" [str], "corpus" [str], "relevant" [[int]]).
    """
    header, rows = _read_tsv(os.path.join(glue_dir, "QNLI", "dev.tsv"))
    q, t, y = (header.index(name) for name in
               ("question", "sentence", "label"))
    train, eval_rows = [], []
    for row in rows:
        (train if _train_half(row[q]) else eval_rows).append(row)
    train_pairs = [(clean(row[q]), clean(row[t])) for row in train
                   if row[y] == "entailment"]
    positives = {}
    for row in eval_rows:
        texts = positives.setdefault(clean(row[q]), [])
        if row[y] == "entailment":
            texts.append(clean(row[t]))
    return train_pairs, _retrieval(list(positives.items()),
                                   [clean(row[t]) for row in eval_rows])


def squad(path=SQUAD_ZIP):
    """SQuAD v1.1 dev split by article (module docstring).

    Returns:
        (train pairs [(question, sentence)], evaluation dict as `qnli`'s).
    """
    with zipfile.ZipFile(path) as archive:
        with archive.open("dev-v1.1.json") as reader:
            articles = json.load(reader)["data"]
    train_pairs, eval_queries, eval_corpus = [], [], []
    for position, article in enumerate(articles):
        for paragraph in article["paragraphs"]:
            context = paragraph["context"]
            spans = split_sentences(context)

            def holding(offset, spans=spans, context=context):
                for begin, end in spans:
                    if begin <= offset < end:
                        return clean(context[begin:end])
                return None  # an answer starting in the space between two

            if position % 2:
                eval_corpus += [clean(context[b:e]) for b, e in spans]
            for qa in paragraph["qas"]:
                texts = [holding(answer["answer_start"])
                         for answer in qa["answers"]]
                if position % 2 == 0:
                    if texts and texts[0] is not None:
                        train_pairs.append((clean(qa["question"]), texts[0]))
                else:
                    eval_queries.append((clean(qa["question"]),
                                         [t for t in texts if t is not None]))
    return train_pairs, _retrieval(eval_queries, eval_corpus)


def batch_order(pairs, batch_size, epochs, seed=1, distinct_texts=True):
    """The batches of every epoch (module docstring).

    Args:
        pairs: the training rows; `row[0]` and `row[1]` are its texts.
        batch_size: rows per batch.
        epochs: how many shuffled passes.
        seed: the shuffles' seed.
        distinct_texts: no text twice in a batch (in-batch negatives).

    Returns:
        a list of batches, each a list of `batch_size` row indices.
    """
    batches = []
    for epoch in range(epochs):
        order = list(range(len(pairs)))
        random.Random(seed * 1000 + epoch).shuffle(order)
        waiting, open_batch, seen = [], [], set()
        for index in order:
            queue = waiting + [index]
            waiting = []
            for row in queue:
                texts = set(pairs[row][:2]) if distinct_texts else set()
                if texts & seen:
                    waiting.append(row)
                    continue
                open_batch.append(row)
                seen |= texts
                if len(open_batch) == batch_size:
                    batches.append(open_batch)
                    open_batch, seen = [], set()
        # rows still waiting and the open batch are dropped (partial batch)
    return batches


def write_ordered(pairs, batches, path):
    """Writes `pairs` in `batches` order, one TSV row per example (texts,
    then the score if the rows have one); returns the number of rows."""
    with open(path + ".tmp", "w", encoding="utf-8", newline="") as writer:
        for batch in batches:
            for index in batch:
                fields = [str(field) for field in pairs[index]]
                assert not any("\n" in f or "\t" in f for f in fields)
                writer.write("\t".join(fields) + "\n")
    os.replace(path + ".tmp", path)
    return sum(len(batch) for batch in batches)


def write_retrieval(evaluation, folder):
    """Writes an evaluation dict as queries.txt, corpus.txt (one text a line)
    and relevant.json (a list of index lists, one per query)."""
    os.makedirs(folder, exist_ok=True)
    for name in ("queries", "corpus"):
        texts = evaluation[name]
        assert not any("\n" in text or "\t" in text for text in texts)
        with open(os.path.join(folder, f"{name}.txt"), "w",
                  encoding="utf-8") as writer:
            writer.write("".join(text + "\n" for text in texts))
    with open(os.path.join(folder, "relevant.json"), "w",
              encoding="utf-8") as writer:
        json.dump(evaluation["relevant"], writer)


def prepare(out_dir, sts_batch=16, sts_epochs=4, retrieval_batch=64,
            retrieval_epochs=1, seed=1, max_steps=None):
    """Writes every split and batch order under `out_dir`; returns a summary
    dict (counts, steps), also written as `out_dir/summary.json`.
    `max_steps`: keep only the first that many batches of each order (a
    shorter run on a busy machine)."""
    os.makedirs(out_dir, exist_ok=True)
    summary = {"seed": seed}
    train = sts_b("train")
    dev = sts_b("dev")
    batches = batch_order(train, sts_batch, sts_epochs, seed,
                          distinct_texts=False)[:max_steps]
    folder = os.path.join(out_dir, "sts-b")
    os.makedirs(folder, exist_ok=True)
    write_ordered(train, batches, os.path.join(folder, "train_ordered.tsv"))
    write_ordered(dev, [list(range(len(dev)))],
                  os.path.join(folder, "dev.tsv"))
    summary["sts-b"] = {"train_pairs": len(train), "dev_pairs": len(dev),
                        "batch_size": sts_batch, "epochs": sts_epochs,
                        "steps": len(batches)}
    for name, (pairs, evaluation) in (("qnli", qnli()), ("squad", squad())):
        folder = os.path.join(out_dir, name)
        batches = batch_order(pairs, retrieval_batch, retrieval_epochs,
                              seed)[:max_steps]
        os.makedirs(folder, exist_ok=True)
        write_ordered(pairs, batches,
                      os.path.join(folder, "train_ordered.tsv"))
        write_retrieval(evaluation, folder)
        summary[name] = {
            "train_pairs": len(pairs), "batch_size": retrieval_batch,
            "epochs": retrieval_epochs, "steps": len(batches),
            "queries": len(evaluation["queries"]),
            "corpus": len(evaluation["corpus"]),
            "relevant": sum(len(r) for r in evaluation["relevant"])}
    with open(os.path.join(out_dir, "summary.json"), "w",
              encoding="utf-8") as writer:
        json.dump(summary, writer, indent=1)
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out_dir", required=True)
    parser.add_argument("--sts_batch", type=int, default=16)
    parser.add_argument("--sts_epochs", type=int, default=4)
    parser.add_argument("--retrieval_batch", type=int, default=64)
    parser.add_argument("--retrieval_epochs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max_steps", type=int, default=None)
    args = parser.parse_args()
    print(json.dumps(prepare(args.out_dir, args.sts_batch, args.sts_epochs,
                             args.retrieval_batch, args.retrieval_epochs,
                             args.seed, args.max_steps), indent=1))


if __name__ == "__main__":
    main()
