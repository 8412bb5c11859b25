"""Processors: the real GLUE files, small MNLI/QQP/XNLI files, errors."""
import csv

import pytest

from bert_tf1.data.glue import processors as cp


@pytest.fixture(scope="module")
def glue_dir(data_dir):
    return data_dir / "glue"


def _read_rows(path):
    # Independent reading of a file, for cross-checks: one row per line.
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f, delimiter="\t", quotechar=None))


def _write_tsv(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("\t".join(r) + "\n" for r in rows),
                    encoding="utf-8")


# ---------------------------------------------------------------- real data

@pytest.mark.parametrize("task,folder,set_type,count", [
    ("mrpc", "MRPC", "train", 3668),
    ("mrpc", "MRPC", "dev", 408),
    ("mrpc", "MRPC", "test", 1725),
    ("cola", "CoLA", "dev", 1043),
    ("cola", "CoLA", "test", 1063),
    ("sst-2", "SST-2", "dev", 872),
    ("sts-b", "STS-B", "dev", 1500),
    ("sts-b", "STS-B", "test", 1379),
    ("rte", "RTE", "dev", 277),
    ("rte", "RTE", "train", 2490),
    ("qnli", "QNLI", "dev", 5463),
    ("wnli", "WNLI", "dev", 71),
    ("wnli", "WNLI", "test", 146),
])
def test_real_glue_counts(glue_dir, task, folder, set_type, count):
    processor = cp.get_processor(task)
    examples = getattr(processor, "get_%s_examples" % set_type)(
        str(glue_dir / folder))
    assert len(examples) == count
    assert len({e.guid for e in examples}) == count
    labels = processor.get_labels()
    for e in examples:
        if labels is None:
            assert isinstance(e.label, float)
        else:
            assert e.label in labels


def test_mrpc_dev_matches_original_rules(glue_dir):
    rows = _read_rows(glue_dir / "MRPC" / "dev.tsv")
    examples = cp.get_processor("mrpc").get_dev_examples(glue_dir / "MRPC")
    # Header (row 0, with a BOM) skipped; guid is "dev-<row index>".
    assert rows[0][0] == "\ufeffQuality"
    for i, e in enumerate(examples, start=1):
        assert e.guid == "dev-%d" % i
        assert (e.text_a, e.text_b, e.label) == (rows[i][3], rows[i][4],
                                                 rows[i][0])
    # Quotes stay literal (quotechar=None).
    assert examples[0].text_b.startswith('"The foodservice pie')
    assert sum(e.label == "1" for e in examples) == 279  # GLUE MRPC dev


def test_mrpc_test_label_placeholder(glue_dir):
    examples = cp.get_processor("mrpc").get_test_examples(glue_dir / "MRPC")
    assert {e.label for e in examples} == {"0"}
    assert examples[0].guid == "test-1"
    assert examples[0].text_a.startswith("PCCW's chief operating officer")


def test_cola_layouts(glue_dir):
    processor = cp.get_processor("CoLA")
    dev = processor.get_dev_examples(glue_dir / "CoLA")
    rows = _read_rows(glue_dir / "CoLA" / "dev.tsv")
    # No header in train/dev: guids start at 0; text = column 3.
    assert dev[0].guid == "dev-0"
    assert dev[0].text_a == rows[0][3]
    assert dev[0].text_b is None
    assert [e.label for e in dev] == [r[1] for r in rows]
    # dev.tsv lacks a final newline: its last row is still read.
    assert dev[-1].text_a == rows[-1][3]
    test = processor.get_test_examples(glue_dir / "CoLA")
    assert test[0].guid == "test-1"
    assert test[0].text_a == "Bill whistled past the house."
    assert test[0].label == "0"


def test_sst2(glue_dir):
    processor = cp.get_processor("sst2")
    dev = processor.get_dev_examples(glue_dir / "SST-2")
    assert dev[0].text_a == "it 's a charming and often affecting journey . "
    assert dev[0].label == "1" and dev[0].text_b is None
    test = processor.get_test_examples(glue_dir / "SST-2")
    assert len(test) == 1821
    assert test[0].text_a == "uneasy mishmash of styles and genres ."


def test_stsb_is_regression(glue_dir):
    processor = cp.get_processor("STS-B")
    assert processor.is_regression
    assert processor.get_labels() is None
    dev = processor.get_dev_examples(glue_dir / "STS-B")
    assert dev[0].guid == "dev-0"
    assert dev[0].text_a == "A man with a hard hat is dancing."
    assert dev[0].text_b == "A man wearing a hard hat is dancing."
    assert dev[0].label == 5.0 and dev[1].label == 4.75
    assert all(0.0 <= e.label <= 5.0 for e in dev)
    test = processor.get_test_examples(glue_dir / "STS-B")
    assert test[0].text_b == "A girl is brushing her hair."
    assert {e.label for e in test} == {0.0}


def test_index_pair_tasks(glue_dir):
    rte = cp.get_processor("rte").get_dev_examples(glue_dir / "RTE")
    assert rte[0].guid == "dev-0"
    assert rte[0].text_b == "Christopher Reeve had an accident."
    assert rte[0].label == "not_entailment"
    qnli = cp.get_processor("qnli")
    assert qnli.get_labels() == ["entailment", "not_entailment"]
    test = qnli.get_test_examples(glue_dir / "QNLI")
    assert len(test) == 5463 and test[0].label == "entailment"
    wnli = cp.get_processor("wnli").get_dev_examples(glue_dir / "WNLI")
    assert (wnli[1].text_b, wnli[1].label) == ("Susan did not answer.", "1")


# -------------------------------------------- MNLI / QQP / XNLI (tmp files)

_MNLI_PREFIX = ["promptID", "pairID", "genre", "s1_binary_parse",
                "s2_binary_parse", "s1_parse", "s2_parse"]


def _mnli_row(index, s1, s2, labels):
    return [str(index), "p%d" % index, "q%d" % index, "fiction", "( bp )",
            "( bp )", "(ROOT)", "(ROOT)", s1, s2] + labels


def _write_mnli(folder):
    header = ["index"] + _MNLI_PREFIX + ["sentence1", "sentence2"]
    _write_tsv(folder / "train.tsv", [
        header + ["label1", "gold_label"],
        _mnli_row(0, "A man eats.", "Someone eats.", ["entailment"] * 2),
        _mnli_row(7, "It rains.", "It is dry.",
                  ["neutral", "contradiction"]),
    ])
    dev_header = header + ["label%d" % k for k in range(1, 6)] + [
        "gold_label"]
    for name, s1 in (("dev_matched", "matched text"),
                     ("dev_mismatched", "mismatched text")):
        _write_tsv(folder / ("%s.tsv" % name), [
            dev_header,
            _mnli_row(3, s1, '"quoted" b', ["neutral"] * 5 + ["neutral"]),
        ])
    for name in ("test_matched", "test_mismatched"):
        _write_tsv(folder / ("%s.tsv" % name), [
            header, _mnli_row(11, name, "hypothesis", [])])


def test_mnli_and_mismatched(tmp_path):
    _write_mnli(tmp_path)
    mnli = cp.get_processor("MNLI")
    assert mnli.get_labels() == ["contradiction", "entailment", "neutral"]
    train = mnli.get_train_examples(tmp_path)
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in train] == [
        ("train-0", "A man eats.", "Someone eats.", "entailment"),
        ("train-7", "It rains.", "It is dry.", "contradiction"),
    ]
    dev = mnli.get_dev_examples(tmp_path)
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in dev] == [
        ("dev_matched-3", "matched text", '"quoted" b', "neutral")]
    test = mnli.get_test_examples(tmp_path)
    assert [(e.guid, e.text_a, e.label) for e in test] == [
        ("test-11", "test_matched", "contradiction")]

    mm = cp.get_processor("mnli-mm")
    assert isinstance(mm, cp.MnliMismatchedProcessor)
    assert mm.get_train_examples(tmp_path) == train
    dev = mm.get_dev_examples(tmp_path)
    assert [(e.guid, e.text_a) for e in dev] == [
        ("dev_mismatched-3", "mismatched text")]
    assert mm.get_test_examples(tmp_path)[0].text_a == "test_mismatched"


def test_qqp(tmp_path):
    _write_tsv(tmp_path / "train.tsv", [
        ["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
        ["133273", "213221", "213222", "How is the life?", "How's life?",
         "1"],
        ["402555", "536040", "536041", "Why?", "Why not?", "0"],
    ])
    _write_tsv(tmp_path / "test.tsv", [
        ["id", "question1", "question2"],
        ["0", "Would you?", "Could you?"],
    ])
    qqp = cp.get_processor("QQP")
    train = qqp.get_train_examples(tmp_path)
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in train] == [
        ("train-133273", "How is the life?", "How's life?", "1"),
        ("train-402555", "Why?", "Why not?", "0"),
    ]
    test = qqp.get_test_examples(tmp_path)
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in test] == [
        ("test-0", "Would you?", "Could you?", "0")]


def _write_xnli(tmp_path):
    _write_tsv(tmp_path / "multinli" / "multinli.train.zh.tsv", [
        ["premise", "hypo", "label"],
        ["他说。", "他没说。", "contradictory"],
        ["我来了。", "有人来了。", "entailment"],
    ])
    header = ["language", "gold_label", "sentence1_binary_parse",
              "sentence2_binary_parse", "sentence1_parse", "sentence2_parse",
              "sentence1", "sentence2", "promptID", "pairID", "genre"]
    _write_tsv(tmp_path / "xnli.dev.tsv", [
        header,
        ["en", "neutral", "", "", "", "", "He came.", "He left.", "1", "1",
         "g"],
        ["zh", "neutral", "", "", "", "", "他来了。", "他走了。", "1", "1",
         "g"],
        ["de", "entailment"],  # other languages are skipped unchecked
        ["zh", "entailment", "", "", "", "", "好。", "很好。", "2", "2", "g"],
    ])


def test_xnli(tmp_path):
    _write_xnli(tmp_path)
    xnli = cp.get_processor("xnli")
    assert xnli.language == "zh"
    train = xnli.get_train_examples(tmp_path)
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in train] == [
        ("train-1", "他说。", "他没说。", "contradiction"),
        ("train-2", "我来了。", "有人来了。", "entailment"),
    ]
    dev = xnli.get_dev_examples(tmp_path)
    # guids count every row of the file, as in the original.
    assert [(e.guid, e.text_a, e.text_b, e.label) for e in dev] == [
        ("dev-2", "他来了。", "他走了。", "neutral"),
        ("dev-4", "好。", "很好。", "entailment"),
    ]
    en = cp.XnliProcessor(language="en").get_dev_examples(tmp_path)
    assert [e.text_a for e in en] == ["He came."]
    with pytest.raises(NotImplementedError, match="no test set"):
        xnli.get_test_examples(tmp_path)


# ------------------------------------------------------------------ errors

def test_missing_file_is_named(tmp_path):
    with pytest.raises(cp.ClassifierDataError, match=r"dev\.tsv") as info:
        cp.get_processor("mrpc").get_dev_examples(tmp_path)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, FileNotFoundError)
    assert str(tmp_path) in str(info.value)
    with pytest.raises(cp.MissingDataFileError, match="dev_mismatched.tsv"):
        cp.get_processor("mnli-mm").get_dev_examples(tmp_path)


def test_short_row_names_file_and_line(tmp_path):
    _write_tsv(tmp_path / "dev.tsv", [
        ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
        ["1", "1", "2", "a", "b"],
        ["0", "3", "4", "only text_a"],
    ])
    with pytest.raises(cp.ClassifierDataError) as info:
        cp.get_processor("mrpc").get_dev_examples(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "dev.tsv") in message
    assert "line 3" in message
    assert "at least 5" in message and "found 4" in message


def test_blank_line_is_an_error(tmp_path):
    (tmp_path / "dev.tsv").write_text("sentence\tlabel\nok\t1\n\nok\t0\n",
                                      encoding="utf-8")
    with pytest.raises(cp.ClassifierDataError, match="line 3"):
        cp.get_processor("sst-2").get_dev_examples(tmp_path)


def test_bad_label_names_file_line_label_and_list(tmp_path):
    _write_tsv(tmp_path / "dev.tsv", [
        ["index", "sentence1", "sentence2", "label"],
        ["0", "a", "b", "entailment"],
        ["1", "a", "b", "entailed"],
    ])
    with pytest.raises(cp.ClassifierDataError) as info:
        cp.get_processor("rte").get_dev_examples(tmp_path)
    message = str(info.value)
    assert "dev.tsv, line 3" in message
    assert "'entailed'" in message
    assert "['entailment', 'not_entailment']" in message


def test_bad_regression_label(tmp_path):
    header = ["index", "genre", "filename", "year", "old_index", "source1",
              "source2", "sentence1", "sentence2", "score"]
    _write_tsv(tmp_path / "train.tsv", [
        header, ["0", "g", "f", "y", "0", "n", "n", "a", "b", "high"]])
    with pytest.raises(cp.ClassifierDataError,
                       match=r"train\.tsv, line 2: label 'high'"):
        cp.get_processor("sts-b").get_train_examples(tmp_path)


def test_mnli_label_column_needed(tmp_path):
    # A train row without its gold_label column.
    header = ["index"] + _MNLI_PREFIX + ["sentence1", "sentence2"]
    _write_tsv(tmp_path / "train.tsv", [header, _mnli_row(0, "a", "b", [])])
    with pytest.raises(cp.ClassifierDataError, match="at least 11"):
        cp.get_processor("mnli").get_train_examples(tmp_path)


def test_not_utf8(tmp_path):
    (tmp_path / "dev.tsv").write_bytes(b"sentence\tlabel\n\xff\xfe\t1\n")
    with pytest.raises(cp.ClassifierDataError, match="not UTF-8"):
        cp.get_processor("sst-2").get_dev_examples(tmp_path)


# ---------------------------------------------------------------- registry

def test_registry_and_unknown_task():
    assert set(cp.PROCESSORS) >= {"cola", "mnli", "mnli-mm", "mrpc", "xnli",
                                  "sst-2", "sts-b", "qqp", "qnli", "rte",
                                  "wnli"}
    assert isinstance(cp.get_processor("CoLA"), cp.ColaProcessor)
    assert isinstance(cp.get_processor("stsb"), cp.StsbProcessor)
    with pytest.raises(ValueError, match="Task not found: squad") as info:
        cp.get_processor("squad")
    assert "mrpc" in str(info.value) and "sts-b" in str(info.value)


def test_register_new_task(tmp_path):
    @cp.register_processor("Toy-Task")
    class ToyProcessor(cp.DataProcessor):
        def get_dev_examples(self, data_dir):
            return [cp.InputExample("dev-0", "x", label="yes")]

        def get_labels(self):
            return ["no", "yes"]

    try:
        processor = cp.get_processor("toy_task")
        assert isinstance(processor, ToyProcessor)
        assert processor.get_dev_examples(tmp_path)[0].label == "yes"
        with pytest.raises(NotImplementedError):
            processor.get_train_examples(tmp_path)
        with pytest.raises(ValueError, match="already registered"):
            cp.register_processor("toy-task", cp.MrpcProcessor)
        with pytest.raises(TypeError):
            cp.register_processor("other", object)
    finally:
        cp.PROCESSORS.pop("toy-task", None)


def test_read_tsv_keeps_original_api(glue_dir):
    rows = cp.DataProcessor._read_tsv(str(glue_dir / "WNLI" / "dev.tsv"))
    assert rows[0] == ["index", "sentence1", "sentence2", "label"]
    assert len(rows) == 72


@pytest.mark.parametrize("content", ["", "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"])
@pytest.mark.parametrize("set_name", ["train", "dev", "test"])
def test_empty_or_header_only_file_is_an_error_naming_it(tmp_path, content, set_name):
    (tmp_path / f"{set_name}.tsv").write_text(content, encoding="utf-8")
    processor = cp.get_processor("mrpc")
    with pytest.raises(cp.ClassifierDataError,
                       match=rf"{set_name}.tsv: no examples .*empty or holds only its header"):
        getattr(processor, f"get_{set_name}_examples")(str(tmp_path))


def test_xnli_dev_without_the_language_is_an_error(tmp_path):
    (tmp_path / "xnli.dev.tsv").write_text(
        "language\tgold_label\n" + "\t".join(["en", "neutral"] + ["x"] * 6) + "\n",
        encoding="utf-8")
    with pytest.raises(cp.ClassifierDataError, match="xnli.dev.tsv: no examples"):
        cp.get_processor("xnli").get_dev_examples(str(tmp_path))


def test_module_exports_its_names():
    from bert_tf1.data.glue import processors
    for name in processors.__all__:
        assert getattr(processors, name) is not None
    assert processors.PROCESSORS["mrpc"] is processors.MrpcProcessor
