"""The next-sentence multiple-choice demo task: sentence splitting, corpus
layouts, the document-disjoint split and the demo command, on small
fixtures and on the shared text (checked against the raw files)."""
import collections
import re

import pytest

from bert_tf1.data.io.errors import UserError
from demos.next_sentence import corpus_documents as cd
from demos.next_sentence import next_sentence_task as nst
from bert_tf1.data.multiple_choice.readers import read_examples
from demos.next_sentence.sentence_split import count_words, split_sentences


def test_split_sentences_rules():
    text = ("“My dear Mr. Bennet,” said his lady. “Have you heard?” He\n"
            "said no! J. R. Smith came from the U.S. Army. It rained . "
            "Then it stopped. wait. Dr. Who? Yes")
    assert split_sentences(text) == [
        "“My dear Mr. Bennet,” said his lady.",
        "“Have you heard?”",
        "He said no!",
        "J. R. Smith came from the U.S. Army.",
        "It rained .",
        "Then it stopped. wait.",
        "Dr. Who?",
        "Yes"]
    assert split_sentences("  ") == []
    assert count_words("He was , in short , late .") == 5


GUTENBERG = (
    "The Project Gutenberg eBook of Test\r\n\r\n"
    "*** START OF THE PROJECT GUTENBERG EBOOK TEST ***\r\n\r\n"
    "                          A CENTRED TITLE PAGE LINE.\r\n\r\n"
    "PREFACE.\r\n\r\n"
    "_This preface_ is in italics.  It has two sentences.\r\n\r\n"
    "Frontispiece                iv\r\n\r\n"
    "[Illustration: ·TEST·\r\n\r\n\r\nChapter I.]\r\n\r\n"
    "It was a dark night and the wind\r\nblew hard. Mr. Holmes sat "
    "by the fire.\r\n\r\n"
    "[Illustration:\r\n\r\n“A caption” [_Copyright 1894._]]\r\n\r\n"
    "and then he spoke at last.\r\n\r\n"
    "     /* NIND “Dear Sir, */\r\n     “I write in haste.\r\n\r\n"
    "CHAPTER II.\r\n\r\n"
    "Caf\u00e9 society was dull that year.\r\n\r\n"
    "*** END OF THE PROJECT GUTENBERG EBOOK TEST ***\r\n"
    "Licence text that must not appear.\r\n")


def test_gutenberg_layout(tmp_path):
    path = tmp_path / "book.txt"
    path.write_bytes(GUTENBERG.encode("cp1252"))
    documents = cd.read_documents(path, "gutenberg", "book")
    assert [(d.doc_id, d.title) for d in documents] == [
        ("book/0", "PREFACE"), ("book/1", "Chapter I"),
        ("book/2", "CHAPTER II")]
    assert documents[0].sentences == ["This preface is in italics.",
                                      "It has two sentences."]
    assert documents[1].sentences == [
        "It was a dark night and the wind blew hard.",
        # Cut by an illustration, joined again.
        "Mr. Holmes sat by the fire. and then he spoke at last.",
        "“Dear Sir, “I write in haste."]
    assert documents[2].sentences == ["Café society was dull that year."]


def test_wikitext_and_sentence_lines_layouts():
    wiki = (" = First = \n Alpha is a 1 @,@ 000 @-@ year old thing . It is "
            "old .\n = = Section = = \n Beta came next .\n = Second = \n"
            " Gamma @.@ 5 ended it .\n")
    documents = cd.documents_from_text(wiki, "wikitext", "w")
    assert [(d.doc_id, d.title, d.sentences) for d in documents] == [
        ("w/0", "First", ["Alpha is a 1,000-year old thing .", "It is old .",
                          "Beta came next ."]),
        ("w/1", "Second", ["Gamma.5 ended it ."])]
    lines = "One a b c.\nTwo a b c.\n\n\nThree a b c.\n"
    documents = cd.documents_from_text(lines, "sentence_lines", "s")
    assert [d.sentences for d in documents] == [["One a b c.", "Two a b c."],
                                                ["Three a b c."]]
    with pytest.raises(ValueError, match="unknown corpus layout"):
        cd.documents_from_text(lines, "markdown", "s")


def _synthetic_documents(count=8, length=30):
    return [cd.Document("doc/%d" % d, "",
                        ["Document %d sentence number %d here." % (d, i)
                         for i in range(length)])
            for d in range(count)]


def _check_task(task, documents, min_dev_rows):
    by_id = {d.doc_id: d for d in documents}
    train, dev = set(task.train_documents), set(task.dev_documents)
    assert not train & dev
    assert len(task.dev) >= min_dev_rows
    # Which documents hold each sentence text.
    holders = collections.defaultdict(set)
    for document in documents:
        for sentence in document.sentences:
            holders[sentence].add(document.doc_id)
    for rows, split in ((task.train, train), (task.dev, dev)):
        for row in rows:
            doc_id, index = row.example_id.rsplit("/", 1)
            assert doc_id in split
            sentences = by_id[doc_id].sentences
            assert row.context == sentences[int(index)]
            assert row.endings[row.label] == sentences[int(index) + 1]
            distractors = [e for k, e in enumerate(row.endings)
                           if k != row.label]
            assert len(set(distractors) | {row.context,
                                           row.endings[row.label]}) == 5
            for text in distractors:
                assert (holders[text] & split) - {doc_id}


def test_builder_on_synthetic_documents():
    documents = _synthetic_documents()
    task = nst.build_next_sentence_task(documents, seed=3, min_dev_rows=50)
    _check_task(task, documents, 50)
    # 29 pairs per document: two documents reach 50 dev rows.
    assert task.stats["dev_rows"] == 58 and task.stats["train_rows"] == 174
    again = nst.build_next_sentence_task(documents, seed=3, min_dev_rows=50)
    assert again == task
    other = nst.build_next_sentence_task(documents, seed=4, min_dev_rows=50)
    assert other.dev != task.dev
    two = nst.build_next_sentence_task(documents, seed=3, num_choices=2,
                                       min_dev_rows=50)
    assert {len(row.endings) for row in two.train} == {2}


def test_training_text_holds_the_train_documents_only(tmp_path):
    documents = _synthetic_documents()
    documents[0].sentences[1] = "Short."  # kept: the text is the document's
    task = nst.build_next_sentence_task(documents, seed=3, min_dev_rows=50)
    path = tmp_path / "train_text.txt"
    assert nst.write_training_text(task, documents, path) == 6 * 30
    blocks = path.read_text(encoding="utf-8").split("\n\n")
    by_id = {d.doc_id: d for d in documents}
    # One sentence per line, a blank line between documents, train order.
    assert [block.splitlines() for block in blocks] == [
        by_id[doc_id].sentences for doc_id in task.train_documents]
    text = path.read_text(encoding="utf-8")
    for doc_id in task.dev_documents:
        assert all(sentence not in text
                   for sentence in by_id[doc_id].sentences)


def test_short_sentences_and_too_little_text():
    documents = _synthetic_documents(count=4, length=5)
    documents[0].sentences[2] = "Too short."
    task = nst.build_next_sentence_task(documents, seed=0, min_dev_rows=1)
    rows = {row.example_id for row in task.train + task.dev}
    # Pairs (1, 2) and (2, 3) of doc/0 use the short sentence: no rows.
    assert "doc/0/1" not in rows and "doc/0/2" not in rows
    assert {"doc/0/0", "doc/0/3"} <= rows
    assert all(count_words(e) >= 4 for row in task.train for e in row.endings)
    with pytest.raises(UserError, match="too few for 1000 dev rows"):
        nst.build_next_sentence_task(documents, seed=0)


@pytest.fixture(scope="module")
def shared_task(data_dir):
    documents = nst.read_shared_documents(data_dir / "pretraining")
    return documents, nst.build_next_sentence_task(documents, seed=12345)


def test_shared_text_task(shared_task):
    documents, task = shared_task
    _check_task(task, documents, 1000)
    stats = task.stats
    assert stats["train_rows"] + stats["dev_rows"] == stats["candidate_rows"]
    assert stats["train_rows"] > 10000
    assert len(task.train_documents) + len(task.dev_documents) + stats[
        "unused_documents"] == stats["documents"] == len(documents)
    sources = {d.doc_id.split("/")[0] for d in documents}
    assert sources == {"sample", "pg1342", "wikitext"}
    positions = collections.Counter(row.label for row in task.dev)
    assert all(0.2 < positions[k] / len(task.dev) < 0.3 for k in range(4))


def _normalized(text):
    return " ".join(text.split())


def test_shared_rows_follow_the_raw_text(shared_task, data_dir):
    """The gold ending follows the context in the raw files, cleaned here
    independently of the builder's code paths."""
    _, task = shared_task
    folder = data_dir / "pretraining"
    raw = (folder / "pg1342_pride_and_prejudice.txt").read_bytes().decode(
        "cp1252").replace("_", "")
    raw = re.sub(r"\[Illustration(?:[^\[\]]|\[[^\[\]]*\])*\]", " ", raw)
    book = _normalized(re.sub(r"/\* ?[A-Z]* ?| ?\*/", " ", raw))
    lines = (folder / "wikitext-2-raw_wiki.test.raw").read_text(
        encoding="utf-8").splitlines()
    wiki = _normalized(" ".join(
        line for line in lines if not re.match(r"^ =.*= $", line)).replace(
            " @-@ ", "-").replace(" @,@ ", ",").replace(" @.@ ", "."))
    # Documents are separated by blank lines: "\n\n" stays visible.
    sample = (folder / "sample_text.txt").read_text(encoding="utf-8").replace(
        "\n\n", "||").replace("\n", " ")
    texts = {"pg1342": book, "wikitext": wiki, "sample": sample}
    counts = collections.Counter()
    for row in task.train + task.dev:
        source = row.example_id.split("/")[0]
        counts[source] += 1
        assert row.context + " " + row.endings[row.label] in texts[source]
    assert min(counts.values()) > 0


def test_demo_command(tmp_path, data_dir, capsys):
    import importlib.util

    from tests.conftest import REPO_ROOT

    script = REPO_ROOT / "demos" / "build_next_sentence_choice.py"
    spec = importlib.util.spec_from_file_location("build_demo", script)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    out = tmp_path / "out"
    text_file = tmp_path / "train_text.txt"
    assert demo.main(["--data_dir", str(data_dir), "--output_dir", str(out),
                      "--seed", "12345", "--train_text_file",
                      str(text_file)]) == 0
    printed = capsys.readouterr().out
    dev = read_examples(out / "dev.tsv", "tsv", num_choices=4)
    train = read_examples(out / "train.tsv", "tsv", num_choices=4)
    assert "rows: train %d, dev %d" % (len(train), len(dev)) in printed
    assert len(dev) >= 1000
    train_docs = {row.example_id.rsplit("/", 1)[0] for row in train}
    dev_docs = {row.example_id.rsplit("/", 1)[0] for row in dev}
    assert not train_docs & dev_docs
    # The pretraining text: train contexts are in it, dev contexts are not.
    lines = set(text_file.read_text(encoding="utf-8").splitlines())
    assert "wrote %s" % text_file in printed
    assert all(row.context in lines for row in train[:200])
    assert not any(row.context in lines for row in dev)
    assert demo.main(["--data_dir", str(tmp_path), "--output_dir",
                      str(out)]) == 1
    assert "file not found" in capsys.readouterr().err
