"""Classification examples, `DataProcessor`, its table reader and registry.

Source: run_classifier.py (`InputExample`, `PaddingInputExample`,
`DataProcessor`, the `processors` table of `main`). Import from
bert_tf1.data.glue.processors, which re-exports these names.
"""
import csv
import dataclasses
import os

import tensorflow as tf
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


class PaddingInputExample(object):
    """A fake example padding a set to a multiple of a batch (all-zero
    features, `is_real_example=False`).

    Source: run_classifier.py `PaddingInputExample`.
    """


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
        raise NotImplementedError(
            "%s has no train set" % type(self).__name__)

    def get_dev_examples(self, data_dir):
        """Gets the `InputExample`s of the dev set."""
        raise NotImplementedError(
            "%s has no dev set" % type(self).__name__)

    def get_test_examples(self, data_dir):
        """Gets the `InputExample`s of the test set (for prediction)."""
        raise NotImplementedError(
            "%s has no test set" % type(self).__name__)

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

    @staticmethod
    def _check_float_label(input_file, line_number, text):
        """Returns the regression label `text` as a float, else raises."""
        try:
            return float(text)
        except ValueError:
            raise _line_error(
                input_file, line_number,
                "label %r is not a number (regression task)" % (text,)
            ) from None


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

    def get_train_examples(self, data_dir):
        """See base class."""
        return self._examples_for(data_dir, "train")

    def get_dev_examples(self, data_dir):
        """See base class."""
        return self._examples_for(data_dir, "dev")

    def get_test_examples(self, data_dir):
        """See base class."""
        return self._examples_for(data_dir, "test")

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
            if self.guid_column[set_type] is None:
                guid = "%s-%s" % (self._guid_prefix(set_type), i)
            else:
                guid = "%s-%s" % (self._guid_prefix(set_type),
                                  line[self.guid_column[set_type]])
            text_a = line[a_col]
            text_b = line[b_col] if b_col is not None else None
            if label_col is None:
                label = self._test_label()
            elif self.is_regression:
                label = self._check_float_label(input_file, line_number,
                                                line[label_col])
            else:
                label = self._check_label(input_file, line_number,
                                          line[label_col])
            examples.append(InputExample(guid=guid, text_a=text_a,
                                         text_b=text_b, label=label))
        return self._require_examples(examples, input_file,
                                      "rows (%s)" % self.layout[set_type])


#: Task name (lower case) -> processor class (filled by bert_tf1.data.glue.processors).
PROCESSORS = {}


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
