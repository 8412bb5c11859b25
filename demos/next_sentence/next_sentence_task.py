"""A multiple-choice learning task from plain text: pick the next sentence.

Each row: context = a sentence; the right ending = the NEXT sentence of the
same document; num_choices - 1 distractors = sentences drawn from OTHER
documents of the same split; the right ending's position is random. It has
SWAG's shape (one context, N candidate continuations) and is built from the
shared pretraining text (`corpus_documents.SHARED_TEXT_FILES`) because the
SWAG/HellaSwag files could not be brought here whole; numbers measured on it
are for this task, not SWAG.

Rules (all deterministic given `seed`, one `random.Random(seed)`):
  * a sentence with fewer than `min_words` words (`count_words`) is never a
    context, right ending or distractor; a pair (sentence i, sentence i + 1)
    is a row when both are long enough;
  * the split is by document: documents are shuffled, and taken into dev
    until dev has at least `min_dev_rows` rows; all other documents are
    train. No document has rows in both splits, and distractors come from
    the row's own split, so dev text is never seen in training;
  * distractors of a row are distinct, come from documents other than the
    row's, and differ in text from its context and right ending;
  * dev rows are in document order; train rows are shuffled (training
    pipelines shuffle with a small buffer, which would otherwise see one
    document at a time).
Row ids are "<doc_id>/<index of the context sentence>", e.g.
"wikitext/3/17".
"""
import dataclasses
import os
import random
from typing import Dict, List

from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.data.io.errors import UserError
from demos.next_sentence.corpus_documents import (SHARED_TEXT_FILES,
                                                   read_documents)
from bert_tf1.data.multiple_choice.examples import MultipleChoiceExample
from demos.next_sentence.sentence_split import count_words
from demos.next_sentence.tsv_writer import write_choice_tsv

__all__ = [
    "NextSentenceTask",
    "build_next_sentence_task",
    "read_shared_documents",
    "write_next_sentence_task",
    "write_training_text",
]

#: Tries per distractor before a split is declared too small.
_MAX_DRAWS = 10000


@dataclasses.dataclass
class NextSentenceTask:
    """The two splits and what they were built from.

    Attributes:
      train, dev: lists of MultipleChoiceExample (labels set).
      train_documents, dev_documents: lists of doc_id, in document order.
      stats: dict str -> int: documents, sentences, eligible_sentences
        (>= min_words), candidate_rows (all pairs), unused_documents
        (without a pair), train_rows, dev_rows, train_documents,
        dev_documents.
    """
    train: List[MultipleChoiceExample]
    dev: List[MultipleChoiceExample]
    train_documents: List[str]
    dev_documents: List[str]
    stats: Dict[str, int]


def _pairs(document, min_words):
    """Indexes i with sentences i and i + 1 both long enough."""
    long_enough = [count_words(s) >= min_words for s in document.sentences]
    return [i for i in range(len(long_enough) - 1)
            if long_enough[i] and long_enough[i + 1]]


def _split_rows(documents, pairs, rng, num_choices, min_words, split):
    """The rows of one split's documents (in document order)."""
    pool = [(d, s) for d, document in enumerate(documents)
            for s in document.sentences if count_words(s) >= min_words]
    rows = []
    for d, document in enumerate(documents):
        for i in pairs[d]:
            context, gold = document.sentences[i], document.sentences[i + 1]
            taken = {context, gold}
            distractors, draws = [], 0
            while len(distractors) < num_choices - 1:
                draws += 1
                if draws > _MAX_DRAWS:
                    raise UserError(
                        "%s split: not enough sentences in other documents "
                        "to draw %d distractors for %s/%d; use more text or "
                        "fewer choices" % (split, num_choices - 1,
                                           document.doc_id, i))
                other, text = pool[rng.randrange(len(pool))]
                if other != d and text not in taken:
                    distractors.append(text)
                    taken.add(text)
            label = rng.randrange(num_choices)
            endings = distractors[:label] + [gold] + distractors[label:]
            rows.append(MultipleChoiceExample(
                example_id="%s/%d" % (document.doc_id, i), context=context,
                endings=endings, label=label))
    return rows


def build_next_sentence_task(documents, seed, num_choices=4,
                             min_dev_rows=1000, min_words=4):
    """Builds the train and dev splits (see the module docstring).

    Args:
      documents: list of corpus_documents.Document (unique doc_ids).
      seed: int, the only source of randomness.
      num_choices: int >= 2.
      min_dev_rows: int >= 1, the least number of dev rows.
      min_words: int, the shortest usable sentence, in words.

    Returns:
      NextSentenceTask.

    Raises:
      UserError: too little text for the requested dev rows (each split
        needs at least two documents), or for drawing distractors.
      ValueError: num_choices < 2 or min_dev_rows < 1.
    """
    if num_choices < 2:
        raise ValueError("num_choices must be >= 2, got %d" % num_choices)
    if min_dev_rows < 1:
        raise ValueError("min_dev_rows must be >= 1, got %d" % min_dev_rows)
    rng = random.Random(seed)
    pairs = [_pairs(document, min_words) for document in documents]
    usable = [d for d in range(len(documents)) if pairs[d]]
    candidate_rows = sum(len(pairs[d]) for d in usable)
    order = list(usable)
    rng.shuffle(order)
    dev, dev_rows = [], 0
    while order and (dev_rows < min_dev_rows or len(dev) < 2):
        d = order.pop(0)
        dev.append(d)
        dev_rows += len(pairs[d])
    if dev_rows < min_dev_rows or len(order) < 2:
        raise UserError(
            "the text gives %d rows in %d documents: too few for %d dev rows "
            "and a train split of two or more documents" % (
                candidate_rows, len(usable), min_dev_rows))
    dev, train = sorted(dev), sorted(order)
    dev_examples = _split_rows([documents[d] for d in dev],
                               [pairs[d] for d in dev], rng, num_choices,
                               min_words, "dev")
    train_examples = _split_rows([documents[d] for d in train],
                                 [pairs[d] for d in train], rng, num_choices,
                                 min_words, "train")
    rng.shuffle(train_examples)
    stats = {
        "documents": len(documents),
        "sentences": sum(len(doc.sentences) for doc in documents),
        "eligible_sentences": sum(
            1 for doc in documents for s in doc.sentences
            if count_words(s) >= min_words),
        "candidate_rows": candidate_rows,
        "unused_documents": len(documents) - len(usable),
        "train_documents": len(train),
        "dev_documents": len(dev),
        "train_rows": len(train_examples),
        "dev_rows": len(dev_examples),
    }
    return NextSentenceTask(
        train=train_examples, dev=dev_examples,
        train_documents=[documents[d].doc_id for d in train],
        dev_documents=[documents[d].doc_id for d in dev], stats=stats)


def read_shared_documents(data_dir):
    """The documents of the three shared text files.

    Args:
      data_dir: str or os.PathLike, the folder holding the files of
        `SHARED_TEXT_FILES` (shared/data/pretraining), or a folder with a
        `pretraining/` subfolder holding them (shared/data).

    Returns:
      list of Document, file by file in `SHARED_TEXT_FILES` order.

    Raises:
      UserError: a file is missing or unreadable.
    """
    data_dir = os.fspath(data_dir)
    first = SHARED_TEXT_FILES[0][0]
    if (not os.path.exists(os.path.join(data_dir, first))
            and os.path.exists(os.path.join(data_dir, "pretraining", first))):
        data_dir = os.path.join(data_dir, "pretraining")
    documents = []
    for name, layout, source in SHARED_TEXT_FILES:
        path = os.path.join(data_dir, name)
        if not os.path.exists(path):
            raise UserError("%s: file not found (--data_dir must hold %s)" % (
                path, ", ".join(n for n, _, _ in SHARED_TEXT_FILES)))
        documents.extend(read_documents(path, layout, source))
    return documents


def write_next_sentence_task(task, output_dir):
    """Writes `train.tsv` and `dev.tsv` (tsv layout) into `output_dir`.

    Args:
      task: NextSentenceTask.
      output_dir: str or os.PathLike, created if missing; each file is
        written atomically.

    Returns:
      dict file name -> path.
    """
    output_dir = os.fspath(output_dir)
    os.makedirs(output_dir, exist_ok=True)
    paths = {}
    for name, examples in (("train.tsv", task.train), ("dev.tsv", task.dev)):
        paths[name] = os.path.join(output_dir, name)
        write_choice_tsv(paths[name], examples)
    return paths


def write_training_text(task, documents, path):
    """Writes the TRAIN documents' text for pretraining, dev left out.

    The layout of create_pretraining_data.py's input (and of the original's
    sample_text.txt): one sentence per line, a blank line between documents.
    Every sentence of each train document is written, the short ones too,
    in text order; no dev document's text is, so a model pretrained on it
    has still never seen the held-out rows.

    Args:
      task: NextSentenceTask (its `train_documents` are written).
      documents: the list of Document the task was built from.
      path: str or os.PathLike; written atomically.

    Returns:
      int, the number of sentences written.

    Raises:
      KeyError: a train document id that is not in `documents`.
    """
    by_id = {document.doc_id: document for document in documents}
    blocks, count = [], 0
    for doc_id in task.train_documents:
        # A sentence holds no line break (sentence_split joins lines); make
        # sure, since one would split it in two for the reader.
        sentences = [" ".join(s.split()) for s in by_id[doc_id].sentences]
        sentences = [s for s in sentences if s]
        count += len(sentences)
        blocks.append("".join(s + "\n" for s in sentences))
    write_text_atomically(os.fspath(path), "\n".join(blocks))
    return count
