"""bert_tf1/data/tokenization/tokenizer_json.py: a Hugging Face tokenizer.json read as
FullTokenizer's vocab and do_lower_case, or refused in one line.

The files are written here by hand in the `tokenizers` library's layout (the
sections a BERT tokenizer.json has); the rules are the module docstring's.
"""
import json

import pytest

from bert_tf1.data.tokenization import FullTokenizer
from bert_tf1.data.tokenization.tokenizer_json import read_tokenizer_json, vocab_text
from bert_tf1.tasks.errors import UserError, one_line

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cafe", "##s",
         "café", "un", "##aff", "##able", "!"]


def bert_tokenizer_json(lowercase=True, strip_accents=None, vocab=None,
                        **changes):
    """A BERT tokenizer.json dict (ids shuffled in the JSON object's order)."""
    vocab = VOCAB if vocab is None else vocab
    ids = {token: index for index, token in enumerate(vocab)}
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": ids[t], "content": t, "special": True,
                          "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False}
                         for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]",
                                   "[MASK]") if t in ids],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True,
                       "strip_accents": strip_accents,
                       "lowercase": lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3],
                           "cls": ["[CLS]", 2]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100,
                  "vocab": dict(reversed(list(ids.items())))},
    }
    tokenizer.update(changes)
    return tokenizer


def write(tmp_path, tokenizer):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(tokenizer), encoding="utf-8")
    return path


@pytest.mark.parametrize("lowercase,strip_accents,expected", [
    (True, None, True), (True, True, True), (False, None, False),
    (False, False, False)])
def test_vocab_in_id_order_and_lower_casing(tmp_path, lowercase,
                                            strip_accents, expected):
    path = write(tmp_path, bert_tokenizer_json(lowercase, strip_accents))
    tokens, do_lower_case = read_tokenizer_json(tmp_path)
    assert tokens == VOCAB
    assert do_lower_case is expected
    (tmp_path / "vocab.txt").write_text(vocab_text(tokens), encoding="utf-8")
    tokenizer = FullTokenizer(str(tmp_path / "vocab.txt"), do_lower_case)
    # Lower-casing strips the accent (cafe), keeping case keeps it (café).
    text = "The CAFÉS unaffable!" if expected else "the cafés unaffable!"
    assert tokenizer.tokenize(text) == (
        ["the", "cafe", "##s", "un", "##aff", "##able", "!"] if expected
        else ["the", "café", "##s", "un", "##aff", "##able", "!"])
    assert read_tokenizer_json(path) == (tokens, do_lower_case)


def _error(tmp_path, tokenizer):
    write(tmp_path, tokenizer)
    with pytest.raises(UserError) as raised:
        read_tokenizer_json(tmp_path)
    message = one_line(raised.value)
    assert "\n" not in message and str(tmp_path / "tokenizer.json") in message
    return message


def test_lowercase_without_accent_stripping_is_refused(tmp_path):
    message = _error(tmp_path, bert_tokenizer_json(True, False))
    assert "lowercase=true with strip_accents=false" in message
    message = _error(tmp_path, bert_tokenizer_json(False, True))
    assert "lowercase=false with strip_accents=true" in message


@pytest.mark.parametrize("changes,expected", [
    ({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}},
     "model 'BPE' is not WordPiece"),
    ({"model": {"type": "Unigram", "vocab": [["a", 0.0]]}},
     "model 'Unigram' is not WordPiece"),
    ({"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFD"}, {"type": "Lowercase"}]}},
     "normalizer 'Sequence' is not a BertNormalizer"),
    ({"normalizer": None}, "normalizer None is not a BertNormalizer"),
    ({"normalizer": {"type": "BertNormalizer", "clean_text": False,
                     "handle_chinese_chars": True, "strip_accents": None,
                     "lowercase": True}}, "clean_text is false"),
    ({"pre_tokenizer": {"type": "Whitespace"}},
     "pre_tokenizer 'Whitespace' is not a BertPreTokenizer"),
    ({"added_tokens": [{"id": 13, "content": "<new>", "special": False}]},
     "added token '<new>' (id 13)"),
])
def test_tokenizers_fulltokenizer_cannot_reproduce(tmp_path, changes,
                                                   expected):
    assert expected in _error(tmp_path, bert_tokenizer_json(**changes))


def test_bad_vocabs(tmp_path):
    tokenizer = bert_tokenizer_json()
    tokenizer["model"]["unk_token"] = "<unk>"
    assert "unk_token is '<unk>'" in _error(tmp_path, tokenizer)
    tokenizer = bert_tokenizer_json()
    tokenizer["model"]["vocab"]["the"] = 40  # a gap
    assert "once each; token 'the' has id 40" in _error(tmp_path, tokenizer)
    message = _error(tmp_path, bert_tokenizer_json(
        vocab=VOCAB + [" spaced"]))
    assert "' spaced' (id 13) cannot be one line of vocab.txt" in message
    (tmp_path / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(UserError, match="cannot read this Hugging "
                       "Face tokenizer"):
        read_tokenizer_json(tmp_path)
