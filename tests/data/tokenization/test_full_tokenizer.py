"""Tests for bert_tf1/data/tokenization/full_tokenizer.py against the original's outputs and rules.

Expected values come from /work/shared/fixtures/tokenization/*.jsonl (written
by the original FullTokenizer), from the original tokenization_test.py cases
(original_bert.md section 11) and from pitfalls.md (Tokenizer section).
"""
import json
import unicodedata

import pytest

from bert_tf1.data.tokenization import full_tokenizer as tokenization

# fixture file stem -> (model folder, do_lower_case)
FIXTURE_VOCABS = {
    "uncased_public": ("uncased_L-12_H-768_A-12", True),
    "cased_public": ("cased_L-12_H-768_A-12", False),
    "chinese_public": ("chinese_L-12_H-768_A-12", True),
}

# The vocab of the original tokenization_test.py.
TEST_VOCAB = ["[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un",
              "runn", "##ing", ","]


def _vocab_path(data_dir, model):
    return data_dir / "bert_models" / model / "vocab.txt"


@pytest.fixture(scope="module")
def tokenizers(data_dir):
    cache = {}

    def get(model, do_lower_case):
        key = (model, do_lower_case)
        if key not in cache:
            cache[key] = tokenization.FullTokenizer(
                _vocab_path(data_dir, model), do_lower_case=do_lower_case)
        return cache[key]
    return get


@pytest.fixture
def test_vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("".join(t + "\n" for t in TEST_VOCAB), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def uncased(tokenizers):
    return tokenizers("uncased_L-12_H-768_A-12", True)


@pytest.fixture(scope="module")
def cased(tokenizers):
    return tokenizers("cased_L-12_H-768_A-12", False)


# --- fixtures written by the original FullTokenizer -------------------------

@pytest.mark.parametrize("stem", sorted(FIXTURE_VOCABS))
def test_fixture_tokens_and_ids_identical(stem, fixtures_dir, tokenizers):
    model, do_lower_case = FIXTURE_VOCABS[stem]
    tokenizer = tokenizers(model, do_lower_case)
    rows = [json.loads(line) for line in
            (fixtures_dir / "tokenization" / (stem + ".jsonl")).open(
                encoding="utf-8")]
    assert len(rows) == 60
    for row in rows:
        assert row["do_lower_case"] == do_lower_case
        tokens = tokenizer.tokenize(row["text"])
        assert tokens == row["tokens"], row["text"]
        ids = tokenizer.convert_tokens_to_ids(tokens)
        assert ids == row["ids"], row["text"]
        assert tokenizer.convert_ids_to_tokens(ids) == row["tokens"]


def test_load_vocab_real_files(data_dir):
    vocab = tokenization.load_vocab(
        _vocab_path(data_dir, "uncased_L-12_H-768_A-12"))
    assert len(vocab) == 30522
    assert [vocab[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
            ] == [0, 100, 101, 102, 103]
    assert list(vocab)[:2] == ["[PAD]", "[unused0]"]
    cased_vocab = tokenization.load_vocab(
        _vocab_path(data_dir, "cased_L-12_H-768_A-12"))
    assert len(cased_vocab) == 28996
    chinese = tokenization.load_vocab(
        _vocab_path(data_dir, "chinese_L-12_H-768_A-12"))
    assert len(chinese) == 21128 and chinese["<T>"] == 105


def test_load_vocab_strips_and_handles_duplicates(tmp_path):
    path = tmp_path / "v.txt"
    # CRLF, surrounding spaces, a duplicate, no final newline. (Bad UTF-8
    # bytes are an error: tests/data/tokenization/test_vocab_encoding.py.)
    path.write_bytes(b"[PAD]\r\n  a \nb\na\nc")
    vocab = tokenization.load_vocab(path)
    # Duplicate "a": first position kept, value is its last line index.
    assert list(vocab.items()) == [("[PAD]", 0), ("a", 3), ("b", 2), ("c", 4)]



def test_a_vocab_file_is_parsed_once_per_content(tmp_path):
    # Parsed once per content in a process (vocab._read_vocab_file), parsed
    # again once its bytes change: rewritten in place, same size too.
    from bert_tf1.data.tokenization import vocab as vocab_module

    path = tmp_path / "v.txt"
    path.write_bytes(b"[PAD]\na\nb\na\n")
    first = tokenization.load_vocab(path)
    hits = vocab_module._parse_vocab.cache_info().hits
    assert tokenization.load_vocab(path) == first
    assert tokenization.vocab_file_warnings(path) == [
        "%s: token 'a' is on lines 2, 4; it maps to id 3 (its last line, as "
        "in the original) and id(s) 1 are never produced." % path]
    assert vocab_module._parse_vocab.cache_info().hits == hits + 2
    first["x"] = 9  # the caller's own dict
    assert "x" not in tokenization.load_vocab(path)
    with open(path, "r+b") as writer:  # same inode, same size
        writer.write(b"[PAD]\na\nb\nc\n")
    assert list(tokenization.load_vocab(path).items()) == [
        ("[PAD]", 0), ("a", 1), ("b", 2), ("c", 3)]
    assert tokenization.vocab_file_warnings(path) == []

def test_missing_vocab_file_is_clear(tmp_path):
    missing = tmp_path / "nope" / "vocab.txt"
    with pytest.raises(FileNotFoundError, match="vocab.txt"):
        tokenization.FullTokenizer(missing)


def test_unknown_token_and_id_raise_keyerror_naming_them(test_vocab_file):
    tokenizer = tokenization.FullTokenizer(test_vocab_file)
    with pytest.raises(KeyError) as info:
        tokenizer.convert_tokens_to_ids(["un", "nonexistent"])
    assert isinstance(info.value, tokenization.VocabLookupError)
    assert "nonexistent" in str(info.value)
    assert str(test_vocab_file) in str(info.value)
    with pytest.raises(KeyError) as info:
        tokenizer.convert_ids_to_tokens([0, 99999])
    assert "99999" in str(info.value) and str(test_vocab_file) in str(
        info.value)


# --- the original tokenization_test.py --------------------------------------

def test_original_full_tokenizer(test_vocab_file):
    tokenizer = tokenization.FullTokenizer(test_vocab_file)
    tokens = tokenizer.tokenize("UNwant\u00E9d,running")
    assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing"]
    assert tokenizer.convert_tokens_to_ids(tokens) == [7, 4, 5, 10, 8, 9]


def test_original_chinese():
    tokenizer = tokenization.BasicTokenizer()
    assert tokenizer.tokenize("ah\u535A\u63A8zz") == [
        "ah", "\u535A", "\u63A8", "zz"]


def test_original_basic_lower():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=True)
    assert tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
        "hello", "!", "how", "are", "you", "?"]
    assert tokenizer.tokenize("H\u00E9llo") == ["hello"]


def test_original_basic_no_lower():
    tokenizer = tokenization.BasicTokenizer(do_lower_case=False)
    assert tokenizer.tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
        "HeLLo", "!", "how", "Are", "yoU", "?"]


def test_original_wordpiece():
    vocab = {token: i for i, token in enumerate(TEST_VOCAB) if token != ","}
    tokenizer = tokenization.WordpieceTokenizer(vocab=vocab)
    assert tokenizer.tokenize("") == []
    assert tokenizer.tokenize("unwanted running") == [
        "un", "##want", "##ed", "runn", "##ing"]
    assert tokenizer.tokenize("unwantedX running") == [
        "[UNK]", "runn", "##ing"]


def test_original_convert_tokens_to_ids():
    vocab = {token: i for i, token in enumerate(TEST_VOCAB)}
    assert tokenization.convert_tokens_to_ids(
        vocab, ["un", "##want", "##ed", "runn", "##ing"]) == [7, 4, 5, 8, 9]
    inv = {i: token for token, i in vocab.items()}
    assert tokenization.convert_ids_to_tokens(inv, [7, 4]) == ["un", "##want"]


def test_original_is_whitespace():
    for char in (" ", "\t", "\r", "\n", "\u00A0"):
        assert tokenization._is_whitespace(char)
    for char in ("A", "-"):
        assert not tokenization._is_whitespace(char)


def test_original_is_control():
    assert tokenization._is_control("\u0005")
    for char in ("A", " ", "\t", "\r", "\U0001F4A9"):
        assert not tokenization._is_control(char)


def test_original_is_punctuation():
    for char in ("-", "$", "`", "."):
        assert tokenization._is_punctuation(char)
    for char in ("A", " "):
        assert not tokenization._is_punctuation(char)


def test_reference_observed_behaviours():
    lower = tokenization.BasicTokenizer(do_lower_case=True)
    cased = tokenization.BasicTokenizer(do_lower_case=False)
    assert lower.tokenize("John Johanson's,") == [
        "john", "johanson", "'", "s", ","]
    assert lower.tokenize("caf\u00e9 \u00c5ngstr\u00f6m") == [
        "cafe", "angstrom"]
    assert cased.tokenize("caf\u00e9 \u00c5ngstr\u00f6m") == [
        "caf\u00e9", "\u00c5ngstr\u00f6m"]
    assert lower.tokenize("e.g. 3.14") == ["e", ".", "g", ".", "3", ".", "14"]
    assert lower.tokenize("x\0y\ufffdz\u200bw") == ["xyzw"]
    assert lower.tokenize("\U0001F600hi") == ["\U0001F600hi"]


def test_convert_to_unicode_and_printable_text():
    assert tokenization.convert_to_unicode(b"caf\xc3\xa9\xff") == "caf\u00e9"
    assert tokenization.convert_to_unicode("x") == "x"
    assert tokenization.printable_text(b"ab") == "ab"
    with pytest.raises(ValueError, match="Unsupported string type"):
        tokenization.convert_to_unicode(3)


def test_whitespace_tokenize():
    assert tokenization.whitespace_tokenize("  a \t b\u2028c ") == [
        "a", "b", "c"]
    assert tokenization.whitespace_tokenize(" \n ") == []


def test_bytes_input_is_decoded(uncased):
    assert uncased.tokenize("Hello world".encode("utf-8")) == [
        "hello", "world"]


# --- validate_case_matches_checkpoint ---------------------------------------

@pytest.mark.parametrize("path,do_lower_case,raises", [
    ("", True, False),
    (None, False, False),
    ("/m/uncased_L-12_H-768_A-12/bert_model.ckpt", True, False),
    ("/m/uncased_L-12_H-768_A-12/bert_model.ckpt", False, True),
    ("gs://b/chinese_L-12_H-768_A-12/bert_model.ckpt", False, True),
    ("/m/multilingual_L-12_H-768_A-12/bert_model.ckpt", False, True),
    ("/m/uncased_L-24_H-1024_A-16/bert_model.ckpt", False, True),
    ("/m/cased_L-12_H-768_A-12/bert_model.ckpt", True, True),
    ("/m/cased_L-24_H-1024_A-16/bert_model.ckpt", True, True),
    ("/m/multi_cased_L-12_H-768_A-12/bert_model.ckpt", True, True),
    ("/m/cased_L-12_H-768_A-12/bert_model.ckpt", False, False),
    # Not in the original's lists: never checked.
    ("/m/wwm_uncased_L-24_H-1024_A-16/bert_model.ckpt", False, False),
    ("/m/uncased_L-4_H-256_A-4/bert_model.ckpt", False, False),
    ("/m/my_model/model.ckpt-1000", True, False),
])
def test_validate_case_matches_checkpoint(path, do_lower_case, raises):
    if raises:
        with pytest.raises(ValueError, match="do_lower_case"):
            tokenization.validate_case_matches_checkpoint(do_lower_case, path)
    else:
        tokenization.validate_case_matches_checkpoint(do_lower_case, path)


# --- pitfalls.md, Tokenizer section (one test each) -------------------------

def test_pitfall_uncased_strips_mn_marks_of_kana_and_devanagari():
    lower = tokenization.BasicTokenizer(do_lower_case=True)
    cased = tokenization.BasicTokenizer(do_lower_case=False)
    assert lower.tokenize("\u30d1\u30f3\u30c0") == ["\u30cf\u30f3\u30bf"]
    assert lower.tokenize("\u0915\u0941\u091b") == ["\u0915\u091b"]
    assert cased.tokenize("\u30d1\u30f3\u30c0") == ["\u30d1\u30f3\u30c0"]
    assert cased.tokenize("\u0915\u0941\u091b") == ["\u0915\u0941\u091b"]


def test_pitfall_lone_combining_mark_gives_no_tokens(uncased):
    assert uncased.tokenize("\u0e38") == []
    assert uncased.tokenize("a \u0e38 b") == ["a", "b"]


def test_pitfall_accent_stripping_only_with_lower_casing():
    assert tokenization.BasicTokenizer(True).tokenize("na\u00efve") == [
        "naive"]
    assert tokenization.BasicTokenizer(False).tokenize("na\u00efve") == [
        "na\u00efve"]


def test_pitfall_mask_in_raw_text_is_split(uncased):
    assert uncased.tokenize("a [MASK] b") == ["a", "[", "mask", "]", "b"]
    assert 103 not in uncased.convert_tokens_to_ids(
        uncased.tokenize("[MASK] [CLS] [SEP]"))


def test_pitfall_word_length_limit_is_200_code_points():
    vocab = {"[UNK]": 0, "\u00e9": 1, "##\u00e9": 2}
    tokenizer = tokenization.WordpieceTokenizer(vocab)
    # 200 two-byte characters (400 UTF-8 bytes) are still pieced.
    assert tokenizer.tokenize("\u00e9" * 200) == (
        ["\u00e9"] + ["##\u00e9"] * 199)
    assert tokenizer.tokenize("\u00e9" * 201) == ["[UNK]"]


def test_pitfall_whitespace_and_format_characters(uncased):
    assert uncased.tokenize("foo\u200bbar") == uncased.tokenize("foobar")
    assert tokenization.BasicTokenizer().tokenize("foo\u200bbar") == [
        "foobar"]
    assert tokenization.BasicTokenizer().tokenize(
        "a\u00a0b\tc\nd\re") == ["a", "b", "c", "d", "e"]


def test_pitfall_emoji_inside_word_is_unk(uncased):
    assert uncased.tokenize("hello\U0001F600world") == ["[UNK]"]
    assert not tokenization._is_punctuation("\U0001F600")


def test_pitfall_only_cjk_ideographs_split():
    basic = tokenization.BasicTokenizer(do_lower_case=False)
    assert basic.tokenize("\u4e2d\u6587") == ["\u4e2d", "\u6587"]
    # Hiragana, Katakana and Hangul stay one word.
    assert basic.tokenize("\u3053\u3093\u30ab\ud55c\uad6d") == [
        "\u3053\u3093\u30ab\ud55c\uad6d"]


def test_validate_vocab_size_names_both_files():
    vocab = {"[PAD]": 0, "a": 1, "b": 2}
    tokenization.validate_vocab_size(vocab, 3)
    tokenization.validate_vocab_size(vocab, 10)  # a padded table is fine
    with pytest.raises(ValueError) as error:
        tokenization.validate_vocab_size(vocab, 2, "v.txt", "c.json")
    assert "v.txt has 3 tokens but the BERT config c.json has vocab_size 2" in str(error.value)


def _vocab_file(tmp_path, content):
    path = tmp_path / "vocab.txt"
    path.write_bytes(content)
    return str(path)


def _original_load_vocab(path):
    # The original's load_vocab, step for step (readline until "", strip).
    vocab, index = {}, 0
    with open(path, encoding="utf-8") as reader:
        while True:
            token = reader.readline()
            if not token:
                break
            vocab[token.strip()] = index
            index += 1
    return vocab


def test_duplicate_plus_extra_line_exceeds_vocab_size(tmp_path):
    # 4 distinct tokens on 5 lines: the old distinct-token count let this pass
    # with vocab_size 4, and "c" got id 4, past the embedding.
    path = _vocab_file(tmp_path, b"[PAD]\na\nb\na\nc\n")
    vocab = tokenization.load_vocab(path)
    assert vocab == _original_load_vocab(path)
    assert vocab["a"] == 3 and vocab["c"] == 4
    with pytest.raises(ValueError, match=r"has 5 tokens but the BERT config c.json has "
                       r"vocab_size 4: ids from 4 on have no embedding \(id 4 is 'c', line 5\)"):
        tokenization.validate_vocab_size(vocab, 4, path, "c.json")
    tokenization.validate_vocab_size(vocab, 5, path)
    warnings = tokenization.vocab_file_warnings(path)
    assert len(warnings) == 1
    assert "token 'a' is on lines 2, 4; it maps to id 3" in warnings[0]
    assert "id(s) 1 are never produced" in warnings[0]


def test_trailing_blank_line_is_read_as_the_original_and_accepted(tmp_path):
    path = _vocab_file(tmp_path, b"[PAD]\n[UNK]\nthe\n\n")
    vocab = tokenization.load_vocab(path)
    assert vocab == _original_load_vocab(path) == {"[PAD]": 0, "[UNK]": 1, "the": 2, "": 3}
    tokenization.validate_vocab_size(vocab, 3, path)  # id 3 ('') is never produced
    assert tokenization.vocab_file_warnings(path) == []


def test_blank_line_inside_vocab_takes_an_id_and_is_reported(tmp_path):
    path = _vocab_file(tmp_path, b"[PAD]\n\nthe\n")
    vocab = tokenization.load_vocab(path)
    assert vocab == _original_load_vocab(path) == {"[PAD]": 0, "": 1, "the": 2}
    with pytest.raises(ValueError, match="has 3 tokens"):
        tokenization.validate_vocab_size(vocab, 2, path)
    (warning,) = tokenization.vocab_file_warnings(path)
    assert "blank line(s) 2" in warning


def test_byte_order_mark_is_removed_ids_unchanged_and_reported(tmp_path):
    path = _vocab_file(tmp_path, "\ufeff[PAD]\n[UNK]\nthe\n".encode("utf-8"))
    vocab = tokenization.load_vocab(path)
    original = _original_load_vocab(path)
    assert original["\ufeff[PAD]"] == 0  # the original keeps the BOM in the token
    assert vocab == {"[PAD]": 0, "[UNK]": 1, "the": 2}
    (warning,) = tokenization.vocab_file_warnings(path)
    assert "byte order mark" in warning and "'[PAD]'" in warning


def test_tokenizer_for_model_logs_warnings_and_refuses_too_many_lines(tmp_path, caplog):
    path = _vocab_file(tmp_path, b"[PAD]\n[UNK]\na\na\n")
    with caplog.at_level("WARNING"):
        tokenization.tokenizer_for_model(path, True, 4)
    assert "token 'a' is on lines 3, 4" in caplog.text
    with pytest.raises(ValueError, match="has 4 tokens"):
        tokenization.tokenizer_for_model(path, True, 3)


def test_real_vocab_reads_as_the_original(data_dir):
    path = str(data_dir / "bert_models/uncased_L-12_H-768_A-12/vocab.txt")
    vocab = tokenization.load_vocab(path)
    assert vocab == _original_load_vocab(path)
    assert tokenization.highest_reachable_id(vocab) + 1 == 30522
    assert tokenization.vocab_file_warnings(path) == []


def _basic_tokens_step_by_step(text, do_lower_case):
    """The original BasicTokenizer.tokenize's order of steps, character by
    character and token by token (tokenization.py), over the module's own
    character classes: the oracle for the one-pass `BasicTokenizer`."""
    cleaned = []
    for char in text:
        if ord(char) in (0, 0xFFFD) or tokenization._is_control(char):
            continue
        cleaned.append(" " if tokenization._is_whitespace(char) else char)
    spaced = "".join(" %s " % c if tokenization._is_chinese_codepoint(ord(c))
                     else c for c in cleaned)
    split_tokens = []
    basic = tokenization.BasicTokenizer(do_lower_case)
    for token in spaced.split():
        if do_lower_case:
            token = "".join(c for c in unicodedata.normalize("NFD", token.lower())
                            if unicodedata.category(c) != "Mn")
        split_tokens.extend(basic._run_split_on_punc(token))
    return " ".join(split_tokens).split()


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_one_pass_basic_tokenizer_equals_the_original_steps(do_lower_case):
    """Every code point of planes 0-2 and 14 (every assigned one but
    plane 3's ideographs, which are CJK-free letters to these rules), in one
    text, and 2,000 random 40-character texts mixing them with ASCII, Greek
    capital sigmas and combining marks."""
    import random

    every = "".join(chr(cp) for cp in [*range(0x30000), *range(0xE0000, 0xE1000)]
                    if not 0xD800 <= cp <= 0xDFFF)
    rng = random.Random(0)
    alphabet = list(every[::97]) + list("aZ .,'\t\n\u03a3\u0301\u00a0\u3000") * 40
    texts = [every] + ["".join(rng.choice(alphabet) for _ in range(40))
                       for _ in range(2000)]
    basic = tokenization.BasicTokenizer(do_lower_case)
    for text in texts:
        assert basic.tokenize(text) == _basic_tokens_step_by_step(
            text, do_lower_case), repr(text)


def test_remembered_word_pieces_equal_fresh_ones(test_vocab_file):
    tokenizer = tokenization.FullTokenizer(test_vocab_file)
    first = tokenizer.tokenize("unwanted running, unwanted RUNNING")
    assert first == tokenizer.tokenize("unwanted running, unwanted RUNNING")
    fresh = tokenization.WordpieceTokenizer(tokenizer.vocab)
    assert first == [piece for word in "unwanted running , unwanted running".split()
                     for piece in fresh._pieces(word)]
