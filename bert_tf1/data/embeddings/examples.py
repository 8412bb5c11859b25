"""run_embeddings.py's data files, read and checked row by row.

Training rows follow the loss, never guessed (`LOSSES`):
- `mnrl` (in-batch negatives): `anchor \t positive [\t hard negative]`, 2 or
  3 texts, the same count on every row;
- `cosent`, `cosine` (scored pairs): `text_a \t text_b \t score`, the score
  a number inside --score_range (mapped to [0, 1] for `cosine`).
Evaluation: `sts` rows are scored pairs; `retrieval` rows are
`query \t relevant_document` (a query on several rows has several relevant
documents; the corpus is every document of the file).
No header line: a header is a row like any other (and fails the checks).
"""
import dataclasses
from typing import Optional, Tuple

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.text_files import read_user_text

#: --loss -> the texts per training row.
LOSSES = {"mnrl": (2, 3), "cosent": (2,), "cosine": (2,)}
#: --eval_kind values.
EVAL_KINDS = ("sts", "retrieval")


@dataclasses.dataclass(frozen=True)
class EmbeddingExample:
    """One training or evaluation row.

    Attributes:
      texts: tuple of str, the texts of the row (anchor, positive[, hard
        negative]; a scored pair; or one query or document).
      score: float or None, the row's score (as the loss takes it).
      line: str, "file:line" of the row, or a GLUE guid, for messages.
    """
    texts: Tuple[str, ...]
    score: Optional[float] = None
    line: str = ""


def parse_score_range(text, flag="--score_range"):
    """(low, high) floats from "low,high" with low < high.

    Raises:
      UserError: naming `flag`, when it is not two numbers low < high.
    """
    try:
        low, high = (float(part) for part in str(text).split(","))
    except ValueError:
        raise UserError(f"{flag}={text}: expected two numbers low,high "
                        "(e.g. 0,5)") from None
    if not low < high:
        raise UserError(f"{flag}={text}: expected low < high")
    return low, high


def _rows(path, flag):
    text = read_user_text(path, "a tab-separated text file", UserError,
                          f"{path}: file not found (needed by {flag})")
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line.split("\t")


def _check_texts(fields, where):
    for column, field in enumerate(fields, start=1):
        if not field.strip():
            raise UserError(f"{where}: column {column} is an empty text; "
                            "expected text in every text column")


def scored_pair(text_a, text_b, score, where, loss, score_range):
    """The example of a scored pair, its score checked and mapped.

    Args:
      text_a, text_b: str; score: str or float; where: "file:line" or guid.
      loss: "cosent" (score as given) or "cosine" (mapped linearly from
        `score_range` to [0, 1]).
      score_range: (low, high).

    Raises:
      UserError: naming `where`: an empty text, a score that is not a
        number or lies outside the range.
    """
    _check_texts((text_a, text_b), where)
    low, high = score_range
    try:
        value = float(score)
    except ValueError:
        raise UserError(f"{where}: score {score!r} is not a number; expected "
                        "text_a, text_b, score") from None
    if not low <= value <= high:
        raise UserError(f"{where}: score {value:g} is outside --score_range="
                        f"{low:g},{high:g}")
    if loss == "cosine":
        value = (value - low) / (high - low)
    return EmbeddingExample((text_a, text_b), value, where)


def read_training_file(path, loss, score_range, flag="--train_file"):
    """The EmbeddingExamples of a training TSV for `loss`.

    Raises:
      UserError: one line naming file and line: a row with another number
        of columns than `loss` takes (or than the first row, for `mnrl`),
        an empty text, a bad score; or no rows at all.
    """
    counts = LOSSES[loss]
    examples = []
    for number, fields in _rows(path, flag):
        where = f"{path}:{number}"
        if loss == "mnrl":
            if len(fields) not in counts:
                raise UserError(
                    f"{where}: {len(fields)} columns; --loss=mnrl expects 2 "
                    "or 3 (anchor, positive[, hard negative])")
            if examples and len(fields) != len(examples[0].texts):
                raise UserError(
                    f"{where}: {len(fields)} columns, but "
                    f"{examples[0].line} has {len(examples[0].texts)}; "
                    "--loss=mnrl expects the same on every row")
            _check_texts(fields, where)
            examples.append(EmbeddingExample(tuple(fields), None, where))
            continue
        if len(fields) != 3:
            raise UserError(f"{where}: {len(fields)} columns; --loss={loss} "
                            "expects 3 (text_a, text_b, score)")
        examples.append(scored_pair(*fields, where, loss, score_range))
    if not examples:
        raise UserError(f"{path}: no rows, expected at least one for {flag}")
    return examples


def read_sts_file(path, score_range, flag="--eval_file"):
    """Scored pairs (text_a, text_b, score) for STS evaluation; scores as
    given (only their order and linear relation count). Raises UserError
    as `read_training_file`."""
    examples = []
    for number, fields in _rows(path, flag):
        where = f"{path}:{number}"
        if len(fields) != 3:
            raise UserError(f"{where}: {len(fields)} columns; --eval_kind=sts "
                            "expects 3 (text_a, text_b, score)")
        examples.append(scored_pair(*fields, where, "cosent", score_range))
    if len(examples) < 2:
        raise UserError(f"{path}: {len(examples)} rows; --eval_kind=sts "
                        "needs at least 2 scored pairs")
    return examples


def retrieval_set(pairs):
    """(queries, documents, relevant) of (query, document) pairs: unique
    texts in first-seen order, relevant[i] the set of document indices of
    query i."""
    queries, documents, relevant = {}, {}, []
    for query, document in pairs:
        if query not in queries:
            queries[query] = len(queries)
            relevant.append(set())
        documents.setdefault(document, len(documents))
        relevant[queries[query]].add(documents[document])
    return list(queries), list(documents), relevant


def read_retrieval_file(path, flag="--eval_file"):
    """`query \\t relevant_document` rows as `retrieval_set`.

    Raises:
      UserError: naming file and line: not 2 columns, an empty text; or no
        rows.
    """
    pairs = []
    for number, fields in _rows(path, flag):
        where = f"{path}:{number}"
        if len(fields) != 2:
            raise UserError(f"{where}: {len(fields)} columns; --eval_kind="
                            "retrieval expects 2 (query, relevant_document)")
        _check_texts(fields, where)
        pairs.append(tuple(fields))
    if not pairs:
        raise UserError(f"{path}: no rows, expected at least one for {flag}")
    return retrieval_set(pairs)
