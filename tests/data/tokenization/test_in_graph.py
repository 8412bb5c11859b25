"""Tests for bert_tf1/data/tokenization/in_graph.py: the in-graph tokenizer must give the
same ids as the pure-Python FullTokenizer (itself checked against the
original's outputs in tests/data/tokenization/test_full_tokenizer.py and the fixtures)."""
import csv
import json
import unicodedata
import zipfile

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.tokenization import in_graph as tf_tokenization
from bert_tf1.data.tokenization import full_tokenizer as tokenization
from bert_tf1.data.tokenization import unicode_tables as unicode_tables

UNCASED = ("uncased_L-12_H-768_A-12", True)
CASED = ("cased_L-12_H-768_A-12", False)
CHINESE = ("chinese_L-12_H-768_A-12", True)
FIXTURE_VOCABS = {"uncased_public": UNCASED, "cased_public": CASED,
                  "chinese_public": CHINESE}

# Texts that exercise each bridged difference between TF Text/ICU and the
# original's Python rules.
TRICKY_TEXTS = [
    "Stra\u00dfe STRASSE \u1e9e \ufb01nance \uff28\uff45\uff4c\uff4c\uff4f",
    # Final sigma: context within the word, ignorable chars, punctuation.
    "\u039f\u0394\u039f\u03a3 \u0391\u03a3.\u0392 \u0391\u03a3\u03a3 \u03a3",
    "a\u03a3 \u0391\u03a3'\u0392 \u0391\u03a3\u0301 \u0391\u03a3\u00ad\u0392",
    "\u0391\u03a3\u4e2d \u03a3\u03a3\u03a3 \u0391\u0301\u03a3 1\u03a3",
    "\u00aa\u03a3 \u02b0\u03a3 \u24b6\u03a3\u02b0 \u0345\u03a3 A\u0345\u03a3",
    "\u0130stanbul I\u0307 \u01c5 \u01c4 \u2126 \u212a \u212b",
    # Characters newer than ICU's lower-casing tables (Unicode 14).
    "\u2c2f\u2c5f \U00010570\U00010597 \ua7c0 \ua7d0x",
    # Characters whose NFD differs between TF Text's ICU and Python.
    "a\U000105c9b \U00011383 \U00016121\u0301",
    # Sk that decomposes to ASCII punctuation under NFD.
    "a\u1fefb a\u1fedb \u0385",
    "\u0e38 a\u0e38b \u0915\u0941\u091b \u30d1\u30f3\u30c0",
    "\ud55c\uad6d\uc5b4 \u1100\u1161 \u0627\u064e\u0644\u0652",
    "x\x00y\ufffdz\u200bw soft\u00adhyphen a\u00a0b c\u3000d e\u2028f\u2029g",
    "\x1c\x1d\x1e\x1f\x85\x0b\x0c tabs\there\nnew\rline",
    "\ufeffbom \u200e\u200f \U000e0041 \U000e0100x",
    "\uffff \U0010ffff \ue000 \U000f0000 \U00030000",
    "\u4e2d\u0301 \u4e2d\u6587 \uf900 \U0002f800 \u3400 \u2e80 \u3005",
    "[MASK] [CLS]x \U0001F600hi \U0001F468\u200d\U0001F469 \u2764\ufe0f",
    "\u00e9" * 200 + " " + "\u00e9" * 201 + " " + "x" * 201,
    "\U0001F600" * 30 + " " + "a" * 200,
    "e.g. 3.14 $5 ^_^ `x` ~+ \u00bf\u00a1 \u2014 \u2026 \u00b7",
    "",
    "   ",
]


def _vocab_path(data_dir, model):
    return data_dir / "bert_models" / model / "vocab.txt"


@pytest.fixture(scope="module")
def pair(data_dir):
    """(model, do_lower_case) -> (FullTokenizer, InGraphFullTokenizer)."""
    cache = {}

    def get(spec):
        if spec not in cache:
            path = _vocab_path(data_dir, spec[0])
            cache[spec] = (
                tokenization.FullTokenizer(path, do_lower_case=spec[1]),
                tf_tokenization.InGraphFullTokenizer(
                    path, do_lower_case=spec[1]))
        return cache[spec]
    return get


def _python_ids(tokenizer, texts):
    return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t))
            for t in texts]


def _graph_ids(tokenizer, texts, batch_size=1024):
    out = []
    for start in range(0, len(texts), batch_size):
        batch = [t if isinstance(t, bytes) else t.encode("utf-8")
                 for t in texts[start:start + batch_size]]
        out.extend(tokenizer(tf.constant(batch, tf.string)).to_list())
    return out


@pytest.mark.parametrize("stem", sorted(FIXTURE_VOCABS))
def test_fixture_ids_identical(stem, fixtures_dir, pair):
    _, graph = pair(FIXTURE_VOCABS[stem])
    rows = [json.loads(line) for line in
            (fixtures_dir / "tokenization" / (stem + ".jsonl")).open(
                encoding="utf-8")]
    assert _graph_ids(graph, [r["text"] for r in rows]) == [
        r["ids"] for r in rows]


@pytest.mark.parametrize("spec", [UNCASED, CASED, CHINESE])
def test_tricky_texts_identical(spec, pair):
    python, graph = pair(spec)
    assert _graph_ids(graph, TRICKY_TEXTS) == _python_ids(
        python, TRICKY_TEXTS)
    # One text per call too: row routing (ICU vs exact lower-casing) must
    # not depend on the other rows of the batch.
    for text in TRICKY_TEXTS:
        assert _graph_ids(graph, [text]) == _python_ids(python, [text])


def test_invalid_utf8_bytes_dropped_like_python(pair):
    python, graph = pair(UNCASED)
    texts = [b"a\xe2\x82b caf\xc3", b"\xed\xa0\x80x \xc0\xafy",
             b"\xf4\x90\x80\x80z \xff\xfe ok", b"\xe2\x28\xa1 \xc3\x28 \x80"]
    assert _graph_ids(graph, texts) == _python_ids(python, texts)


def test_word_length_limit_in_code_points(pair):
    python, graph = pair(UNCASED)
    # 200 four-byte characters (800 bytes) are still pieced; 201 are not.
    texts = ["\U0001d400" * 200, "\U0001d400" * 201, "ab" * 100,
             "ab" * 100 + "a"]
    expected = _python_ids(python, texts)
    assert _graph_ids(graph, texts) == expected
    assert expected[1] == [python.vocab["[UNK]"]]
    assert expected[3] == [python.vocab["[UNK]"]]
    assert len(expected[2]) > 1


def test_output_structure_and_single_trace(pair):
    _, graph = pair(CASED)
    empty = graph(tf.constant([], tf.string))
    assert isinstance(empty, tf.RaggedTensor)
    assert empty.dtype == tf.int32 and empty.shape.as_list() == [0, None]
    out = graph(tf.constant(["", "Hello world", "   "]))
    assert out.ragged_rank == 1
    assert out.to_list()[0] == [] and out.to_list()[2] == []
    graph(tf.constant(["a"] * 7))
    assert graph.__call__.experimental_get_tracing_count() == 1


def test_inside_tf_data(pair):
    python, graph = pair(UNCASED)
    texts = TRICKY_TEXTS[:8]
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(3).map(graph)
    got = [row for batch in dataset for row in batch.to_list()]
    assert got == _python_ids(python, texts)


def test_saved_model_round_trip(pair, tmp_path):
    python, graph = pair(UNCASED)
    tf.saved_model.save(graph, str(tmp_path / "tokenizer"))
    loaded = tf.saved_model.load(str(tmp_path / "tokenizer"))
    texts = TRICKY_TEXTS[:6]
    got = loaded(tf.constant([t.encode("utf-8") for t in texts])).to_list()
    assert got == _python_ids(python, texts)


def test_missing_vocab_and_missing_unk(tmp_path):
    with pytest.raises(FileNotFoundError, match="vocab"):
        tf_tokenization.InGraphFullTokenizer(tmp_path / "missing.txt")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\nhello\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[UNK\]"):
        tf_tokenization.InGraphFullTokenizer(vocab)


def test_duplicate_and_blank_vocab_lines_like_python(tmp_path):
    vocab = tmp_path / "vocab.txt"
    # Duplicate "a" (Python keeps its last line index), a blank line, a
    # bare "##", and a line that strip() empties.
    vocab.write_bytes("[UNK]\na\n##b\n\n##\na\n\u2028\nb\n".encode("utf-8"))
    python = tokenization.FullTokenizer(vocab)
    graph = tf_tokenization.InGraphFullTokenizer(vocab)
    texts = ["a ab ba b ## #", "aab x"]
    assert _graph_ids(graph, texts) == _python_ids(python, texts)


def test_pinned_nfd_substitution(pair, tmp_path):
    """Known limit: characters whose NFD differs between TF Text's ICU and
    Python come out of basic_tokenize replaced by a private-use character;
    the ids stay identical; a vocab that contains such a character is
    refused."""
    python, graph = pair(UNCASED)
    substituted = graph.nfd_substituted_code_points
    if not substituted:
        pytest.skip("this TF Text build's NFD agrees with Python's on every "
                    "code point, so nothing needs substituting")
    char = chr(min(substituted))
    text = "a" + char + "b " + char
    words = graph.basic_tokenize(tf.constant([text])).to_list()[0]
    assert len(words) == 2
    assert words[0].decode("utf-8") != "a" + char + "b"
    assert _graph_ids(graph, [text]) == _python_ids(python, [text])
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[UNK]\n" + char + "\n", encoding="utf-8")
    with pytest.raises(NotImplementedError, match="NFD"):
        tf_tokenization.InGraphFullTokenizer(vocab, do_lower_case=True)
    # Cased mode does no NFD, so nothing is substituted.
    assert not tf_tokenization.InGraphFullTokenizer(
        vocab, do_lower_case=False).nfd_substituted_code_points


# --- the character tables against a scan of every code point ---------------

def _all_code_points():
    return [cp for cp in range(unicode_tables.MAX_CODE_POINT + 1)
            if not 0xD800 <= cp <= 0xDFFF]


def test_tables_match_a_full_scan():
    cps = _all_code_points()
    chars = [chr(cp) for cp in cps]
    assert unicode_tables.punctuation_code_points() == frozenset(
        cp for cp, c in zip(cps, chars) if tokenization._is_punctuation(c))
    assert unicode_tables.deleted_code_points() == frozenset(
        cp for cp, c in zip(cps, chars)
        if cp in (0, 0xFFFD) or tokenization._is_control(c))
    deleted = unicode_tables.deleted_code_points()
    assert unicode_tables.space_code_points() == frozenset(
        cp for cp, c in zip(cps, chars)
        if tokenization._is_whitespace(c)
        or (c.isspace() and cp not in deleted))
    assert unicode_tables.nonspacing_mark_code_points() == frozenset(
        cp for cp, c in zip(cps, chars) if unicodedata.category(c) == "Mn")
    assert unicode_tables.cjk_code_points() == frozenset(
        cp for cp in cps if tokenization._is_chinese_codepoint(cp))


def test_lower_case_map_and_context_tables():
    lower = unicode_tables.lower_case_map()
    for cp in (0x41, 0xC5, 0x1E9E, 0x2C2F, 0x10570, 0x3A3):
        assert chr(lower[cp]) == chr(cp).lower()
    # The one multi-character lower-casing: its Mn part is dropped.
    assert lower[0x130] == ord("i")
    ignorable, cased = unicode_tables.case_context_code_points()
    assert {ord("."), ord("'"), 0x301, 0xAD, 0x2B0} <= ignorable
    assert {ord("A"), ord("a"), 0x3A3, 0xAA, 0x24B6} <= cased
    assert not ({ord(" "), 0x2028, 0x2029, ord("1")} & (ignorable | cased))
    # Separators never change under lower-casing or NFD, so whole-text
    # lower-casing sees the same word boundaries as the per-word original.
    for cp in unicode_tables.space_code_points():
        assert cp not in lower
    for cp, low in lower.items():
        assert not chr(low).isspace()


def test_re2_class():
    assert unicode_tables.re2_class([]) == "[^\\x{0}-\\x{10FFFF}]"
    assert unicode_tables.re2_class([0x41, 0x43, 0x42, 0x61]) == (
        "[\\x{41}-\\x{43}\\x{61}]")


@pytest.mark.slow
@pytest.mark.parametrize("spec", [UNCASED, CASED])
def test_every_code_point_basic_tokens(spec, pair):
    """BasicTokenizer words for every assigned code point (and a sample of
    unassigned ones) alone, inside a word, and around capital sigma."""
    python, graph = pair(spec)
    basic = python.basic_tokenizer
    cps = [cp for cp in _all_code_points()
           if unicodedata.category(chr(cp)) != "Cn" or cp % 97 == 0]
    cps += sorted(graph.nfd_substituted_code_points)
    substitute = {}
    if graph.nfd_substituted_code_points:
        # The pinned limit: these come out as one private-use character.
        probe = "".join(chr(cp) for cp in sorted(
            graph.nfd_substituted_code_points))
        out = graph.basic_tokenize(tf.constant([probe])).to_list()[0]
        assert len(out) == 1 and len(set(out[0].decode("utf-8"))) == 1
        substitute = {cp: out[0].decode("utf-8")[0]
                      for cp in graph.nfd_substituted_code_points}
    # Texts without capital sigma take the ICU lower-casing path (unless
    # they hold a character ICU maps differently); with it, the exact path.
    patterns = ["a{0}b {0}"]
    if spec[1]:
        patterns.append("\u0391{0}\u03a3 \u0391\u03a3{0} a{0}b")
    texts = []
    for pattern in patterns:
        for start in range(0, len(cps), 64):
            texts.append(" ".join(pattern.format(chr(cp))
                                  for cp in cps[start:start + 64]))
    got = []
    for start in range(0, len(texts), 512):
        batch = tf.constant([t.encode("utf-8")
                             for t in texts[start:start + 512]])
        got.extend(graph.basic_tokenize(batch).to_list())
    table = {cp: ch for cp, ch in substitute.items()}
    bad = 0
    for text, words in zip(texts, got):
        expected = [w.translate(table) for w in basic.tokenize(text)]
        if [w.decode("utf-8") for w in words] != expected:
            bad += 1
    assert bad == 0


# --- acceptance: GLUE and SQuAD texts ---------------------------------------

# task -> {split: text columns}, as the GLUE files are laid out.
_GLUE_COLUMNS = {
    "CoLA": {"train": [3], "dev": [3], "test": [1]},
    "MRPC": {"train": [3, 4], "dev": [3, 4], "test": [3, 4]},
    "SST-2": {"train": [0], "dev": [0], "test": [1]},
    "STS-B": {"train": [7, 8], "dev": [7, 8], "test": [7, 8]},
    "RTE": {"train": [1, 2], "dev": [1, 2], "test": [1, 2]},
    "WNLI": {"dev": [1, 2], "test": [1, 2]},
    "QNLI": {"dev": [1, 2], "test": [1, 2]},
}


def _acceptance_texts(data_dir):
    texts = set()
    for task, splits in _GLUE_COLUMNS.items():
        for split, columns in splits.items():
            path = data_dir / "glue" / task / (split + ".tsv")
            with path.open(encoding="utf-8", newline="") as f:
                rows = list(csv.reader(f, delimiter="\t", quotechar=None))
            has_header = not (task == "CoLA" and split != "test")
            for row in rows[1 if has_header else 0:]:
                texts.update(row[i] for i in columns)
    squad_texts = set()
    for name in ("dev-v1.1.json", "dev-v2.0.json"):
        with zipfile.ZipFile(data_dir / "squad" / (name + ".zip")) as z:
            data = json.loads(z.read(name))["data"]
        for article in data:
            for paragraph in article["paragraphs"]:
                squad_texts.add(paragraph["context"])
                squad_texts.update(q["question"] for q in paragraph["qas"])
    return sorted(texts | squad_texts), len(texts), len(squad_texts)


@pytest.mark.slow
def test_acceptance_glue_and_squad_identical(data_dir, pair):
    texts, n_glue, n_squad = _acceptance_texts(data_dir)
    assert n_glue > 100000 and n_squad > 15000
    # The pure-Python side in this process: since FullTokenizer's speed-up
    # it takes ~4 CPU seconds per vocabulary here, less than spawning two
    # worker processes and pickling 139k texts and their ids both ways.
    for spec in (UNCASED, CASED):
        vocab_file = str(_vocab_path(data_dir, spec[0]))
        tokenizer = tokenization.FullTokenizer(vocab_file, spec[1])
        expected = [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
                    for text in texts]
        _, graph = pair(spec)
        got = _graph_ids(graph, texts)
        mismatched = [t for t, a, b in zip(texts, expected, got) if a != b]
        print("%s: %d unique texts (GLUE %d, SQuAD %d), %d mismatches"
              % (spec[0], len(texts), n_glue, n_squad, len(mismatched)))
        assert not mismatched, mismatched[:3]
        assert sum(map(len, expected)) > 1000000


def test_graph_ids_are_numpy_comparable(pair):
    # Sanity: ids are plain ints in range of the vocab.
    python, graph = pair(CHINESE)
    ids = graph(tf.constant(["\u4eca\u5929 ok"])).flat_values.numpy()
    assert ids.dtype == np.int32
    assert (ids >= 0).all() and (ids < len(python.vocab)).all()
