"""The multiple-choice example, its errors and the rules every reader shares."""
import dataclasses
from typing import List, Optional

from bert_tf1.data.io.errors import UserError


@dataclasses.dataclass
class MultipleChoiceExample:
    """One multiple-choice question.

    Attributes:
      example_id: str (the file's id, else the 0-based row number).
      context: str, segment A of every choice.
      endings: list of str, segment B of each choice.
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


class MultipleChoiceDataError(UserError):
    """A multiple-choice data file does not have the expected layout; the
    message names the file (and line) and what was expected."""


class MissingDataFileError(MultipleChoiceDataError, FileNotFoundError):
    """A multiple-choice data file does not exist."""


def join_prefix_and_ending(prefix, ending):
    """`prefix + " " + ending`, or `ending` alone for an empty prefix.

    Source: rowanz/hellaswag `hellaswag_models/bert/run_bert.py` `_part_bs`.
    """
    return prefix + " " + ending if prefix else ending


def parse_label(value, num_choices, where):
    """A label value of a file as an int in [0, num_choices), or None.

    `value` is a str cell, a JSON int or None; None and blank mean no label.

    Raises:
      MultipleChoiceDataError: not an integer, or out of range (names
        `where`, "file, line N").
    """
    text = value.strip() if isinstance(value, str) else None
    if value is None or text == "":
        return None
    if text and (text.isdigit() or (text[0] in "+-" and text[1:].isdigit())):
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
    """Raises MultipleChoiceDataError unless `found == expected`."""
    if found != expected:
        raise MultipleChoiceDataError(
            "%s: found %d %s, expected num_choices=%d (every row must have "
            "the same number of choices)" % (where, found, what, expected))


def check_labels_consistent(examples, line_numbers, path):
    """Raises MultipleChoiceDataError naming the first line whose labelling
    differs from the first example's (all labelled or none)."""
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
