"""Pure-Python WordPiece tokenization with the original BERT's exact rules.

Source: google-research/bert `tokenization.py` (same names, character classes
and order of steps; own code, since the rules are Python's `unicodedata` and
`str` semantics). An unknown token or id raises `VocabLookupError` (a
`KeyError`) naming the vocab file.
"""
import os
import re
import unicodedata

from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.tokenization.vocab import (  # noqa: F401  (public here too)
    highest_reachable_id, load_vocab, validate_vocab_size,
    vocab_file_warnings)

# Checkpoint directory names whose vocab was built lower-cased / cased; the
# same lists as the original's validate_case_matches_checkpoint.
_LOWER_CASED_MODELS = (
    "uncased_L-24_H-1024_A-16",
    "uncased_L-12_H-768_A-12",
    "multilingual_L-12_H-768_A-12",
    "chinese_L-12_H-768_A-12",
)
_CASED_MODELS = (
    "cased_L-12_H-768_A-12",
    "cased_L-24_H-1024_A-16",
    "multi_cased_L-12_H-768_A-12",
)


class VocabLookupError(UserError, KeyError):
    """A token or id is not in the vocabulary (a KeyError, as the original's).

    Attributes:
      key: the token (str) or id (int) that was not found.
      vocab_file: the vocab file the vocabulary came from, or None.
    """

    def __init__(self, key, vocab_file=None, kind="token"):
        self.key = key
        self.vocab_file = vocab_file
        source = vocab_file if vocab_file else "the vocabulary"
        if kind == "id":
            message = "id %r is not in %s" % (key, source)
        else:
            message = ("token %r is not in %s (WordPiece output is always in "
                       "the vocab; was the token produced with another "
                       "vocab?)" % (key, source))
        super().__init__(message)
        self.message = message

    def __str__(self):
        # KeyError.__str__ would print the repr of the message.
        return self.message


def validate_case_matches_checkpoint(do_lower_case, init_checkpoint):
    """Checks `do_lower_case` against a released checkpoint's directory name
    (other paths pass).

    Raises:
      ValueError: the checkpoint is a known cased model and do_lower_case is
        True, or a known uncased model and do_lower_case is False.

    Source: tokenization.py, validate_case_matches_checkpoint.
    """
    if not init_checkpoint:
        return
    match = re.match("^.*?([A-Za-z0-9_-]+)/bert_model.ckpt", init_checkpoint)
    if match is None:
        return
    model_name = match.group(1)

    if model_name in _LOWER_CASED_MODELS and not do_lower_case:
        expected_flag, model_kind = "True", "lower-cased"
    elif model_name in _CASED_MODELS and do_lower_case:
        expected_flag, model_kind = "False", "cased"
    else:
        return
    raise UserError(
        "do_lower_case=%s does not match the checkpoint %r: %s is a %s model, "
        "so pass --do_lower_case=%s (or remove this check if you are sure the "
        "mismatch is intended)." % (do_lower_case, init_checkpoint,
                                    model_name, model_kind, expected_flag))


def tokenizer_for_model(vocab_file, do_lower_case, vocab_size, config_file=None):
    """A `FullTokenizer` checked by `validate_vocab_size` (warnings logged)."""
    tokenizer = FullTokenizer(vocab_file=vocab_file, do_lower_case=do_lower_case)
    for warning in vocab_file_warnings(vocab_file):
        logging.warning("%s", warning)
    validate_vocab_size(tokenizer.vocab, vocab_size, vocab_file, config_file)
    return tokenizer


def convert_to_unicode(text):
    """Returns `text` as `str`; bytes are decoded as UTF-8, dropping bad bytes.

    Raises:
      ValueError: `text` is neither str nor bytes.

    Source: tokenization.py, convert_to_unicode (Python 3 branch).
    """
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        return text.decode("utf-8", "ignore")
    raise ValueError("Unsupported string type: %s (expected str or bytes)"
                     % type(text))


def printable_text(text):
    """`convert_to_unicode` (Source: tokenization.py, printable_text)."""
    return convert_to_unicode(text)


def convert_by_vocab(vocab, items, vocab_file=None, kind="token"):
    """Maps each item through `vocab`.

    Raises:
      VocabLookupError: an item is missing (names the item and vocab_file).

    Source: tokenization.py, convert_by_vocab.
    """
    output = []
    for item in items:
        try:
            output.append(vocab[item])
        except KeyError:
            raise VocabLookupError(item, vocab_file, kind) from None
    return output


def convert_tokens_to_ids(vocab, tokens):
    """Maps tokens to ids with `vocab` (token -> id). See convert_by_vocab."""
    return convert_by_vocab(vocab, tokens)


def convert_ids_to_tokens(inv_vocab, ids):
    """Maps ids to tokens with `inv_vocab` (id -> token)."""
    return convert_by_vocab(inv_vocab, ids, kind="id")


def whitespace_tokenize(text):
    """`text.split()` (Source: tokenization.py, whitespace_tokenize)."""
    text = text.strip()
    if not text:
        return []
    return text.split()


class FullTokenizer(object):
    """BasicTokenizer followed by WordpieceTokenizer, plus id conversion.

    Args:
      vocab_file: path of the vocab file.
      do_lower_case: lower-case and strip accents (True for uncased models).

    Attributes:
      vocab: OrderedDict token -> id; inv_vocab: dict id -> token;
      vocab_file: the path given; basic_tokenizer; wordpiece_tokenizer.

    Raises:
      FileNotFoundError: the vocab file does not exist.

    Source: tokenization.py, FullTokenizer.
    """

    def __init__(self, vocab_file, do_lower_case=True):
        self.vocab_file = os.fspath(vocab_file)
        self.do_lower_case = do_lower_case
        self.vocab = load_vocab(self.vocab_file)
        self.inv_vocab = {v: k for k, v in self.vocab.items()}
        self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab)

    def tokenize(self, text):
        """Returns the list of WordPiece tokens (str) of `text` (str/bytes)."""
        split_tokens = []
        word_pieces = self.wordpiece_tokenizer.word_pieces
        for token in self.basic_tokenizer.tokenize(text):
            split_tokens.extend(word_pieces(token))
        return split_tokens

    def convert_tokens_to_ids(self, tokens):
        """Returns list of int ids; raises VocabLookupError (a KeyError)."""
        return convert_by_vocab(self.vocab, tokens, self.vocab_file)

    def convert_ids_to_tokens(self, ids):
        """Returns list of str tokens; raises VocabLookupError (a KeyError)."""
        return convert_by_vocab(self.inv_vocab, ids, self.vocab_file, "id")


class BasicTokenizer(object):
    """Cleans text, splits CJK ideographs and punctuation, optionally lower-
    cases and strips accents.

    Source: tokenization.py, BasicTokenizer.
    """

    def __init__(self, do_lower_case=True):
        self.do_lower_case = do_lower_case

    def tokenize(self, text):
        """Returns the list of basic tokens (str) of `text` (str or bytes)."""
        text = self._tokenize_chinese_chars(
            self._clean_text(convert_to_unicode(text)))
        if self.do_lower_case:
            # The original lower-cases and strips accents token by token;
            # over the whole text it is the same: whitespace ends a word for
            # str.lower's final sigma, and NFD never reorders across it.
            text = self._run_strip_accents(text.lower())
        # Spaces around each punctuation mark, then one whitespace split:
        # the original's tokens, in order.
        return text.translate(_PUNCTUATION_SPACED).split()

    def _run_strip_accents(self, text):
        """NFD-normalizes and removes nonspacing marks (category Mn)."""
        return unicodedata.normalize("NFD", text).translate(_NONSPACING_MARKS)

    def _run_split_on_punc(self, text):
        """Makes every punctuation character a token of its own (`tokenize`
        does this for the whole text in one `str.translate`)."""
        pieces = []
        start_new_word = True
        for char in text:
            if _is_punctuation(char):
                pieces.append([char])
                start_new_word = True
            else:
                if start_new_word:
                    pieces.append([])
                start_new_word = False
                pieces[-1].append(char)
        return ["".join(p) for p in pieces]

    def _tokenize_chinese_chars(self, text):
        """Puts spaces around every CJK ideograph."""
        return text.translate(_CJK_SPACED)

    def _clean_text(self, text):
        """Drops NUL, U+FFFD and control chars; maps whitespace to " "."""
        return text.translate(_CLEANED)


class WordpieceTokenizer(object):
    """Greedy longest-match-first WordPiece.

    Args:
      vocab: mapping token -> id (only membership is used).
      unk_token: for a word that cannot be pieced or is longer than
        max_input_chars_per_word code points.

    Source: tokenization.py, WordpieceTokenizer.
    """

    def __init__(self, vocab, unk_token="[UNK]", max_input_chars_per_word=200):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self._cache = {}

    def tokenize(self, text):
        """WordPiece tokens of basic-tokenized, space-separated `text`."""
        output_tokens = []
        for token in whitespace_tokenize(convert_to_unicode(text)):
            output_tokens.extend(self.word_pieces(token))
        return output_tokens

    def word_pieces(self, word):
        """The pieces (a tuple of str) of one word, without whitespace.

        Remembered for the `_CACHED_WORDS` most recent distinct words (own
        code for speed: a corpus repeats its words)."""
        pieces = self._cache.get(word)
        if pieces is None:
            pieces = self._pieces(word)
            if len(self._cache) >= _CACHED_WORDS:
                self._cache.clear()
            self._cache[word] = pieces
        return pieces

    def _pieces(self, token):
        if len(token) > self.max_input_chars_per_word:
            return (self.unk_token,)
        sub_tokens = []
        start = 0
        while start < len(token):
            end = len(token)
            piece = None
            while start < end:
                candidate = token[start:end]
                if start > 0:
                    candidate = "##" + candidate
                if candidate in self.vocab:
                    piece = candidate
                    break
                end -= 1
            if piece is None:
                return (self.unk_token,)
            sub_tokens.append(piece)
            start = end
        return tuple(sub_tokens)


# Distinct words whose pieces a WordpieceTokenizer remembers (a few MB).
_CACHED_WORDS = 1 << 16


def _is_chinese_codepoint(cp):
    """True for the CJK Unified Ideographs blocks the original's
    `_is_chinese_char` lists (not kana, not Hangul)."""
    return ((0x4E00 <= cp <= 0x9FFF) or (0x3400 <= cp <= 0x4DBF)
            or (0x20000 <= cp <= 0x2A6DF) or (0x2A700 <= cp <= 0x2B73F)
            or (0x2B740 <= cp <= 0x2B81F) or (0x2B820 <= cp <= 0x2CEAF)
            or (0xF900 <= cp <= 0xFAFF) or (0x2F800 <= cp <= 0x2FA1F))


def _is_whitespace(char):
    """Source: tokenization.py, _is_whitespace."""
    if char in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(char) == "Zs"


def _is_control(char):
    """Source: tokenization.py, _is_control."""
    if char in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def _is_punctuation(char):
    """Source: tokenization.py, _is_punctuation."""
    cp = ord(char)
    # The original treats all of these ASCII ranges as punctuation even where
    # Unicode says Sm/Sc/Sk (e.g. "$", "+", "^", "`").
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (
            123 <= cp <= 126):
        return True
    return unicodedata.category(char).startswith("P")


class _CharacterTable(dict):
    """A `str.translate` table that applies `rule` (char -> replacement str,
    or None to delete) to each code point the first time it is seen.

    Own code for speed, not new rules: the character classes above, asked
    once per distinct character instead of once per character in Python
    (tokenizing GLUE or SQuAD is then several times faster)."""

    def __init__(self, rule):
        super().__init__()
        self._rule = rule

    def __missing__(self, code_point):
        value = self[code_point] = self._rule(chr(code_point))
        return value


def _cleaned(char):
    cp = ord(char)
    if cp == 0 or cp == 0xFFFD or _is_control(char):
        return None
    return " " if _is_whitespace(char) else char


def _cjk_spaced(char):
    return " %s " % char if _is_chinese_codepoint(ord(char)) else char


_CLEANED = _CharacterTable(_cleaned)
_CJK_SPACED = _CharacterTable(_cjk_spaced)
_NONSPACING_MARKS = _CharacterTable(
    lambda char: None if unicodedata.category(char) == "Mn" else char)
_PUNCTUATION_SPACED = _CharacterTable(
    lambda char: " %s " % char if _is_punctuation(char) else char)
