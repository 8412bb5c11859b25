"""Tag schemes of sequence tagging (IOB1, IOB2/BIO, BIOES): checks, entity
spans and conversion between them.

A tag is `O` or `<prefix>-<TYPE>`: `B-PER`, `I-creative-work`. The schemes:

  * IOB1 (the original CoNLL-2003 files, Tjong Kim Sang & Veenstra 1999):
    every entity token is `I-X`; `B-X` marks only the first token of an
    entity that directly follows another entity of the same type.
  * IOB2 / BIO (WNUT-17, UNER, most modern data): every entity starts with
    `B-X`, its other tokens are `I-X`.
  * BIOES (a.k.a. IOBES): `S-X` is a one-token entity; longer entities are
    `B-X I-X ... E-X`.

Entities are read with the chunk rules of the CoNLL shared tasks'
`conlleval` script (see `entity_spans`), which read IOB1 and IOB2 alike and
never fail, so model predictions that break a scheme still decode to
entities. Conversion therefore goes tags -> spans -> tags
(`convert_tags`), e.g. IOB1 file -> IOB2 for training -> IOB1 for the
prediction file.

Which sequences are rejected (`sequence_problem`), used by the readers for
files with gold tags:
  * IOB1: none. `B-X` after `O` or another type is not strict IOB1 but is
    unambiguous (it starts an entity, as in conlleval), so IOB2 files
    declared IOB1 are read correctly.
  * IOB2: an `I-X` that opens an entity (at the start of a sentence, after
    `O`, or after another type): IOB2 has no such tag, and it is the mark
    of an IOB1 file declared IOB2, whose entities would be read differently
    (adjacent same-type entities).
  * BIOES: every broken transition: `I-X`/`E-X` not after `B-X`/`I-X`, and
    `B-X`/`I-X` not followed by `I-X`/`E-X`.
Model predictions are never checked; they are decoded leniently.
"""
import collections

__all__ = [
    "IOB1", "IOB2", "BIOES", "SCHEMES", "OUTSIDE", "TRAINING_SCHEME",
    "Entity",
    "normalize_scheme", "scheme_prefixes", "split_tag", "tag_problem",
    "sequence_problem", "entity_spans", "render_tags", "convert_tags",
    "scheme_labels", "entity_types",
]

IOB1 = "iob1"
IOB2 = "iob2"
BIOES = "bioes"
SCHEMES = (IOB1, IOB2, BIOES)
OUTSIDE = "O"
#: The scheme models are trained in unless a caller picks another.
TRAINING_SCHEME = IOB2

_ALIASES = {"bio": IOB2, "iobes": BIOES}
_PREFIXES = {IOB1: ("B", "I"), IOB2: ("B", "I"), BIOES: ("B", "I", "E", "S")}

Entity = collections.namedtuple("Entity", ["type", "start", "end"])
Entity.__doc__ = """One entity of a sentence: `tags[start:end]`, end exclusive.

Attributes:
  type: str, e.g. "PER".
  start, end: int token indices, 0 <= start < end <= len(tags).
"""


def normalize_scheme(name):
    """The canonical name of a tag scheme.

    Args:
      name: "iob1", "iob2", "bioes", or an alias ("bio" = iob2, "iobes" =
        bioes); case-insensitive.

    Returns:
      One of SCHEMES.

    Raises:
      ValueError: an unknown name (callers that take it from a flag turn it
        into a UserError naming the flag).
    """
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in SCHEMES:
        raise ValueError("unknown tag scheme %r; expected one of %s (or bio, "
                         "iobes)" % (name, ", ".join(SCHEMES)))
    return key


def scheme_prefixes(scheme):
    """The entity prefixes of a scheme, e.g. ("B", "I") for IOB1/IOB2."""
    return _PREFIXES[normalize_scheme(scheme)]


def split_tag(tag):
    """(prefix, type) of a tag: ("O", None) for `O`, ("B", "PER") for `B-PER`.

    Only the first `-` separates, so types may hold hyphens
    (`I-creative-work` -> ("I", "creative-work")). A malformed tag gives a
    prefix that is not one letter or an empty type; `tag_problem` names it.
    """
    if tag == OUTSIDE:
        return OUTSIDE, None
    prefix, _, entity_type = tag.partition("-")
    return prefix, entity_type


def tag_problem(tag, scheme):
    """Why `tag` is not a tag of `scheme`, or None when it is.

    Args:
      tag: str.
      scheme: a scheme name.

    A tag is `O` or one of the scheme's prefixes, `-`, and a non-empty type
    without whitespace.

    Returns:
      None, or a str such as "tag 'E-PER' is not an IOB2 tag (expected O or
      B-TYPE, I-TYPE)".
    """
    scheme = normalize_scheme(scheme)
    prefixes = _PREFIXES[scheme]
    if tag == OUTSIDE:
        return None
    prefix, entity_type = split_tag(tag)
    if (prefix in prefixes and "-" in tag and entity_type
            and "".join(entity_type.split()) == entity_type):
        return None
    expected = ", ".join(p + "-TYPE" for p in prefixes)
    return "tag %r is not an %s tag (expected O or %s)" % (
        tag, scheme.upper(), expected)


def sequence_problem(tags, scheme):
    """The first tag that breaks `scheme`'s transition rules, or None.

    Tags must already pass `tag_problem`. IOB1 accepts every sequence; for
    IOB2 and BIOES see the module docstring.

    Args:
      tags: sequence of str, one sentence.
      scheme: a scheme name.

    Returns:
      None, or (index, message): the index of the offending tag and why.
    """
    scheme = normalize_scheme(scheme)
    if scheme == IOB1:
        return None
    parsed = [split_tag(tag) for tag in tags]
    for index, (prefix, entity_type) in enumerate(parsed):
        before = parsed[index - 1] if index else (OUTSIDE, None)
        after = parsed[index + 1] if index + 1 < len(parsed) else (
            OUTSIDE, None)
        continues = before[0] in ("B", "I") and before[1] == entity_type
        where = ("at the start of the sentence" if not index
                 else "after %s" % tags[index - 1])
        if scheme == IOB2 and prefix == "I" and not continues:
            return index, (
                "%s opens an entity (%s); in IOB2 every entity starts with "
                "B-%s. If the file is IOB1 (I- everywhere, B- only between "
                "adjacent same-type entities, as the original CoNLL-2003 "
                "files) declare the scheme iob1" % (
                    tags[index], where, entity_type))
        if scheme == BIOES:
            if prefix in ("I", "E") and not continues:
                return index, ("%s %s; in BIOES it must follow B-%s or I-%s"
                               % (tags[index], where, entity_type,
                                  entity_type))
            if prefix in ("B", "I") and not (
                    after[0] in ("I", "E") and after[1] == entity_type):
                following = (tags[index + 1] if index + 1 < len(tags)
                             else "the end of the sentence")
                return index, ("%s is followed by %s; in BIOES it must be "
                               "followed by I-%s or E-%s (a one-token entity "
                               "is S-%s)" % (tags[index], following,
                                             entity_type, entity_type,
                                             entity_type))
    return None


def _chunk_ends(previous, current):
    """Whether an entity ends between two tags, each a (prefix, type).

    conlleval's endOfChunk for B/I/O (E and S: seqeval's extension).
    """
    prefix, entity_type = previous
    if prefix == OUTSIDE:
        return False
    if prefix in ("E", "S") or current[1] != entity_type:
        return True
    return current[0] in ("B", "S", OUTSIDE)


def _chunk_starts(previous, current):
    """Whether an entity starts at `current` (conlleval's startOfChunk)."""
    prefix, entity_type = current
    if prefix == OUTSIDE:
        return False
    if prefix in ("B", "S") or previous[1] != entity_type:
        return True
    return previous[0] in (OUTSIDE, "E", "S")


def entity_spans(tags):
    """The entities of one sentence, read with conlleval's chunk rules.

    An entity starts at `B-X`, at an `I-X` after `O` or after another type,
    and ends before `O`, `B-`, or another type. IOB1 and IOB2 tags are read
    alike, and so are invalid sequences (model predictions). `E-X` and `S-X`
    (BIOES) follow seqeval's extension of these rules: `S-X` is a one-token
    entity, an entity ends after `E-X`.

    Source: `startOfChunk`/`endOfChunk` of the CoNLL-2000 `conlleval`
    script (as seqeval's default mode reproduces them).

    Args:
      tags: sequence of str (already valid tag strings).

    Returns:
      list of Entity(type, start, end), in order, end exclusive.
    """
    spans = []
    previous = (OUTSIDE, None)
    start = 0
    for index, tag in enumerate(list(tags) + [OUTSIDE]):
        current = split_tag(tag)
        if _chunk_ends(previous, current):
            spans.append(Entity(previous[1], start, index))
        if _chunk_starts(previous, current):
            start = index
        previous = current
    return spans


def render_tags(spans, length, scheme):
    """Tags of a sentence of `length` tokens holding `spans`, in `scheme`.

    Args:
      spans: iterable of Entity, not overlapping.
      length: int, number of tokens.
      scheme: a scheme name.

    Returns:
      list of `length` str.

    Raises:
      ValueError: spans overlap or leave [0, length).
    """
    scheme = normalize_scheme(scheme)
    tags = [OUTSIDE] * length
    previous_end, previous_type = -1, None
    for span in sorted(spans, key=lambda s: s.start):
        if span.start < max(previous_end, 0) or not (
                0 <= span.start < span.end <= length):
            raise ValueError("entity %r overlaps another or leaves a "
                             "sentence of %d tokens" % (span, length))
        size = span.end - span.start
        if scheme == BIOES:
            inner = (["S"] if size == 1
                     else ["B"] + ["I"] * (size - 2) + ["E"])
        elif scheme == IOB2:
            inner = ["B"] + ["I"] * (size - 1)
        else:
            # IOB1: B only where an entity of the same type ends right here.
            touches = previous_end == span.start and previous_type == span.type
            inner = ["B" if touches else "I"] + ["I"] * (size - 1)
        for offset, prefix in enumerate(inner):
            tags[span.start + offset] = "%s-%s" % (prefix, span.type)
        previous_end, previous_type = span.end, span.type
    return tags


def convert_tags(tags, source, target=TRAINING_SCHEME):
    """One sentence's tags from scheme `source` to scheme `target`.

    Entities are read leniently (`entity_spans`), then written in `target`
    (`render_tags`), so `convert_tags(convert_tags(t, a, b), b, a) == t` for
    every `t` valid in `a`.

    Args:
      tags: sequence of str.
      source, target: scheme names (target: IOB2 unless given).

    Returns:
      list of str, same length.

    Raises:
      ValueError: a tag is not a `source` tag (readers have checked files
        before; a failure here is a caller's mistake).
    """
    for tag in tags:
        problem = tag_problem(tag, source)
        if problem:
            raise ValueError(problem)
    return render_tags(entity_spans(tags), len(tags), target)


def scheme_labels(types, scheme):
    """The full label list of `scheme` over entity `types`.

    Returns:
      ["O"] followed, for each type in sorted order, by its tags in prefix
      order: scheme_labels(["PER", "LOC"], "iob2") ==
      ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]. Label id 0 is therefore
      always `O`.
    """
    prefixes = _PREFIXES[normalize_scheme(scheme)]
    labels = [OUTSIDE]
    for entity_type in sorted(set(types)):
        labels.extend("%s-%s" % (prefix, entity_type) for prefix in prefixes)
    return labels


def entity_types(tags):
    """The sorted set of entity types among `tags` (any iterable of str)."""
    return sorted({split_tag(tag)[1] for tag in tags if tag != OUTSIDE})
