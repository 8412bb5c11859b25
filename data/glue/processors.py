"""GLUE-style data processors: read task files into `InputExample`s.

Source: run_classifier.py `ColaProcessor`, `MnliProcessor`, `MrpcProcessor`,
`XnliProcessor` (same file names, columns, headers, guids and labels); the
other GLUE tasks follow the files of GLUE's `download_glue_data.py`. Each
class's `columns` are (text_a, text_b, label) column indexes per set and
`layout` names the expected columns in errors (`ClassifierDataError`). Adding
a task: docs/classification.md.
"""
import os

from bert_tf1.data.glue import processor_base
from bert_tf1.data.glue.processor_base import (  # noqa: F401  (re-exported)
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
