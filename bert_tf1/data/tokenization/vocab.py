"""Reading a WordPiece vocab file as the original does, and checking it.

Source: tokenization.py load_vocab (ids are line indexes, blank lines
included; a repeated token maps to its last line). The checks report what
reads differently from what it seems to say and refuse ids past the model's
embedding table.
"""
import collections
import functools
import os

from bert_tf1.data.io.errors import MissingFileError, UserError


class VocabEncodingError(UserError):
    """A vocab line is not valid UTF-8 (the original cannot read it either)."""


def load_vocab(vocab_file):
    """Reads a vocab file, one token a line, into token -> line index.

    Lines end at "\\n" only and are stripped; a blank line is the empty
    token. Unlike the original, a leading byte order mark is dropped.

    Returns:
      collections.OrderedDict mapping str token -> int id.

    Raises:
      MissingFileError (a FileNotFoundError): the file does not exist.
      VocabEncodingError: a line is not valid UTF-8 (names file, line and
        byte).

    Source: tokenization.py, load_vocab.
    """
    vocab_file = os.fspath(vocab_file)
    if not os.path.isfile(vocab_file):
        raise MissingFileError(
            "BERT vocab file not found: %r (expected a text file with one "
            "WordPiece token per line, e.g. <model_dir>/vocab.txt)"
            % vocab_file)
    # A repeated token keeps its first place and takes its last line's id.
    tokens = _read_vocab_file(vocab_file)[0]
    return collections.OrderedDict(zip(tokens, range(len(tokens))))


def _read_vocab_file(vocab_file):
    """(tokens by line, warnings) of `vocab_file`, parsed once per content
    in a process: a process that builds several models and tokenizers on one
    vocab (a test suite, a notebook) reads the file each time but parses it
    once (reading 0.4 ms, parsing 50-90 ms for a 30,522-line vocab).

    Returns:
      tuple of (tuple of str, tuple of str).
    """
    with open(vocab_file, "rb") as reader:
        raw = reader.read()
    return _parse_vocab(vocab_file, raw)


@functools.lru_cache(maxsize=8)  # keyed on the path and the file's bytes
def _parse_vocab(vocab_file, raw):
    lines = _vocab_lines(raw)
    tokens = tuple(_vocab_token(line, index, vocab_file)
                   for index, line in enumerate(lines))
    byte_order_mark = bool(lines) and lines[0].startswith(b"\xef\xbb\xbf")
    return tokens, tuple(_warnings(vocab_file, tokens, byte_order_mark))


def _vocab_lines(raw):
    # A final "\n" ends the last line rather than starting an empty one.
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _vocab_token(line, index, vocab_file=""):
    try:
        token = line.decode("utf-8").strip()
    except UnicodeDecodeError as error:
        raise VocabEncodingError(
            "%s, line %d: not UTF-8 (byte 0x%02x at byte %d of the line); a "
            "vocab file must be UTF-8 text (the original's reader fails on it "
            "too). Save it as UTF-8 or use the vocab.txt that came with the "
            "checkpoint." % (vocab_file, index + 1, line[error.start],
                             error.start + 1)) from None
    if index == 0 and token.startswith("\ufeff"):
        token = token[1:].strip()
    return token


def highest_reachable_id(vocab):
    """The largest id tokenization can produce (never the empty token of a
    blank line, nor a duplicate's earlier lines), or -1 for none."""
    return max((index for token, index in vocab.items() if token), default=-1)


def validate_vocab_size(vocab, vocab_size, vocab_file=None, config_file=None):
    """Checks that every id tokenization can produce has an embedding row
    (`highest_reachable_id` < the config's `vocab_size`; such ids are an
    error deep inside TF on CPU and wrong embeddings on GPU).

    Raises:
      UserError: the vocab gives an id >= `vocab_size`.
    """
    highest = highest_reachable_id(vocab)
    if highest >= vocab_size:
        token = next(t for t, i in vocab.items() if i == highest)
        # "tokens" counts lines (ids), as the original numbers them.
        raise UserError(
            "vocab file %s has %d tokens but the BERT config %s has "
            "vocab_size %d: ids from %d on have no embedding (id %d is %r, "
            "line %d). Use the vocab.txt that came with the checkpoint." % (
                vocab_file or "", highest + 1, config_file or "", vocab_size,
                vocab_size, highest, token, highest + 1))


def vocab_file_warnings(vocab_file):
    """What in a vocab file reads differently from what it seems to say.

    Returns:
      list of str: a byte order mark, duplicated tokens, blank lines before
      the last token.
    """
    return list(_read_vocab_file(os.fspath(vocab_file))[1])


def _warnings(vocab_file, tokens, byte_order_mark):
    warnings = []
    if byte_order_mark:
        warnings.append(
            "%s starts with a UTF-8 byte order mark; it is removed from the "
            "first token (the original would have kept it as part of %r, "
            "so that token could never be produced). Ids are unchanged." % (
                vocab_file, tokens[0]))
    seen = {}
    for index, token in enumerate(tokens):
        seen.setdefault(token, []).append(index)
    last_token_line = max((i for t, ids in seen.items() if t for i in ids),
                          default=-1)
    blank = [i + 1 for i in seen.get("", []) if i < last_token_line]
    if blank:
        warnings.append(
            "%s has blank line(s) %s: each is read as the empty token and "
            "takes an id, as in the original." % (
                vocab_file, ", ".join(str(n) for n in blank[:10])))
    duplicates = {t: ids for t, ids in seen.items() if t and len(ids) > 1}
    for token, ids in list(duplicates.items())[:10]:
        warnings.append(
            "%s: token %r is on lines %s; it maps to id %d (its last line, "
            "as in the original) and id(s) %s are never produced." % (
                vocab_file, token, ", ".join(str(i + 1) for i in ids),
                ids[-1], ", ".join(str(i) for i in ids[:-1])))
    if len(duplicates) > 10:
        warnings.append("%s: %d more duplicated tokens." % (
            vocab_file, len(duplicates) - 10))
    return warnings
