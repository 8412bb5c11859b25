"""What the source of the text answers alone on the next-sentence task
(demos/next_sentence/next_sentence_analysis.py), on hand-made rows."""
import numpy as np
import pytest

from demos.next_sentence.corpus_documents import Document
from bert_tf1.data.multiple_choice.examples import MultipleChoiceExample
from demos.next_sentence import next_sentence_analysis as analysis

DOCUMENTS = [
    Document("wiki/0", "", ["W zero.", "W one.", "W two."]),
    Document("wiki/1", "", ["W three.", "W four."]),
    Document("novel/0", "", ["N zero.", "N one.", "N two."]),
    Document("novel/1", "", ["N three.", "Shared line."]),
    Document("wiki/2", "", ["Shared line."]),
]
ROWS = [
    # A wiki context: gold W one., distractors 2 wiki + 1 novel -> s = 2.
    MultipleChoiceExample("wiki/0/0", "W zero.",
                          ["W three.", "W one.", "N zero.", "W four."], 1),
    # A novel context: all distractors wiki -> s = 0.
    MultipleChoiceExample("novel/0/0", "N zero.",
                          ["N one.", "W zero.", "W one.", "W two."], 0),
    # A novel context; "Shared line." is in both sources: counts -> s = 3.
    MultipleChoiceExample("novel/0/1", "N one.",
                          ["N three.", "Shared line.", "N two.", "N zero."], 2),
]


def test_sources_and_same_source_counts():
    sources = analysis.sentence_sources(DOCUMENTS)
    assert sources["Shared line."] == {"novel", "wiki"}
    assert sources["W one."] == {"wiki"}
    assert analysis.source_of_id("novel/0/1") == "novel"
    counts = analysis.same_source_distractors(ROWS, sources)
    np.testing.assert_array_equal(counts, [2, 0, 3])
    # 1/3, 1/1, 1/4 averaged.
    assert analysis.source_shortcut_accuracy(counts) == pytest.approx(
        (1 / 3 + 1 + 1 / 4) / 3)
    with pytest.raises(KeyError):
        analysis.same_source_distractors(
            [MultipleChoiceExample("wiki/0/0", "W zero.", ["new", "W one."],
                                   1)], sources)


def test_accuracy_by_same_source():
    probabilities = [[0.1, 0.6, 0.2, 0.1],   # right (label 1)
                     [0.2, 0.5, 0.2, 0.1],   # wrong (label 0)
                     [0.1, 0.1, 0.7, 0.1]]   # right (label 2)
    table = analysis.accuracy_by_same_source(probabilities, ROWS, [2, 0, 2])
    assert table == {"all": (3, pytest.approx(2 / 3)), 0: (1, 0.0),
                     2: (2, 1.0)}
    with pytest.raises(ValueError, match="2 probability rows for 3 examples"):
        analysis.accuracy_by_same_source(probabilities[:2], ROWS, [2, 0, 2])


@pytest.mark.slow  # builds the whole shared task: ~10 s, more under load
def test_report_command_on_the_shared_task(tmp_path, data_dir, capsys):
    import importlib.util

    from demos.next_sentence import next_sentence_task as nst
    from bert_tf1.data.io.results import (format_test_results,
                                          write_text_atomically)
    from tests.conftest import REPO_ROOT

    documents = nst.read_shared_documents(data_dir / "pretraining")
    task = nst.build_next_sentence_task(documents, seed=12345)
    paths = nst.write_next_sentence_task(task, tmp_path)
    # A "model" right on the even rows only.
    dev = task.dev
    probabilities = np.full((len(dev), 4), 0.1)
    for i, row in enumerate(dev):
        probabilities[i, row.label if i % 2 == 0 else (row.label + 1) % 4] = 0.7
    write_text_atomically(str(tmp_path / "test_results.tsv"),
                          format_test_results(probabilities))

    # The shortcut recomputed by scanning each document for each distractor.
    by_source = {}
    for document in documents:
        by_source.setdefault(document.doc_id.split("/")[0], set()).update(
            document.sentences)
    expected = np.mean([
        1 / (1 + sum(row.endings[k] in by_source[row.example_id.split("/")[0]]
                     for k in range(4) if k != row.label)) for row in dev])

    script = REPO_ROOT / "demos" / "next_sentence_report.py"
    spec = importlib.util.spec_from_file_location("report_demo", script)
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    assert report.main(["--data_dir", str(data_dir / "pretraining"),
                        "--dev_file", str(paths["dev.tsv"]),
                        "--test_results",
                        str(tmp_path / "test_results.tsv")]) == 0
    printed = capsys.readouterr().out
    assert "chance 25.0%" in printed
    assert "source): %.1f%%" % (100 * expected) in printed
    assert "model: %.1f%% of %d rows" % (
        100 * np.mean(np.arange(len(dev)) % 2 == 0), len(dev)) in printed
    # A results file of another length is one error line.
    write_text_atomically(str(tmp_path / "short.tsv"),
                          format_test_results(probabilities[:5]))
    assert report.main(["--data_dir", str(data_dir / "pretraining"),
                        "--dev_file", str(paths["dev.tsv"]),
                        "--test_results", str(tmp_path / "short.tsv")]) == 1
    assert "5 probability rows for %d examples" % len(dev) in (
        capsys.readouterr().err)
