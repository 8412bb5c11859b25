"""Reading conll / uner / chinese_bio files, their bad lines, and the real
shared NER files against the counts their README states."""
import collections
import pathlib
import zipfile

import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.tagging import schemes
from bert_tf1.data.tagging.documents import convert_documents
from bert_tf1.data.tagging.readers import TaggingFileError, read_tagged_file


def corpus_statistics(documents):
    """dict of int counts: "documents", "sentences", "tokens", "entities",
    "entities/<TYPE>" (as the data READMEs state them)."""
    per_type = collections.Counter()
    sentences = tokens = 0
    for document in documents:
        for sentence in document.sentences:
            sentences += 1
            tokens += len(sentence)
            if None not in sentence.tags:
                per_type.update(span.type for span in
                                schemes.entity_spans(sentence.tags))
    stats = {"documents": len(documents), "sentences": sentences,
             "tokens": tokens, "entities": sum(per_type.values())}
    stats.update(("entities/" + name, count)
                 for name, count in sorted(per_type.items()))
    return stats


FIXTURES = pathlib.Path(__file__).parent / "fixtures"

# CoNLL-2003 layout (IOB1, 4 space-separated columns, -DOCSTART-), with
# two adjacent ORG entities ("Yankees" / "Red Sox") marked by B-ORG.
CONLL2003_IOB1 = """-DOCSTART- -X- -X- O

EU NNP B-NP I-ORG
rejects VBZ B-VP O
German JJ B-NP I-MISC
call NN I-NP O
. . O O

Peter NNP B-NP I-PER
Blackburn NNP I-NP I-PER

-DOCSTART- -X- -X- O

the DT B-NP O
Yankees NNPS I-NP I-ORG
Red NNP B-NP B-ORG
Sox NNP I-NP I-ORG
"""


def _write(tmp_path, text, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return str(path)


def test_conll_iob1_documents_and_adjacent_entities(tmp_path):
    path = _write(tmp_path, CONLL2003_IOB1)
    documents = read_tagged_file(path, "conll", scheme="iob1")
    assert len(documents) == 2
    assert [len(d.sentences) for d in documents] == [2, 1]
    first = documents[0].sentences[0]
    assert first.tokens == ["EU", "rejects", "German", "call", "."]
    assert first.tags == ["I-ORG", "O", "I-MISC", "O", "O"]
    assert [w.line for w in first.words] == [3, 4, 5, 6, 7]
    assert documents[1].sentences[0].line == 14
    assert documents[0].path == path
    iob2 = convert_documents(documents, "iob1", "iob2")
    assert iob2[0].sentences[1].tags == ["B-PER", "I-PER"]
    assert iob2[1].sentences[0].tags == ["O", "B-ORG", "B-ORG", "I-ORG"]
    assert corpus_statistics(documents) == {
        "documents": 2, "sentences": 3, "tokens": 11, "entities": 5,
        "entities/MISC": 1, "entities/ORG": 3, "entities/PER": 1}
    # Back to IOB1 gives the file's tags again.
    back = convert_documents(iob2, "iob2", "iob1")
    assert [s.tags for d in back for s in d.sentences] == [
        s.tags for d in documents for s in d.sentences]


def test_iob1_file_declared_iob2_fails_naming_line(tmp_path):
    path = _write(tmp_path, CONLL2003_IOB1)
    with pytest.raises(TaggingFileError) as error:
        read_tagged_file(path, "conll", scheme="iob2")
    message = str(error.value)
    assert message.startswith("%s, line 3: I-ORG opens an entity (at the "
                              "start of the sentence)" % path)
    assert "declare the scheme iob1" in message
    assert isinstance(error.value, UserError)
    # Read leniently, the tags are kept as they are.
    documents = read_tagged_file(path, "conll", "iob2",
                                 check_sequences=False)
    assert documents[0].sentences[0].tags[0] == "I-ORG"


def test_bioes_file(tmp_path):
    path = _write(tmp_path, "John\tS-PER\nlives\tO\nin\tO\nNew\tB-LOC\n"
                            "York\tI-LOC\nCity\tE-LOC\n")
    documents = read_tagged_file(path, "conll", scheme="bioes")
    assert convert_documents(documents, "bioes", "iob2")[0].sentences[
        0].tags == ["B-PER", "O", "O", "B-LOC", "I-LOC", "I-LOC"]
    bad = _write(tmp_path, "New\tB-LOC\nYork\tO\n", "bad.txt")
    with pytest.raises(TaggingFileError, match=r"bad.txt, line 1: B-LOC is "
                       r"followed by O; in BIOES"):
        read_tagged_file(bad, "conll", scheme="bioes")


def test_wnut_tab_separator_lines(tmp_path):
    # A line holding a single TAB separates sentences (WNUT-17 train).
    path = _write(tmp_path, "@paul\tO\nIt\tO\n\t\nthe\tO\nview\tB-location"
                            "\n\n\nok\tO\n\n")
    documents = read_tagged_file(path, "conll")
    assert [d.sentences[0].tokens for d in documents] == [
        ["@paul", "It"], ["the", "view"], ["ok"]]
    assert [d.sentences[0].line for d in documents] == [1, 4, 8]
    assert all(d.doc_id is None and len(d.sentences) == 1 for d in documents)


def test_tokens_kept_verbatim(tmp_path):
    # Zero-width characters stay in the token (the tokenizer deals with
    # them); CRLF line ends and a leading BOM are dropped; U+2028 inside a
    # token does not split the line.
    path = _write(tmp_path, "\ufeffDubbz\ufeff\tB-person\r\nwatched\u200bwas"
                            "\tO\r\na\u2028b\tO\r\n\ufe0f\tO\r\n")
    sentence = read_tagged_file(path, "conll")[0].sentences[0]
    assert sentence.tokens == ["Dubbz\ufeff", "watched\u200bwas", "a\u2028b",
                               "\ufe0f"]
    assert sentence.tags == ["B-person", "O", "O", "O"]


def test_chinese_bio_fixture():
    documents = read_tagged_file(FIXTURES / "chinese_bio.txt", "chinese_bio")
    assert len(documents) == 3
    assert documents[0].sentences[0].tokens == list("我爱北京。")
    assert documents[1].sentences[0].tags == [
        "B-PER", "I-PER", "O", "B-LOC", "I-LOC"]
    assert documents[2].sentences[0].line == 14
    assert [(e.type, e.start, e.end) for e in schemes.entity_spans(
        documents[2].sentences[0].tags)] == [("PER", 0, 2), ("PER", 2, 4)]


UNER = """# newdoc id = doc-a
# sent_id = doc-a-1
# text = 北京很大
1\t北京\tB-LOC\t-\tlinpq
2\t很\tO\t-\t-
3-4\t大了\t_\t_\t_
3\t大\tO\t-\t-

# sent_id = doc-a-2
1\t张三\tB-PER\t-\tlinpq

# newdoc id = doc-b
1\t好\tO\t-\t-
"""


def test_uner_documents_comments_and_ranges(tmp_path):
    documents = read_tagged_file(_write(tmp_path, UNER), "uner")
    assert [d.doc_id for d in documents] == ["doc-a", "doc-b"]
    assert [s.tokens for s in documents[0].sentences] == [
        ["北京", "很", "大"], ["张三"]]
    assert [w.line for w in documents[0].sentences[0].words] == [4, 5, 7]
    untagged = read_tagged_file(_write(tmp_path, UNER), "uner",
                                has_tags=False)
    assert untagged[0].sentences[0].tags == [None, None, None]


def test_reading_without_tags(tmp_path):
    path = _write(tmp_path, "Hello\nworld\n\nagain\n")
    documents = read_tagged_file(path, "conll", has_tags=False)
    assert [s.tokens for d in documents for s in d.sentences] == [
        ["Hello", "world"], ["again"]]
    assert documents[0].sentences[0].tags == [None, None]
    # A tagged file read without tags: the tag column is ignored.
    tagged = _write(tmp_path, "a\tB-X\nb\tZZZ\n", "tagged.txt")
    assert read_tagged_file(tagged, "conll", has_tags=False)[0].sentences[
        0].tokens == ["a", "b"]
    # But a file without tags cannot be read as tagged.
    with pytest.raises(TaggingFileError, match=r"line 1: 1 column \('Hello'"
                       r"\); expected 2 or more columns"):
        read_tagged_file(path, "conll")


@pytest.mark.parametrize("text, data_format, pattern", [
    ("a\tO\nb\tO\tO\n", "conll", r"line 2: 3 columns, but line 1 has 2"),
    ("a\tO\nb\n", "conll", r"line 2: 1 column \('b'\); expected 2 or more"),
    ("a\tO\nb\tE-PER\n", "conll", r"line 2: tag 'E-PER' is not an IOB2 tag"),
    ("a\tO\nb\tB-\n", "conll", r"line 2: tag 'B-' is not an IOB2 tag"),
    ("a\tO\nb\tPER\n", "conll", r"line 2: tag 'PER' is not an IOB2 tag"),
    ("a\tO\n\tO\n", "conll", r"line 2: empty token"),
    ("a\tO\nb\tO\n\nc\tI-PER\n", "conll",
     r"line 4: I-PER opens an entity \(at the start of the sentence\)"),
    ("a\tB-LOC\nb\tI-PER\n", "conll", r"line 2: I-PER opens an entity "
     r"\(after B-LOC\)"),
    ("中 O\n国 B-LOC I-LOC\n", "chinese_bio",
     r"line 2: 3 columns .*expected 2 columns \(chinese_bio format"),
    ("1\t中\tO\t-\t-\nx\t国\tO\t-\t-\n", "uner",
     r"line 2: column 1 is 'x', expected the word index"),
    ("1\t中\n", "uner", r"line 1: 2 columns .*expected 3 or more columns"),
    ("-DOCSTART- -X- -X- O\n\n", "conll", r"no token lines"),
    ("# newdoc id = x\n# text = y\n", "uner", r"no token lines"),
    ("\n \n\t\n", "conll", r"the file is empty"),
    ("", "conll", r"the file is empty"),
])
def test_bad_files_name_file_and_line(tmp_path, text, data_format, pattern):
    path = _write(tmp_path, text)
    with pytest.raises(TaggingFileError, match=pattern) as error:
        read_tagged_file(path, data_format)
    assert str(error.value).startswith(path)


def test_non_utf8_archive_and_missing_files(tmp_path):
    latin1 = _write(tmp_path, "caf\xe9\tO\n".encode("latin-1"))
    with pytest.raises(TaggingFileError, match=r"line 1 \(byte 3\): not "
                       r"UTF-8 text"):
        read_tagged_file(latin1)
    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("train.txt", "a\tO\n")
    with pytest.raises(TaggingFileError, match="is a zip archive"):
        read_tagged_file(archive)
    with pytest.raises(TaggingFileError, match="no such file"):
        read_tagged_file(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="unknown data_format 'json'"):
        read_tagged_file(latin1, "json")


# Counts stated by shared/data/ner/README.md.
WNUT_TRAIN = {"documents": 3394, "sentences": 3394, "tokens": 62730,
              "entities": 1975, "entities/person": 660,
              "entities/location": 548, "entities/group": 264,
              "entities/corporation": 221, "entities/creative-work": 140,
              "entities/product": 142}
WNUT_DEV = {"documents": 1009, "sentences": 1009, "tokens": 15733,
            "entities": 836, "entities/person": 470, "entities/location": 74,
            "entities/group": 39, "entities/corporation": 34,
            "entities/creative-work": 105, "entities/product": 114}
UNER_DEV = {"documents": 17, "sentences": 500, "tokens": 12663,
            "entities": 753, "entities/PER": 245, "entities/LOC": 375,
            "entities/ORG": 133}


@pytest.mark.parametrize("name, data_format, expected", [
    ("wnut17/wnut17train.conll", "conll", WNUT_TRAIN),
    ("wnut17/emerging.dev.conll", "conll", WNUT_DEV),
    ("uner_zh_gsdsimp/zh_gsdsimp-ud-dev.iob2", "uner", UNER_DEV),
])
def test_shared_files_match_readme_counts(data_dir, name, data_format,
                                          expected):
    # Strict IOB2 reading: the README says no I- starts an entity.
    documents = read_tagged_file(data_dir / "ner" / name, data_format, "iob2")
    assert corpus_statistics(documents) == expected


def test_wnut_train_separators_and_dev_oddities(data_dir):
    train = read_tagged_file(data_dir / "ner/wnut17/wnut17train.conll")
    # The first 2,394 sentences end at TAB lines; none has swallowed one.
    assert max(len(d.sentences[0]) for d in train) == 41
    assert train[0].sentences[0].tokens[:3] == ["@paulwalk", "It", "'s"]
    # README: TAB separators on lines 28..48863, empty ones from 48881.
    assert train[0].sentences[0].words[-1].line == 27
    assert train[1].sentences[0].line == 29
    assert train[2393].sentences[0].words[-1].line == 48862
    assert train[2394].sentences[0].line == 48864
    assert train[2394].sentences[0].words[-1].line == 48880
    dev = read_tagged_file(data_dir / "ner/wnut17/emerging.dev.conll")
    words = {w.line: w for d in dev for w in d.words}
    assert words[16730].text == "Dubbz\ufeff"
    assert words[16730].tag == "B-person"
    assert words[15556].text == "watched\u200bwas"
    for line in (6573, 6590, 14837, 16373):
        assert words[line].text == "\ufe0f" and words[line].tag == "O"
