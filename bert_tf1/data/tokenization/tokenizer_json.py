"""A Hugging Face `tokenizer.json` read as what `FullTokenizer` needs: the
WordPiece vocab in id order and `do_lower_case`.

Accepted only where FullTokenizer reproduces it: a `WordPiece` model ("[UNK]",
"##", ids 0..n-1), a `BertNormalizer` with `clean_text` and
`handle_chinese_chars` on and `strip_accents` equal to `lowercase` (null
follows it, as in `tokenizers`), a `BertPreTokenizer`, added tokens only as
special tokens of the vocab. (`max_input_chars_per_word` is not checked:
100 there, 200 in the original.) Source: the `tokenizers` JSON layout.
"""
import json
import os

from bert_tf1.data.io.errors import MissingFileError, UserError, reading_file

#: The file name Hugging Face gives it.
TOKENIZER_JSON = "tokenizer.json"


def _kind(section):
    return section.get("type") if isinstance(section, dict) else section


def _lower_case(normalizer, path):
    """`do_lower_case` of a `BertNormalizer` section, or a UserError."""
    if _kind(normalizer) != "BertNormalizer":
        raise UserError(
            f"{path}: normalizer {_kind(normalizer)!r} is not a "
            "BertNormalizer; FullTokenizer cannot reproduce it.")
    for key in ("clean_text", "handle_chinese_chars"):
        if not normalizer.get(key, True):
            raise UserError(f"{path}: normalizer {key} is false; "
                            "FullTokenizer always applies it.")
    lowercase = normalizer.get("lowercase", True)
    strip_accents = normalizer.get("strip_accents")
    if strip_accents is None:  # `tokenizers`: null follows `lowercase`
        strip_accents = lowercase
    if not isinstance(lowercase, bool) or not isinstance(strip_accents, bool):
        raise UserError(f"{path}: normalizer lowercase and strip_accents "
                        "must be true, false (or strip_accents null).")
    if lowercase != strip_accents:
        raise UserError(
            f"{path}: normalizer lowercase={str(lowercase).lower()} with "
            f"strip_accents={str(strip_accents).lower()}; FullTokenizer "
            "lower-cases and strips accents together (do_lower_case) or "
            "does neither.")
    return lowercase


def _vocab_in_id_order(model, path):
    """The WordPiece model's tokens, index = id, or a UserError."""
    if _kind(model) != "WordPiece":
        raise UserError(f"{path}: model {_kind(model)!r} is not WordPiece; "
                        "FullTokenizer reads WordPiece vocabs only.")
    for key, expected in (("unk_token", "[UNK]"),
                          ("continuing_subword_prefix", "##")):
        if model.get(key, expected) != expected:
            raise UserError(f"{path}: model {key} is {model.get(key)!r}; "
                            f"FullTokenizer uses {expected!r}.")
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not vocab:
        raise UserError(f"{path}: model vocab is missing or empty.")
    tokens = [None] * len(vocab)
    for token, index in vocab.items():
        if not isinstance(index, int) or not 0 <= index < len(vocab) or (
                tokens[index] is not None):
            raise UserError(f"{path}: model vocab ids must be 0..{len(vocab) - 1}"
                            f" once each; token {token!r} has id {index!r}.")
        if not token or token != token.strip() or "\n" in token:
            raise UserError(f"{path}: vocab token {token!r} (id {index}) "
                            "cannot be one line of vocab.txt.")
        tokens[index] = token
    if "[UNK]" not in vocab:
        raise UserError(f"{path}: the vocab has no [UNK] token.")
    return tokens


def read_tokenizer_json(path):
    """Reads a `tokenizer.json` that `FullTokenizer` can reproduce.

    Args:
        path: the file, or the folder holding `tokenizer.json`.

    Returns:
        (tokens in id order, do_lower_case).

    Raises:
        MissingFileError: no such file.
        UserError: not JSON, or a tokenizer FullTokenizer cannot reproduce
            (the module docstring's rules), naming the file and the setting.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, TOKENIZER_JSON)
    if not os.path.isfile(path):
        raise MissingFileError(f"{path}: no such file")
    with reading_file(path, "Hugging Face tokenizer (JSON)"):
        with open(path, encoding="utf-8") as reader:
            tokenizer = json.load(reader)
    if not isinstance(tokenizer, dict):
        raise UserError(f"{path}: expected a JSON object.")
    do_lower_case = _lower_case(tokenizer.get("normalizer"), path)
    pre_tokenizer = _kind(tokenizer.get("pre_tokenizer"))
    if pre_tokenizer != "BertPreTokenizer":
        raise UserError(f"{path}: pre_tokenizer {pre_tokenizer!r} is not a "
                        "BertPreTokenizer; FullTokenizer cannot reproduce it.")
    tokens = _vocab_in_id_order(tokenizer.get("model"), path)
    for added in tokenizer.get("added_tokens") or []:
        content, index = added.get("content"), added.get("id")
        if not added.get("special") or not (
                isinstance(index, int) and 0 <= index < len(tokens)
                and tokens[index] == content):
            raise UserError(
                f"{path}: added token {content!r} (id {index}) is not a "
                "special token of the vocab; FullTokenizer has no added "
                "tokens.")
    return tokens, do_lower_case


def vocab_text(tokens):
    """vocab.txt's content for tokens in id order (one per line, UTF-8)."""
    return "".join(token + "\n" for token in tokens)
