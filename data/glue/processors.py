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
import os

from data.glue import processor_base
from data.glue.processor_base import (  # noqa: F401  (re-exported)
    PROCESSORS, ClassifierDataError, DataProcessor, InputExample,
    MissingDataFileError, PaddingInputExample, _TableProcessor,
    get_processor, register_processor)

__all__ = processor_base.__all__ + [
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
PROCESSORS.update({
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
})
