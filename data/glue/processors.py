"""GLUE-style data processors: read task files into `InputExample`s.

Reproduces the processors of google-research/bert `run_classifier.py`
(`InputExample`, `PaddingInputExample`, `DataProcessor`, `ColaProcessor`,
`MnliProcessor`, `MrpcProcessor`, `XnliProcessor`): the same file names,
columns, header handling, guids and label lists. The other GLUE tasks
(SST-2, STS-B, QQP, QNLI, RTE, WNLI, MNLI mismatched) follow the column
layouts of the files written by GLUE's `download_glue_data.py`.

Conventions kept from the original:
  * files are read with `csv.reader(delimiter="\\t", quotechar=None)`, so
    quote characters stay literal text;
  * labels are strings from `get_labels()`; test examples get a placeholder
    label (the first label, e.g. "0" or "contradiction") because test files
    carry none;
  * guids are "<set>-<n>": MRPC, CoLA and SST-2 number rows by their index in
    the file (the header is row 0), the tasks whose files have an index
    column use that column.

Differences from the original (checks, not behaviour changes on good data):
  * a missing file, a row with too few columns, an undecodable file or a
    label outside `get_labels()` raise `ClassifierDataError` (a
    `ValueError`) naming the file, the 1-based line number and what was
    expected, where the original raised a bare `IndexError`/`KeyError` later;
  * STS-B is a regression task: `get_labels()` returns None, the processor's
    `is_regression` is True and labels are floats.

Adding a task: subclass `DataProcessor` and register it, e.g.

    @register_processor("my-task")
    class MyTaskProcessor(DataProcessor):
        def get_train_examples(self, data_dir): ...
        def get_dev_examples(self, data_dir): ...
        def get_test_examples(self, data_dir): ...
        def get_labels(self):
            return ["no", "yes"]

after which `get_processor("my-task")` (and `--task_name=my-task` in
run_classifier.py, once the module defining it is imported) finds it.
"""
import csv
import os

import tensorflow as tf

__all__ = [
    "InputExample",
    "PaddingInputExample",
    "ClassifierDataError",
    "MissingDataFileError",
    "DataProcessor",
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
    "PROCESSORS",
    "register_processor",
    "get_processor",
]


class InputExample(object):
    """One example for sequence(-pair) classification or regression.

    Source: run_classifier.py `InputExample`.

    Attributes:
      guid: str, unique id for bookkeeping (e.g. "dev-5").
      text_a: str, the untokenized first sequence.
      text_b: str or None, the untokenized second sequence (pair tasks).
      label: str (a member of `get_labels()`), float for regression tasks,
        or None when unknown.
    """

    def __init__(self, guid, text_a, text_b=None, label=None):
        self.guid = guid
        self.text_a = text_a
        self.text_b = text_b
        self.label = label

    def __repr__(self):
        return "InputExample(guid=%r, text_a=%r, text_b=%r, label=%r)" % (
            self.guid, self.text_a, self.text_b, self.label)

    def __eq__(self, other):
        if not isinstance(other, InputExample):
            return NotImplemented
        return ((self.guid, self.text_a, self.text_b, self.label) ==
                (other.guid, other.text_a, other.text_b, other.label))


class PaddingInputExample(object):
    """Marker for a fake example that pads a set to a multiple of a batch.

    Source: run_classifier.py `PaddingInputExample`. `convert_single_example`
    turns it into all-zero features with `is_real_example=False`, which get
    weight 0 in the metrics and are dropped from predictions. A class rather
    than None so that a stray None is never taken for padding.
    """


class ClassifierDataError(ValueError):
    """A task data file is missing or does not have the expected layout."""


class MissingDataFileError(ClassifierDataError, FileNotFoundError):
    """A task data file does not exist (also a `FileNotFoundError`)."""


def _line_error(input_file, line_number, message):
    return ClassifierDataError("%s, line %d: %s" % (
        input_file, line_number, message))


class DataProcessor(object):
    """Base class of the readers of sequence classification data sets.

    Source: run_classifier.py `DataProcessor`. Subclasses implement
    `get_train_examples`, `get_dev_examples`, `get_test_examples` (each takes
    the task's data directory and returns a list of `InputExample`) and
    `get_labels` (the list of label strings, whose order fixes the label ids;
    None for regression tasks, which also set `is_regression = True`).
    """

    #: True for tasks whose label is a real number (one model output).
    is_regression = False

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
        """Gets the list of labels of this data set (None: regression)."""
        raise NotImplementedError()

    @classmethod
    def _read_tsv(cls, input_file, quotechar=None):
        """Reads a tab-separated file into a list of rows (lists of str).

        Same parsing as the original `_read_tsv`; raises
        `MissingDataFileError` for a missing file and `ClassifierDataError`
        for a file that is not UTF-8 text.
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
        # tf.io.gfile, as the original's tf.gfile, so gs:// paths work too.
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
    """A task whose three sets are `<set>.tsv` files with fixed columns.

    Subclasses set the class attributes below; `_create_examples` does the
    rest. Own helper (not in the original) that keeps each GLUE task's
    layout in one table.
    """

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
        return examples


class MrpcProcessor(_TableProcessor):
    """Microsoft Research Paraphrase Corpus (GLUE version).

    Source: run_classifier.py `MrpcProcessor`. Columns `Quality, #1 ID,
    #2 ID, #1 String, #2 String` (test: `index` first); header skipped;
    text_a = column 3, text_b = column 4, label = column 0 ("0"/"1"); test
    label "0"; guid "<set>-<row index>" (the first example is "train-1").
    """

    has_header = {"train": True, "dev": True, "test": True}
    columns = {"train": (3, 4, 0), "dev": (3, 4, 0), "test": (3, 4, None)}
    guid_column = {"train": None, "dev": None, "test": None}
    layout = dict.fromkeys(
        ("train", "dev", "test"),
        "Quality, #1 ID, #2 ID, #1 String, #2 String")

    def get_labels(self):
        """See base class."""
        return ["0", "1"]


class ColaProcessor(_TableProcessor):
    """Corpus of Linguistic Acceptability (GLUE version).

    Source: run_classifier.py `ColaProcessor`. train/dev have no header and
    columns `source, label, original mark, sentence` (text_a = column 3,
    label = column 1); test has a header `index sentence` (text_a =
    column 1, label "0"). guid "<set>-<row index>" (train starts at
    "train-0", test at "test-1").
    """

    has_header = {"train": False, "dev": False, "test": True}
    columns = {"train": (3, None, 1), "dev": (3, None, 1),
               "test": (1, None, None)}
    guid_column = {"train": None, "dev": None, "test": None}
    layout = {"train": "source, label, original mark, sentence",
              "dev": "source, label, original mark, sentence",
              "test": "index, sentence"}

    def get_labels(self):
        """See base class."""
        return ["0", "1"]


class MnliProcessor(_TableProcessor):
    """Multi-Genre NLI, matched dev/test sets (GLUE version).

    Source: run_classifier.py `MnliProcessor`. Files train.tsv,
    dev_matched.tsv, test_matched.tsv; header skipped; guid
    "<set>-<column 0>" with sets "train", "dev_matched", "test"; text_a =
    column 8 (sentence1), text_b = column 9 (sentence2), label = the last
    column (gold_label); test label "contradiction".
    """

    file_names = {"train": "train.tsv", "dev": "dev_matched.tsv",
                  "test": "test_matched.tsv"}
    dev_set_name = "dev_matched"
    columns = {"train": (8, 9, -1), "dev": (8, 9, -1), "test": (8, 9, None)}
    layout = {
        "train": "index, promptID, pairID, genre, sentence1_binary_parse, "
                 "sentence2_binary_parse, sentence1_parse, sentence2_parse, "
                 "sentence1, sentence2, ..., gold_label",
        "dev": "index, promptID, pairID, genre, sentence1_binary_parse, "
               "sentence2_binary_parse, sentence1_parse, sentence2_parse, "
               "sentence1, sentence2, label1, ..., gold_label",
        "test": "index, promptID, pairID, genre, sentence1_binary_parse, "
                "sentence2_binary_parse, sentence1_parse, sentence2_parse, "
                "sentence1, sentence2",
    }

    def _guid_prefix(self, set_type):
        return self.dev_set_name if set_type == "dev" else set_type

    def get_labels(self):
        """See base class."""
        return ["contradiction", "entailment", "neutral"]


class MnliMismatchedProcessor(MnliProcessor):
    """Multi-Genre NLI with the mismatched dev/test sets ("mnli-mm").

    Same as `MnliProcessor` but reads dev_mismatched.tsv (guids
    "dev_mismatched-<index>") and test_mismatched.tsv; not in the original.
    """

    file_names = {"train": "train.tsv", "dev": "dev_mismatched.tsv",
                  "test": "test_mismatched.tsv"}
    dev_set_name = "dev_mismatched"


class XnliProcessor(DataProcessor):
    """Cross-lingual NLI, one language (default "zh", as the original).

    Source: run_classifier.py `XnliProcessor`. Train reads
    `multinli/multinli.train.<lang>.tsv` (header skipped; text_a = column 0,
    text_b = column 1, label = column 2 with "contradictory" renamed
    "contradiction"). Dev reads `xnli.dev.tsv` (header skipped) and keeps
    rows whose column 0 equals the language: label = column 1, text_a =
    column 6, text_b = column 7. guids "train-<row>", "dev-<row>" (row index
    in the file, counting skipped rows). There is no test set, as in the
    original.

    Args:
      language: XNLI language code; the original hard-codes "zh".
    """

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
        return examples

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
        return examples

    def get_test_examples(self, data_dir):
        """The original XnliProcessor has no test set."""
        raise NotImplementedError(
            "the xnli task has no test set (the original XnliProcessor reads "
            "only multinli/multinli.train.<lang>.tsv and xnli.dev.tsv)")

    def get_labels(self):
        """See base class."""
        return ["contradiction", "entailment", "neutral"]


class Sst2Processor(_TableProcessor):
    """Stanford Sentiment Treebank, binary (GLUE version; not original).

    train/dev: header `sentence label` (text_a = column 0, label = column 1);
    test: header `index sentence` (text_a = column 1, label "0"). guid
    "<set>-<row index>" as MRPC.
    """

    columns = {"train": (0, None, 1), "dev": (0, None, 1),
               "test": (1, None, None)}
    guid_column = {"train": None, "dev": None, "test": None}
    layout = {"train": "sentence, label", "dev": "sentence, label",
              "test": "index, sentence"}

    def get_labels(self):
        """See base class."""
        return ["0", "1"]


class StsbProcessor(_TableProcessor):
    """Semantic Textual Similarity Benchmark (GLUE version; not original).

    A regression task: `get_labels()` is None, `is_regression` is True and
    labels are floats (the score, 0..5). Columns `index, genre, filename,
    year, old_index, source1, source2, sentence1, sentence2, score` (test
    has no score); text_a = column 7, text_b = column 8, label = last column;
    test label 0.0; guid "<set>-<index>".
    """

    is_regression = True
    columns = {"train": (7, 8, -1), "dev": (7, 8, -1), "test": (7, 8, None)}
    _layout = ("index, genre, filename, year, old_index, source1, source2, "
               "sentence1, sentence2")
    layout = {"train": _layout + ", score", "dev": _layout + ", score",
              "test": _layout}

    def get_labels(self):
        """None: STS-B is a regression task."""
        return None


class QqpProcessor(_TableProcessor):
    """Quora Question Pairs (GLUE version; not original).

    train/dev: header `id, qid1, qid2, question1, question2, is_duplicate`
    (text_a = column 3, text_b = column 4, label = column 5); test: header
    `id, question1, question2` (text_a = column 1, text_b = column 2, label
    "0"). guid "<set>-<id>".
    """

    columns = {"train": (3, 4, 5), "dev": (3, 4, 5), "test": (1, 2, None)}
    _layout = "id, qid1, qid2, question1, question2, is_duplicate"
    layout = {"train": _layout, "dev": _layout,
              "test": "id, question1, question2"}

    def get_labels(self):
        """See base class."""
        return ["0", "1"]


class _IndexPairProcessor(_TableProcessor):
    """Tasks laid out `index, text_a, text_b, label` (test: no label)."""

    columns = {"train": (1, 2, 3), "dev": (1, 2, 3), "test": (1, 2, None)}


class QnliProcessor(_IndexPairProcessor):
    """Question NLI (GLUE version; not original).

    Columns `index, question, sentence, label` (test has no label);
    labels "entailment"/"not_entailment"; test label "entailment"; guid
    "<set>-<index>".
    """

    layout = {"train": "index, question, sentence, label",
              "dev": "index, question, sentence, label",
              "test": "index, question, sentence"}

    def get_labels(self):
        """See base class."""
        return ["entailment", "not_entailment"]


class RteProcessor(_IndexPairProcessor):
    """Recognizing Textual Entailment (GLUE version; not original).

    Columns `index, sentence1, sentence2, label` (test has no label);
    labels "entailment"/"not_entailment"; test label "entailment"; guid
    "<set>-<index>".
    """

    layout = {"train": "index, sentence1, sentence2, label",
              "dev": "index, sentence1, sentence2, label",
              "test": "index, sentence1, sentence2"}

    def get_labels(self):
        """See base class."""
        return ["entailment", "not_entailment"]


class WnliProcessor(_IndexPairProcessor):
    """Winograd NLI (GLUE version; not original).

    Columns `index, sentence1, sentence2, label` with labels "0"/"1" (test
    has no label; test label "0"); guid "<set>-<index>".
    """

    layout = RteProcessor.layout

    def get_labels(self):
        """See base class."""
        return ["0", "1"]


#: Task name (lower case) -> processor class. The original's four plus the
#: rest of GLUE. Extend with `register_processor`.
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


def _normalize_task_name(task_name):
    # "SST-2", "sst2" and "sst_2" all name one task.
    return task_name.lower().replace("-", "").replace("_", "")


def register_processor(task_name, processor_class=None):
    """Adds a `DataProcessor` subclass to `PROCESSORS` under `task_name`.

    Usable as a call, `register_processor("my-task", MyProcessor)`, or as a
    class decorator, `@register_processor("my-task")`.

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

    Source: the `processors` table in run_classifier.py `main` (which
    lower-cases the name); here "-" and "_" are also ignored, so "sst2",
    "SST-2" and "sst_2" all work.

    Raises:
      ValueError: unknown task; the message lists the known task names.
    """
    key = _normalize_task_name(task_name)
    for name, cls in PROCESSORS.items():
        if _normalize_task_name(name) == key:
            return cls()
    raise ValueError("Task not found: %s (known tasks: %s)" % (
        task_name, ", ".join(sorted(PROCESSORS))))
