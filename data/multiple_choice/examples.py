"""The multiple-choice example, its errors and the rules every reader shares.

A multiple-choice example is one context (segment A) and N candidate
continuations (segment B of each of the N rows the model scores); the label
is the index of the right one. BERT paper §4.4 (SWAG); the original
repository has no SWAG code, its author's recipe is N rows
`[CLS] context [SEP] continuation [SEP]` per example, one score per row and a
softmax over the N scores.
"""
import dataclasses
from typing import List, Optional

from data.io.errors import UserError

__all__ = [
    "MultipleChoiceExample",
    "PaddingExample",
    "MultipleChoiceDataError",
    "MissingDataFileError",
    "join_prefix_and_ending",
    "parse_label",
    "check_num_choices",
    "check_labels_consistent",
]


@dataclasses.dataclass
class MultipleChoiceExample:
    """One multiple-choice question.

    Attributes:
      example_id: str, an id for bookkeeping (the file's own id when it has
        one, else the 0-based row number).
      context: str, segment A of every choice.
      endings: list of str, segment B of choice k (for SWAG and HellaSwag the
        shared prefix `sent2`/`ctx_b` is already joined to each ending, see
        `join_prefix_and_ending`).
      label: int in [0, len(endings)), or None for an unlabelled (test) row.
    """
    example_id: str
    context: str
    endings: List[str]
    label: Optional[int] = None

    @property
    def num_choices(self):
        """int, len(endings)."""
        return len(self.endings)


class PaddingExample:
    """Marker for a fake example that pads a set to a multiple of a batch.

    Its features are all zeros with label_ids 0 and is_real_example 0 (as the
    original run_classifier.py `PaddingInputExample`), so metrics can give it
    weight 0 and predictions can drop it. A class rather than None so that a
    stray None is never taken for padding.
    """


class MultipleChoiceDataError(UserError):
    """A multiple-choice data file does not have the expected layout; the
    message names the file (and line) and what was expected."""


class MissingDataFileError(MultipleChoiceDataError, FileNotFoundError):
    """A multiple-choice data file does not exist."""


def join_prefix_and_ending(prefix, ending):
    """Segment B of one choice: `prefix + " " + ending`, or `ending` alone
    when the prefix is empty.

    The empty-prefix rule is the HellaSwag authors' (`_part_bs` in
    rowanz/hellaswag `hellaswag_models/bert/run_bert.py`: an empty `ctx_b`
    gives the endings alone). Hugging Face's
    `transformers/examples/pytorch/multiple-choice/run_swag.py` always writes
    `f"{sent2} {ending}"`; the only difference is a leading space, which
    BERT's tokenizer drops, so both give the same WordPiece tokens.

    Args:
      prefix: str (SWAG `sent2`, HellaSwag `ctx_b`), may be "".
      ending: str.

    Returns:
      str.
    """
    return prefix + " " + ending if prefix else ending


def parse_label(value, num_choices, where):
    """A label value of a file as an int in [0, num_choices), or None.

    Args:
      value: str (CSV/TSV cell), int (JSON) or None; None, "" and a
        whitespace-only string mean "no label" (test files).
      num_choices: int.
      where: str, "file, line N" for the message.

    Returns:
      int or None.

    Raises:
      MultipleChoiceDataError: not an integer (bools and floats included),
        or outside 0..num_choices-1.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if not (text.isdigit() or (text[0] in "+-" and text[1:].isdigit())):
            raise MultipleChoiceDataError(
                "%s: label %r is not an integer; expected the index of the "
                "right ending, 0..%d" % (where, value, num_choices - 1))
        label = int(text)
    elif isinstance(value, int) and not isinstance(value, bool):
        label = value
    else:
        raise MultipleChoiceDataError(
            "%s: label %r is not an integer; expected the index of the right "
            "ending, 0..%d" % (where, value, num_choices - 1))
    if not 0 <= label < num_choices:
        raise MultipleChoiceDataError(
            "%s: label %d is outside 0..%d (the row has %d choices)" % (
                where, label, num_choices - 1, num_choices))
    return label


def check_num_choices(found, expected, where, what="endings"):
    """Raises MultipleChoiceDataError unless `found == expected`.

    Args:
      found, expected: int.
      where: str, "file, line N".
      what: str, what was counted, for the message.
    """
    if found != expected:
        raise MultipleChoiceDataError(
            "%s: found %d %s, expected num_choices=%d (every row must have "
            "the same number of choices)" % (where, found, what, expected))


def check_labels_consistent(examples, line_numbers, path):
    """Raises unless the examples are all labelled or all unlabelled.

    A file with labels on some rows only is most likely a mistake (a dev file
    with a lost cell); silently predicting its unlabelled rows as label 0
    would skew the metrics.

    Args:
      examples: list of MultipleChoiceExample.
      line_numbers: list of int, the 1-based line of each example.
      path: str, the file, for the message.

    Raises:
      MultipleChoiceDataError: names the first line whose labelling differs
        from the first example's.
    """
    if not examples:
        return
    first_labelled = examples[0].label is not None
    for example, line in zip(examples, line_numbers):
        if (example.label is not None) != first_labelled:
            raise MultipleChoiceDataError(
                "%s, line %d: %s, but line %d %s; a file must label every "
                "row (train/dev) or none (test)" % (
                    path, line,
                    "has a label" if example.label is not None
                    else "has no label",
                    line_numbers[0],
                    "has one" if first_labelled else "has none"))
