"""Character tables that make in-graph text ops follow Python's Unicode rules.

The original BERT tokenizer classifies characters with the running Python's
`unicodedata` and `str` methods. TensorFlow's string ops use ICU and RE2, whose
Unicode versions differ from Python's (and from each other). To get identical
results in-graph, every character class used by `data/tokenization/in_graph.py` is
computed here, once per process, from Python itself:

  * RE2 character classes written as explicit code-point ranges (so RE2's own
    Unicode tables are never consulted);
  * a lower-casing table taken from `str.lower()`, plus the two properties
    (case-ignorable, cased) that decide Python's final-sigma rule;
  * the code points where TF Text's ICU NFD disagrees with
    `unicodedata.normalize("NFD", ...)`.

Own code: no library exposes Python's exact tables to TensorFlow.
"""
import functools
import sys
import unicodedata

import numpy as np

from data.tokenization import full_tokenizer as tokenization

MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)
CAPITAL_SIGMA = 0x03A3
# The original's _is_chinese_char ranges (checked against
# tokenization._is_chinese_codepoint in cjk_code_points).
_CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF),
               (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF),
               (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
FINAL_SIGMA = 0x03C2

# Values of the in-graph sigma-context table (see case_context_code_points).
CONTEXT_OTHER = 0
CONTEXT_CASE_IGNORABLE = 1
CONTEXT_CASED = 2


def _text_of(code_points):
    """One str holding the given code points (numpy uint32), built at C
    speed through UTF-32."""
    return np.asarray(code_points, dtype="<u4").tobytes().decode("utf-32-le")


@functools.lru_cache(maxsize=None)
def _assigned():
    """(sorted list of assigned code points, their general categories) from
    Python's database; surrogates and unassigned (Cn) code points left out
    (every rule here is False for them)."""
    cps = np.arange(MAX_CODE_POINT + 1, dtype=np.uint32)
    cps = cps[(cps < 0xD800) | (cps > 0xDFFF)]
    categories = np.array(list(map(unicodedata.category, _text_of(cps))))
    keep = categories != "Cn"
    return cps[keep].tolist(), categories[keep].tolist()


def _code_points_where(predicate, category_prefixes):
    """Assigned code points whose one-char string satisfies `predicate`,
    looking only at ASCII and at categories starting with one of
    `category_prefixes` (where the callers' predicates can be True; the
    tests compare every result with a scan of all code points)."""
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
    """Code points that end up separating words: `_is_whitespace` ones (mapped
    to " " by _clean_text) plus every other `str.isspace()` character that
    survives cleaning (U+2028, U+2029), which `str.split()` splits on."""
    return _code_points_where(tokenization._is_whitespace, ("Z",)) | (
        _code_points_where(str.isspace, ("Z", "Cc"))
        - deleted_code_points())


@functools.lru_cache(maxsize=None)
def cjk_code_points():
    """The CJK ideograph code points BasicTokenizer surrounds with spaces."""
    points = set()
    for start, end in _CJK_RANGES:
        points.update(range(start, end + 1))
    if any(not tokenization._is_chinese_codepoint(cp) for cp in points) or (
            tokenization._is_chinese_codepoint(_CJK_RANGES[0][0] - 1)):
        raise RuntimeError("_CJK_RANGES disagrees with tokenization")
    return frozenset(points)


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
      dict code point -> code point for every character that `str.lower()`
      changes. Multi-character results (U+0130 -> "i" + U+0307) are reduced
      to their characters that are not Mn: this is exact only because the
      lower-cased text is always NFD-normalized and stripped of Mn next (NFD
      never composes, and its stable reordering of marks keeps the order of
      the marks that remain).

    Raises:
      NotImplementedError: this Python's `str.lower()` maps a character to
        several non-Mn characters (no Python up to 3.13 does).
    """
    cps = _joinable_code_points()
    # "\n" is neither cased nor case-ignorable, so no character's context
    # leaks into its neighbour's; one call is much faster than 300k calls.
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


def _probe_case_context(lower, cps):
    """Case-ignorable and cased characters as seen by the final-sigma rule
    of the lower-casing function `lower` (str -> str).

    `lower("A" + c + "\u03a3")` ends in final sigma iff c is case-ignorable
    or cased; `lower("A\u03a3" + c)` has final sigma at index 1 iff c is
    case-ignorable or not cased.

    Returns:
      (case_ignorable, cased_not_ignorable): two frozensets of code points.
    """
    final = chr(FINAL_SIGMA)
    # "\n" is neither cased nor case-ignorable: the probes do not interact.
    before = lower(_probe_text(cps, (ord("A"), None, CAPITAL_SIGMA)))
    after = lower(_probe_text(cps, (ord("A"), CAPITAL_SIGMA, None)))
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
def case_context_code_points():
    """Python's case-ignorable and cased (not case-ignorable) characters,
    probed through the final-sigma rule of `str.lower()` itself.

    Returns:
      (case_ignorable, cased_not_ignorable): two frozensets of code points.
    """
    return _probe_case_context(str.lower, _joinable_code_points())


@functools.lru_cache(maxsize=None)
def _one_char_lines():
    """(code points, "\\n"-joined text of them): every code point except
    NUL, "\\n" and surrogates. ICU stops at NUL, which the tokenizer deletes
    before any ICU op anyway."""
    cps = np.arange(1, MAX_CODE_POINT + 1, dtype=np.uint32)
    cps = cps[((cps < 0xD800) | (cps > 0xDFFF)) & (cps != ord("\n"))]
    return cps.tolist(), _probe_text(cps, (None,))


@functools.lru_cache(maxsize=None)
def lower_case_mismatches(other_lower):
    """Code points whose lower-casing by `other_lower` (str -> str, e.g.
    ICU's) differs from Python's `str.lower()`.

    Only the context-free mapping is compared. The one context rule of
    `str.lower()` (final sigma) depends on case-ignorable/cased tables that
    may differ too, so callers must not trust `other_lower` on text holding
    a capital sigma.

    Returns:
      frozenset of int code points.
    """
    cps, joined = _one_char_lines()
    # "\n" is neither cased nor case-ignorable and never changes.
    theirs = other_lower(joined).split("\n")
    ours = joined.lower().split("\n")
    if len(theirs) != len(cps) or len(ours) != len(cps):
        raise RuntimeError("lower-casing changed the number of lines")
    return frozenset(cp for cp, a, b in zip(cps, theirs, ours) if a != b)


def dense_table(mapping, default_identity=True, dtype=np.int32):
    """Returns a numpy table t with t[cp] = mapping.get(cp, cp or 0), sized
    to the largest key + 1 (callers treat larger code points as absent)."""
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
    """Code points whose NFD by `icu_nfd` differs from Python's NFD.

    Args:
      icu_nfd: callable taking a str and returning its NFD form as str (for
        the in-graph tokenizer: tensorflow_text.normalize_utf8).

    Returns:
      frozenset of int code points.
    """
    cps, joined = _one_char_lines()
    # "\n" has combining class 0 and no decomposition, so NFD never moves
    # anything across it: one call normalizes every character separately.
    theirs = icu_nfd(joined).split("\n")
    ours = unicodedata.normalize("NFD", joined).split("\n")
    if len(theirs) != len(cps) or len(ours) != len(cps):
        raise RuntimeError("NFD changed the number of lines")
    return frozenset(cp for cp, a, b in zip(cps, theirs, ours) if a != b)


def python_unicode_version():
    """The Unicode version of this Python's `unicodedata` (for messages)."""
    return "%s (Python %d.%d)" % (unicodedata.unidata_version,
                                  sys.version_info[0], sys.version_info[1])
