"""Character tables that make in-graph text ops follow Python's Unicode rules.

TensorFlow's string ops use ICU and RE2, whose Unicode versions differ from
Python's. Every class in_graph.py uses is computed here once per process from
Python itself: RE2 classes as explicit ranges, `str.lower()` as a table plus
the final-sigma properties, and where TF Text's NFD disagrees. Own code: no
library exposes Python's tables to TensorFlow.
"""
import functools
import sys
import unicodedata

import numpy as np

from bert_tf1.data.tokenization import full_tokenizer as tokenization

MAX_CODE_POINT = 0x10FFFF
CAPITAL_SIGMA = 0x03A3
FINAL_SIGMA = 0x03C2

# Values of the in-graph sigma-context table (see case_context_code_points).
CONTEXT_OTHER = 0
CONTEXT_CASE_IGNORABLE = 1
CONTEXT_CASED = 2


def _text_of(code_points):
    """One str of the given code points (through UTF-32)."""
    return np.asarray(code_points, dtype="<u4").tobytes().decode("utf-32-le")


@functools.lru_cache(maxsize=None)
def _assigned():
    """(assigned code points, their categories); no surrogates, no Cn."""
    cps = np.arange(MAX_CODE_POINT + 1, dtype=np.uint32)
    cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]
    categories = np.array(list(map(unicodedata.category, _text_of(cps))))
    keep = categories != "Cn"
    return cps[keep].tolist(), categories[keep].tolist()


def _code_points_where(predicate, category_prefixes):
    """Assigned code points (ASCII or of `category_prefixes`) whose one-char
    string satisfies `predicate`."""
    cps, cats = _assigned()
    cps = [cp for cp, cat in zip(cps, cats)
           if cp < 0x80 or cat.startswith(category_prefixes)]
    return frozenset(cp for cp, yes in zip(cps, map(predicate,
                                                     _text_of(cps))) if yes)


def _joinable_code_points():
    """Assigned code points except "\\n" (used to join one-char probes)."""
    return [cp for cp in _assigned()[0] if cp != ord("\n")]


def re2_class(code_points):
    """Returns an RE2 character class matching exactly `code_points`.

    Args:
      code_points: iterable of int code points (no surrogates).

    Returns:
      str such as "[\\x{41}-\\x{5A}\\x{61}]"; "[^\\x{0}-\\x{10FFFF}]" (matches
      nothing) when empty.
    """
    points = sorted(set(code_points))
    if not points:
        return "[^\\x{0}-\\x{10FFFF}]"
    parts = []
    start = prev = points[0]
    for cp in points[1:] + [None]:
        if cp is not None and cp == prev + 1:
            prev = cp
            continue
        if start == prev:
            parts.append("\\x{%X}" % start)
        else:
            parts.append("\\x{%X}-\\x{%X}" % (start, prev))
        if cp is not None:
            start = prev = cp
    return "[" + "".join(parts) + "]"


@functools.lru_cache(maxsize=None)
def deleted_code_points():
    """Code points BasicTokenizer._clean_text drops: NUL, U+FFFD, and
    `tokenization._is_control` (Cc/Cf except tab, newline, carriage return)."""
    return frozenset({0, 0xFFFD}) | _code_points_where(
        tokenization._is_control, ("Cc", "Cf"))


@functools.lru_cache(maxsize=None)
def space_code_points():
    """Code points that separate words: `_is_whitespace` plus the other
    `str.isspace()` characters that survive cleaning (U+2028, U+2029)."""
    return _code_points_where(tokenization._is_whitespace, ("Z",)) | (
        _code_points_where(str.isspace, ("Z", "Cc"))
        - deleted_code_points())


@functools.lru_cache(maxsize=None)
def cjk_code_points():
    """The CJK ideograph code points BasicTokenizer surrounds with spaces."""
    # U+3400..U+2FA1F spans all of the original's ranges, unassigned
    # code points included.
    return frozenset(filter(tokenization._is_chinese_codepoint,
                            range(0x3400, 0x2FA20)))


@functools.lru_cache(maxsize=None)
def punctuation_code_points():
    """Code points for which `tokenization._is_punctuation` is True."""
    return _code_points_where(tokenization._is_punctuation, ("P",))


@functools.lru_cache(maxsize=None)
def nonspacing_mark_code_points():
    """Code points of category Mn (stripped after NFD when lower-casing)."""
    cps, cats = _assigned()
    return frozenset(cp for cp, cat in zip(cps, cats) if cat == "Mn")


@functools.lru_cache(maxsize=None)
def lower_case_map():
    """Python's `str.lower()`, one code point at a time.

    Returns:
      dict code point -> code point for every character `str.lower()`
      changes; multi-character results keep their non-Mn character (exact
      because NFD and Mn stripping come next).

    Raises:
      NotImplementedError: this Python's `str.lower()` maps a character to
        several non-Mn characters (no Python up to 3.13 does).
    """
    cps = _joinable_code_points()
    # "\n" is neither cased nor case-ignorable: the probes do not interact.
    lowered = _probe_text(cps, (None,)).lower().split("\n")
    result = {}
    for cp, low in zip(cps, lowered):
        if low == chr(cp):
            continue
        if len(low) > 1:
            low = "".join(c for c in low
                          if unicodedata.category(c) != "Mn")
        if len(low) != 1:
            raise NotImplementedError(
                "str.lower() of U+%04X is %r: more than one non-Mn "
                "character, which the in-graph tokenizer cannot reproduce"
                % (cp, chr(cp).lower()))
        result[cp] = ord(low)
    return result


def _probe_text(cps, pattern):
    """Newline-separated probes, one per code point: `pattern` gives the
    probe's code points, None standing for the code point itself."""
    width = len(pattern) + 1
    grid = np.empty((len(cps), width), dtype=np.uint32)
    for column, value in enumerate(pattern):
        grid[:, column] = cps if value is None else value
    grid[:, -1] = ord("\n")
    return _text_of(grid.reshape(-1)[:-1])


@functools.lru_cache(maxsize=None)
def case_context_code_points():
    """Case-ignorable and cased characters seen by the final-sigma rule of
    Python's `str.lower()`: `("A" + c + SIGMA).lower()` ends in final sigma
    iff c is ignorable or cased; `("A" + SIGMA + c).lower()` has it at 1 iff
    c is ignorable or not cased.

    Returns:
      (case_ignorable, cased_not_ignorable): two frozensets of code points.
    """
    cps = _joinable_code_points()
    final = chr(FINAL_SIGMA)
    # "\n" is neither cased nor case-ignorable: the probes do not interact.
    before = _probe_text(cps, (ord("A"), None, CAPITAL_SIGMA)).lower()
    after = _probe_text(cps, (ord("A"), CAPITAL_SIGMA, None)).lower()
    ignorable, cased = set(), set()
    for cp, probe1, probe2 in zip(cps, before.split("\n"),
                                  after.split("\n")):
        ignorable_or_cased = probe1[-1] == final
        ignorable_or_uncased = probe2[1] == final
        if ignorable_or_cased and ignorable_or_uncased:
            ignorable.add(cp)
        elif ignorable_or_cased:
            cased.add(cp)
    return frozenset(ignorable), frozenset(cased)


@functools.lru_cache(maxsize=None)
def _one_char_lines():
    """(code points, their "\\n"-joined text); no NUL, "\\n", surrogates."""
    cps = np.arange(1, MAX_CODE_POINT + 1, dtype=np.uint32)
    cps = cps[((cps < 0xD800) | (cps > 0xDFFF)) & (cps != ord("\n"))]
    return cps.tolist(), _probe_text(cps, (None,))


@functools.lru_cache(maxsize=None)
def lower_case_mismatches(other_lower):
    """frozenset of code points whose context-free lower-casing by
    `other_lower` (str -> str) differs from `str.lower()`."""
    cps, joined = _one_char_lines()
    # "\n" is neither cased nor case-ignorable and never changes.
    theirs = other_lower(joined).split("\n")
    ours = joined.lower().split("\n")
    if len(theirs) != len(cps) or len(ours) != len(cps):
        raise RuntimeError("lower-casing changed the number of lines")
    return frozenset(cp for cp, a, b in zip(cps, theirs, ours) if a != b)


def dense_table(mapping, default_identity=True, dtype=np.int32):
    """numpy t[cp] = mapping.get(cp, cp or 0), sized to the largest key + 1."""
    size = (max(mapping) + 1) if mapping else 1
    if default_identity:
        table = np.arange(size, dtype=dtype)
    else:
        table = np.zeros(size, dtype=dtype)
    for cp, value in mapping.items():
        table[cp] = value
    return table


@functools.lru_cache(maxsize=None)
def nfd_mismatches(icu_nfd):
    """frozenset of code points whose NFD by `icu_nfd` (str -> str) differs
    from Python's."""
    cps, joined = _one_char_lines()
    # NFD never moves anything across "\n" (class 0, no decomposition).
    theirs = icu_nfd(joined).split("\n")
    ours = unicodedata.normalize("NFD", joined).split("\n")
    if len(theirs) != len(cps) or len(ours) != len(cps):
        raise RuntimeError("NFD changed the number of lines")
    return frozenset(cp for cp, a, b in zip(cps, theirs, ours) if a != b)


def python_unicode_version():
    """The Unicode version of this Python's `unicodedata` (for messages)."""
    return "%s (Python %d.%d)" % (unicodedata.unidata_version,
                                  sys.version_info[0], sys.version_info[1])
