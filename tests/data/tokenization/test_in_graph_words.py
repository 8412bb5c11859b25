"""The in-graph word splitter (bert_tf1/data/tokenization/in_graph_words.py): BERT's
BasicTokenizer words with their offsets in the input.

What pins the words down, on every text of the shared data and on edge
cases, checked against the original's Python BasicTokenizer:
  * each word is the input's substring at its offsets;
  * words are in order and do not overlap;
  * each word, tokenized alone, is ONE basic token, and the text between two
    words (spaces, deleted characters, stray accents) gives none;
  * all words' tokens, in order, are the whole text's tokens (and their
    word pieces are the original tokenizer's, on its own fixture outputs).
"""
import csv
import functools
import json
import zipfile

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.tokenization import full_tokenizer
from bert_tf1.data.tokenization.in_graph_words import (MARK, OTHER, OWN, SPACE,
                                                       TRANSPARENT,
                                                       InGraphWordSplitter,
                                                       word_classes)

EDGE_CASES = [
    "", " ", "\t\n", "Hello, World!", "don't stop", "U.S.A. $5.00 (approx.)",
    "e-mail: a@b.com", "北京是中国的首都。", "日本語とEnglish混ざり",
    "José Jose\u0301 naïve CAFÉ", "\u0301leading mark", "a \u0301 b",
    "a\u200bb", "Dubbz\ufeff", "\ufeffstart", "zero\u200d\u200dwidth",
    "emoji 👍🏽 and 👨\u200d👩\u200d👧 family", "tab\there\r\nnew line",
    "nbsp\u00a0sep\u2028line\u2029para", "\x00nul\x01ctl\x7fdel",
    "Ⅻ ﬁne ǅ İstanbul", "ΑΣ ΟΔΟΣ σοφός", "ΑΣ.Α", "\u1fef\u2260\u226e\u226f",
    "a" * 250 + " long", "...!!!???", "x\ufffdy", "\U0001d400\U0001d401 math",
    "Ελληνικά, Русский, العربية, हिन्दी, ไทย, 한국어",
]


def _glue_sentences(data_dir):
    texts = []
    for task, columns in (("MRPC/dev.tsv", (3, 4)), ("SST-2/dev.tsv", (0,)),
                          ("RTE/dev.tsv", (1, 2)), ("CoLA/dev.tsv", (3,))):
        with open(data_dir / "glue" / task, encoding="utf-8") as reader:
            for row in list(csv.reader(reader, delimiter="\t",
                                       quotechar=None))[1:]:
                texts.extend(row[c] for c in columns)
    return texts


def _squad_contexts(data_dir, count=150):
    with zipfile.ZipFile(data_dir / "squad" / "dev-v1.1.json.zip") as archive:
        data = json.loads(archive.read("dev-v1.1.json"))["data"]
    contexts = [p["context"] for article in data for p in article["paragraphs"]]
    return contexts[::max(1, len(contexts) // count)]


def _wnut_sentences(data_dir):
    """The WNUT-17 dev tokens joined by spaces (emoji, U+FEFF, U+200B...)."""
    sentences, words = [], []
    path = data_dir / "ner" / "wnut17" / "emerging.dev.conll"
    for line in path.read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            if words:
                sentences.append(" ".join(words))
            words = []
        else:
            words.append(line.split("\t")[0])
    return sentences


def _chinese(data_dir, count=400):
    lines = (data_dir / "chinese" / "LCQMC" / "dev.txt").read_text(
        encoding="utf-8").split("\n")[:count]
    return [part for line in lines for part in line.split("\t")[:2]]


@pytest.fixture(scope="module")
def corpus(data_dir):
    return (EDGE_CASES + _glue_sentences(data_dir) + _squad_contexts(data_dir)
            + _wnut_sentences(data_dir) + _chinese(data_dir))


@functools.lru_cache(maxsize=None)
def _splitter(do_lower_case):
    return InGraphWordSplitter(do_lower_case)


def _split(texts, do_lower_case):
    out = _splitter(do_lower_case)(tf.constant(texts))
    return {key: value.to_list() for key, value in out.items()}


def _check_words(texts, split, do_lower_case):
    basic = full_tokenizer.BasicTokenizer(do_lower_case)
    whole_text_differs = []
    for row, text in enumerate(texts):
        words = [w.decode("utf-8") for w in split["words"][row]]
        starts, ends = split["start"][row], split["end"][row]
        encoded = text.encode("utf-8")
        previous_end = 0
        tokens = []
        for word, start, end, byte_start, byte_end in zip(
                words, starts, ends, split["byte_start"][row],
                split["byte_end"][row]):
            assert text[start:end] == word, (text, word)
            assert encoded[byte_start:byte_end].decode("utf-8") == word
            assert start >= previous_end, text
            gap = text[previous_end:start]
            assert gap == " " or basic.tokenize(gap) == [], (text, gap)
            word_tokens = basic.tokenize(word)
            assert len(word_tokens) == 1, (text, word, word_tokens)
            tokens.extend(word_tokens)
            previous_end = end
        assert basic.tokenize(text[previous_end:]) == [], text
        if tokens != basic.tokenize(text):
            whole_text_differs.append(text)
    return whole_text_differs


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_edge_cases_are_basic_tokens_with_their_offsets(do_lower_case):
    split = _split(EDGE_CASES, do_lower_case)
    differs = _check_words(EDGE_CASES, split, do_lower_case)
    # The one known difference (module docstring): lower-cased alone, the
    # sigma of the word "ΑΣ" is final; inside "ΑΣ.Α" it is not.
    assert differs == (["ΑΣ.Α"] if do_lower_case else [])


@pytest.mark.slow
@pytest.mark.parametrize("do_lower_case", [True, False])
def test_words_are_basic_tokens_with_their_offsets(corpus, do_lower_case):
    split = _split(corpus, do_lower_case)
    differs = _check_words(corpus, split, do_lower_case)
    # Only Python's final-sigma rule, which looks across punctuation inside a
    # whitespace token, may lower-case a word alone differently.
    assert all("\u03a3" in text for text in differs), differs
    assert len(corpus) > 5000
    assert sum(len(words) for words in split["words"]) > 100000


@pytest.mark.parametrize("name, vocab, lower", [
    ("uncased_public.jsonl", "uncased_L-12_H-768_A-12", True),
    ("cased_public.jsonl", "cased_L-12_H-768_A-12", False),
    ("chinese_public.jsonl", "chinese_L-12_H-768_A-12", True)])
def test_pieces_of_the_words_are_the_original_tokenizers(
        fixtures_dir, data_dir, name, vocab, lower):
    """The original tokenizer's outputs (fixtures/tokenization): the pieces
    of our words, each tokenized alone, are its tokens."""
    rows = [json.loads(line) for line in (fixtures_dir / "tokenization" / name)
            .read_text(encoding="utf-8").split("\n") if line]
    tokenizer = full_tokenizer.FullTokenizer(
        str(data_dir / "bert_models" / vocab / "vocab.txt"), lower)
    split = _split([row["text"] for row in rows], lower)
    for row, words in zip(rows, split["words"]):
        assert row["do_lower_case"] == lower
        pieces = [piece for word in words
                  for piece in tokenizer.tokenize(word.decode("utf-8"))]
        assert pieces == row["tokens"], row["text"]


def test_offsets_by_hand():
    text = "Jose\u0301 met 北京's Dubbz\ufeff, a\u200bb!"
    split = _split([text], True)
    words = [w.decode() for w in split["words"][0]]
    assert words == ["Jose\u0301", "met", "北", "京", "'", "s", "Dubbz", ",",
                     "a\u200bb", "!"]
    assert list(zip(split["start"][0], split["end"][0])) == [
        (0, 5), (6, 9), (10, 11), (11, 12), (12, 13), (13, 14), (15, 20),
        (21, 22), (23, 26), (26, 27)]
    # Cased: the accent is a character of its own word class (OTHER) too.
    cased = _split(["\u0301alone x\u0301"], False)
    assert [w.decode() for w in cased["words"][0]] == ["\u0301alone",
                                                       "x\u0301"]
    uncased = _split(["\u0301alone x\u0301"], True)
    assert [w.decode() for w in uncased["words"][0]] == ["alone", "x\u0301"]
    assert uncased["start"][0] == [1, 7]


def test_invalid_utf8_bytes_are_skipped():
    raw = b"ab\xff cd"
    split = _splitter(True)(tf.constant([raw]))
    assert split["words"].to_list() == [[b"ab", b"cd"]]
    # Offsets count the characters of raw.decode("utf-8", "ignore").
    assert split["start"].to_list() == [[0, 3]]
    assert split["byte_start"].to_list() == [[0, 4]]


def test_character_classes():
    for lower in (True, False):
        classes = word_classes(lower)
        assert classes[ord("a")] == OTHER and classes[ord(" ")] == SPACE
        assert classes[ord(",")] == OWN and classes[0x4E2D] == OWN
        assert classes[0x200B] == TRANSPARENT and classes[0] == TRANSPARENT
        assert classes[0x00A0] == SPACE and classes[0x2028] == SPACE
    assert word_classes(True)[0x0301] == MARK
    assert word_classes(False)[0x0301] == OTHER
    # Lower-cased, NFD and stripped, these become ASCII punctuation.
    assert all(word_classes(True)[cp] == OWN
               for cp in (0x1FEF, 0x2260, 0x226E, 0x226F))
    assert all(word_classes(False)[cp] == OTHER
               for cp in (0x1FEF, 0x2260, 0x226E, 0x226F))
    assert np.count_nonzero(word_classes(True) == MARK) > 1900
