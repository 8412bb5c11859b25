"""GLUE-style data processors: read task files into `InputExample`s.

Source: run_classifier.py `InputExample`, `PaddingInputExample`,
`DataProcessor`, `ColaProcessor`, `MnliProcessor`, `MrpcProcessor`,
`XnliProcessor` and the `processors` table of `main` (same file names,
columns, headers, guids and labels); the other GLUE tasks follow the files of
GLUE's `download_glue_data.py`. Each class's `columns` are (text_a, text_b,
label) column indexes per set and `layout` names the expected columns in
errors (`ClassifierDataError`). Adding a task: docs/classification.md.
"""
import csv
import dataclasses
import os

import tensorflow as tf
from bert_tf1.data.io.dynamic_padding import PaddingInputExample
from bert_tf1.data.io.errors import UserError

__all__ = [
    "InputExample",
    "PaddingInputExample",
    "ClassifierDataError",
    "MissingDataFileError",
    "DataProcessor",
    "PROCESSORS",
    "register_processor",
    "get_processor",
    "glue_header_of",
    "ColaProcessor",
    "MnliProcessor",
    "MnliMismatchedProcessor",
    "MrpcProcessor",
    "XnliProcessor",
    "Sst2Processor",
    "StsbProcessor",
    "QqpProcessor",
    "QnliProcessor",
    "RteProcessor",
    "WnliProcessor",
]


@dataclasses.dataclass
class InputExample:
    """One example for sequence(-pair) classification or regression.

    Source: run_classifier.py `InputExample`.

    Attributes:
      guid: str, e.g. "dev-5".
      text_a, text_b: str, the untokenized sequences (text_b None: single).
      label: str in `get_labels()`, float for regression, or None.
    """

    guid: str
    text_a: str
    text_b: str = None
    label: object = None


class ClassifierDataError(UserError):
    """A task data file is missing or does not have the expected layout."""


class MissingDataFileError(ClassifierDataError, FileNotFoundError):
    """A task data file does not exist (also a `FileNotFoundError`)."""


def _line_error(input_file, line_number, message):
    return ClassifierDataError("%s, line %d: %s" % (
        input_file, line_number, message))


class DataProcessor(object):
    """Base class of the readers of sequence classification data sets.

    Source: run_classifier.py `DataProcessor`. `get_labels()` returns None
    for regression tasks, which set `is_regression = True`.
    """

    #: True for tasks whose label is a real number (one model output).
    is_regression = False
    #: What `get_labels()` returns, in label-id order (None: regression).
    labels = None

    def get_train_examples(self, data_dir):
        """Gets the `InputExample`s of the train set."""
        return self._examples_for(data_dir, "train")

    def get_dev_examples(self, data_dir):
        """Gets the `InputExample`s of the dev set."""
        return self._examples_for(data_dir, "dev")

    def get_test_examples(self, data_dir):
        """Gets the `InputExample`s of the test set (for prediction)."""
        return self._examples_for(data_dir, "test")

    def _examples_for(self, data_dir, set_type):
        """The examples of one set; subclasses override this or the three
        `get_*_examples`."""
        raise NotImplementedError(
            "%s has no %s set" % (type(self).__name__, set_type))

    def get_labels(self):
        """Gets the list of labels of this data set (None: regression); by
        default a copy of `labels`."""
        if self.labels is None and not self.is_regression:
            raise NotImplementedError()
        return None if self.labels is None else list(self.labels)

    @classmethod
    def _read_tsv(cls, input_file, quotechar=None):
        """Rows (lists of str) of a tab-separated file, as the original.

        Raises:
          MissingDataFileError; ClassifierDataError (not UTF-8 text).
        """
        return [row for _, row in cls._read_tsv_lines(input_file, quotechar)]

    @classmethod
    def _read_tsv_lines(cls, input_file, quotechar=None):
        """Like `_read_tsv`, but yields (1-based line number, row) pairs."""
        if not tf.io.gfile.exists(input_file):
            raise MissingDataFileError(
                "data file not found: %s (expected the task's %s file in the "
                "GLUE download layout)" % (input_file,
                                           os.path.basename(input_file)))
        rows = []
        with tf.io.gfile.GFile(input_file, "r") as f:
            reader = csv.reader(f, delimiter="\t", quotechar=quotechar)
            try:
                for row in reader:
                    rows.append((reader.line_num, row))
            except UnicodeDecodeError as e:
                raise ClassifierDataError(
                    "%s, after line %d: not UTF-8 text (%s)" % (
                        input_file, reader.line_num, e)) from e
            except csv.Error as e:
                raise _line_error(input_file, reader.line_num, str(e)) from e
        return rows

    @staticmethod
    def _check_columns(input_file, line_number, row, needed, layout):
        """Raises unless `row` has at least `needed` columns."""
        if len(row) < needed:
            raise _line_error(
                input_file, line_number,
                "expected at least %d tab-separated columns (%s), found %d" % (
                    needed, layout, len(row)))

    def _check_label(self, input_file, line_number, label):
        """Returns `label` if it is in `get_labels()`, else raises."""
        labels = self.get_labels()
        if label not in labels:
            raise _line_error(
                input_file, line_number,
                "label %r is not one of the task's labels %r" % (
                    label, labels))
        return label

    @staticmethod
    def _require_examples(examples, input_file, what="rows"):
        """Returns `examples`; raises ClassifierDataError if empty."""
        if not examples:
            raise ClassifierDataError(
                "%s: no examples (expected tab-separated %s after the header "
                "line; the file is empty or holds only its header)" % (
                    input_file, what))
        return examples


class _TableProcessor(DataProcessor):
    """A task whose three sets are `<set>.tsv` files with fixed columns
    (own helper: each GLUE task's layout in one table)."""

    #: {set_type: file name}
    file_names = {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"}
    #: {set_type: True when line 0 is a header}
    has_header = {"train": True, "dev": True, "test": True}
    #: {set_type: (text_a column, text_b column or None, label column or
    #:  None for test sets; -1 means the last column)}
    columns = {}
    #: {set_type: column holding the guid number, or None for the row index}
    guid_column = {"train": 0, "dev": 0, "test": 0}
    #: {set_type: description of the expected columns, for error messages}
    layout = {}

    def _examples_for(self, data_dir, set_type):
        input_file = os.path.join(data_dir, self.file_names[set_type])
        return self._create_examples(
            self._read_tsv_lines(input_file), set_type, input_file)

    def _guid_prefix(self, set_type):
        return set_type

    def _test_label(self):
        """Placeholder label of test examples (their files carry none)."""
        if self.is_regression:
            return 0.0
        return self.get_labels()[0]

    def _create_examples(self, lines, set_type, input_file):
        a_col, b_col, label_col = self.columns[set_type]
        used = [c for c in (a_col, b_col, label_col,
                            self.guid_column[set_type]) if c is not None]
        needed = max(c for c in used if c >= 0) + 1
        if any(c < 0 for c in used):
            # A label in the last column (-1) needs a column of its own.
            needed += 1
        examples = []
        for i, (line_number, line) in enumerate(lines):
            if self.has_header[set_type] and i == 0:
                continue
            self._check_columns(input_file, line_number, line, needed,
                                self.layout[set_type])
            guid_column = self.guid_column[set_type]
            number = i if guid_column is None else line[guid_column]
            guid = "%s-%s" % (self._guid_prefix(set_type), number)
            text_a = line[a_col]
            text_b = line[b_col] if b_col is not None else None
            if label_col is None:
                label = self._test_label()
            elif self.is_regression:
                try:
                    label = float(line[label_col])
                except ValueError:
                    raise _line_error(
                        input_file, line_number,
                        "label %r is not a number (regression task)"
                        % (line[label_col],)) from None
            else:
                label = self._check_label(input_file, line_number,
                                          line[label_col])
            examples.append(InputExample(guid=guid, text_a=text_a,
                                         text_b=text_b, label=label))
        return self._require_examples(examples, input_file,
                                      "rows (%s)" % self.layout[set_type])


def _normalize_task_name(task_name):
    # "SST-2", "sst2" and "sst_2" all name one task.
    return task_name.lower().replace("-", "").replace("_", "")


def register_processor(task_name, processor_class=None):
    """Adds a `DataProcessor` subclass to `PROCESSORS` (call or decorator).

    Args:
      task_name: str, the name `get_processor` and `--task_name` accept
        (matched case-insensitively, ignoring "-" and "_").
      processor_class: a `DataProcessor` subclass; omit to get a decorator.

    Returns:
      `processor_class` (or the decorator).

    Raises:
      TypeError: `processor_class` is not a `DataProcessor` subclass.
      ValueError: another class is already registered under the name.
    """
    def register(cls):
        if not (isinstance(cls, type) and issubclass(cls, DataProcessor)):
            raise TypeError("register_processor(%r, ...) needs a "
                            "DataProcessor subclass, got %r" % (task_name,
                                                                cls))
        key = _normalize_task_name(task_name)
        for name, known in PROCESSORS.items():
            if _normalize_task_name(name) == key and known is not cls:
                raise ValueError("task %r is already registered (as %r, "
                                 "class %s)" % (task_name, name,
                                                known.__name__))
        PROCESSORS[task_name.lower()] = cls
        return cls

    if processor_class is None:
        return register
    return register(processor_class)


def get_processor(task_name):
    """Returns a new processor instance for `task_name`.

    Source: the `processors` table in run_classifier.py `main`; case, "-"
    and "_" are ignored.

    Raises:
      ValueError: unknown task; the message lists the known task names.
    """
    key = _normalize_task_name(task_name)
    for name, cls in PROCESSORS.items():
        if _normalize_task_name(name) == key:
            return cls()
    raise UserError("Task not found: %s (known tasks: %s)" % (
        task_name, ", ".join(sorted(PROCESSORS))))


class MrpcProcessor(_TableProcessor):
    """MRPC; guid "<set>-<row index>" (the first is "train-1").

    Source: run_classifier.py `MrpcProcessor`.
    """

    columns = {"train": (3, 4, 0), "dev": (3, 4, 0), "test": (3, 4, None)}
    guid_column = {"train": None, "dev": None, "test": None}
    layout = dict.fromkeys(
        ("train", "dev", "test"),
        "Quality, #1 ID, #2 ID, #1 String, #2 String")
    labels = ["0", "1"]


class ColaProcessor(_TableProcessor):
    """CoLA; train/dev have no header; guid "<set>-<row index>".

    Source: run_classifier.py `ColaProcessor`.
    """

    has_header = {"train": False, "dev": False, "test": True}
    columns = {"train": (3, None, 1), "dev": (3, None, 1),
               "test": (1, None, None)}
    guid_column = {"train": None, "dev": None, "test": None}
    layout = {"train": "source, label, original mark, sentence",
              "dev": "source, label, original mark, sentence",
              "test": "index, sentence"}
    labels = ["0", "1"]


class MnliProcessor(_TableProcessor):
    """MNLI, matched dev/test; guid "<set>-<column 0>", dev set "dev_matched".

    Source: run_classifier.py `MnliProcessor`.
    """

    file_names = {"train": "train.tsv", "dev": "dev_matched.tsv",
                  "test": "test_matched.tsv"}
    dev_set_name = "dev_matched"
    labels = ["contradiction", "entailment", "neutral"]
    columns = {"train": (8, 9, -1), "dev": (8, 9, -1), "test": (8, 9, None)}
    _layout = ("index, promptID, pairID, genre, sentence1_binary_parse, "
               "sentence2_binary_parse, sentence1_parse, sentence2_parse, "
               "sentence1, sentence2")
    layout = {"train": _layout + ", ..., gold_label",
              "dev": _layout + ", label1, ..., gold_label", "test": _layout}

    def _guid_prefix(self, set_type):
        return self.dev_set_name if set_type == "dev" else set_type


class MnliMismatchedProcessor(MnliProcessor):
    """MNLI with the mismatched dev/test sets ("mnli-mm"; not original)."""

    file_names = {"train": "train.tsv", "dev": "dev_mismatched.tsv",
                  "test": "test_mismatched.tsv"}
    dev_set_name = "dev_mismatched"


class XnliProcessor(DataProcessor):
    """XNLI, one language; no test set.

    Source: run_classifier.py `XnliProcessor` (which hard-codes `language`
    "zh").
    """

    labels = ["contradiction", "entailment", "neutral"]

    def __init__(self, language="zh"):
        self.language = language

    def get_train_examples(self, data_dir):
        """See base class."""
        input_file = os.path.join(
            data_dir, "multinli", "multinli.train.%s.tsv" % self.language)
        examples = []
        for i, (line_number, line) in enumerate(
                self._read_tsv_lines(input_file)):
            if i == 0:
                continue
            self._check_columns(input_file, line_number, line, 3,
                                "premise, hypo, label")
            label = line[2]
            if label == "contradictory":
                label = "contradiction"
            self._check_label(input_file, line_number, label)
            examples.append(InputExample(guid="train-%d" % i, text_a=line[0],
                                         text_b=line[1], label=label))
        return self._require_examples(examples, input_file,
                                      "rows (premise, hypo, label)")

    def get_dev_examples(self, data_dir):
        """See base class."""
        input_file = os.path.join(data_dir, "xnli.dev.tsv")
        examples = []
        for i, (line_number, line) in enumerate(
                self._read_tsv_lines(input_file)):
            if i == 0:
                continue
            # Column 0 decides whether the row is used at all.
            self._check_columns(input_file, line_number, line, 1, "language")
            if line[0] != self.language:
                continue
            self._check_columns(
                input_file, line_number, line, 8,
                "language, gold_label, sentence1_binary_parse, "
                "sentence2_binary_parse, sentence1_parse, sentence2_parse, "
                "sentence1, sentence2, ...")
            label = self._check_label(input_file, line_number, line[1])
            examples.append(InputExample(guid="dev-%d" % i, text_a=line[6],
                                         text_b=line[7], label=label))
        return self._require_examples(
            examples, input_file, "rows whose language column is %r"
            % self.language)

    def get_test_examples(self, data_dir):
        """The original XnliProcessor has no test set."""
        raise NotImplementedError(
            "the xnli task has no test set (the original XnliProcessor reads "
            "only multinli/multinli.train.<lang>.tsv and xnli.dev.tsv)")


class Sst2Processor(_TableProcessor):
    """SST-2 (not original); guid "<set>-<row index>" as MRPC."""

    columns = {"train": (0, None, 1), "dev": (0, None, 1),
               "test": (1, None, None)}
    guid_column = {"train": None, "dev": None, "test": None}
    layout = {"train": "sentence, label", "dev": "sentence, label",
              "test": "index, sentence"}
    labels = ["0", "1"]


class StsbProcessor(_TableProcessor):
    """STS-B (not original): regression, float labels, `get_labels()` None."""

    is_regression = True
    columns = {"train": (7, 8, -1), "dev": (7, 8, -1), "test": (7, 8, None)}
    _layout = ("index, genre, filename, year, old_index, source1, source2, "
               "sentence1, sentence2")
    layout = {"train": _layout + ", score", "dev": _layout + ", score",
              "test": _layout}


class QqpProcessor(_TableProcessor):
    """QQP (not original); guid "<set>-<id>"."""

    columns = {"train": (3, 4, 5), "dev": (3, 4, 5), "test": (1, 2, None)}
    _layout = "id, qid1, qid2, question1, question2, is_duplicate"
    layout = {"train": _layout, "dev": _layout,
              "test": "id, question1, question2"}
    labels = ["0", "1"]


class _IndexPairProcessor(_TableProcessor):
    """Tasks laid out `index, text_a, text_b, label` (test: no label)."""

    columns = {"train": (1, 2, 3), "dev": (1, 2, 3), "test": (1, 2, None)}


class QnliProcessor(_IndexPairProcessor):
    """QNLI (not original); guid "<set>-<index>"."""

    layout = {"train": "index, question, sentence, label",
              "dev": "index, question, sentence, label",
              "test": "index, question, sentence"}
    labels = ["entailment", "not_entailment"]


class RteProcessor(_IndexPairProcessor):
    """RTE (not original); guid "<set>-<index>"."""

    layout = {"train": "index, sentence1, sentence2, label",
              "dev": "index, sentence1, sentence2, label",
              "test": "index, sentence1, sentence2"}
    labels = ["entailment", "not_entailment"]


class WnliProcessor(_IndexPairProcessor):
    """WNLI (not original); guid "<set>-<index>"."""

    layout = RteProcessor.layout
    labels = ["0", "1"]


#: Task name (lower case) -> processor class; extend with `register_processor`.
PROCESSORS = {
    "cola": ColaProcessor,
    "mnli": MnliProcessor,
    "mnli-mm": MnliMismatchedProcessor,
    "mrpc": MrpcProcessor,
    "xnli": XnliProcessor,
    "sst-2": Sst2Processor,
    "sts-b": StsbProcessor,
    "qqp": QqpProcessor,
    "qnli": QnliProcessor,
    "rte": RteProcessor,
    "wnli": WnliProcessor,
}


def glue_header_of(line):
    """The task name (upper case) of the GLUE files whose header line
    `line` is (its TAB-separated columns, as each task's `layout` names
    them, a "..." standing for any columns), or None."""
    fields = [field.strip().lower() for field in line.split("\t")]
    for name, processor in PROCESSORS.items():
        for set_type, layout in getattr(processor, "layout", {}).items():
            if not getattr(processor, "has_header", {}).get(set_type):
                continue
            columns = [column.strip().lower() for column in layout.split(",")]
            known = columns[:columns.index("...")] if "..." in columns \
                else columns
            if fields[:len(known)] == known and (
                    "..." in columns or len(fields) == len(known)):
                return name.upper()
    return None
