"""Tag schemes (IOB1, IOB2/BIO, BIOES): checks, entity spans, conversion.

A tag is `O` or `<prefix>-<TYPE>` (`B-PER`, `I-creative-work`). IOB1 (the
original CoNLL-2003 files): `B-X` only starts an entity right after another
of type X; IOB2: every entity starts with `B-X`; BIOES: `S-X` one-token
entities, `B-X I-X ... E-X` longer ones. Entities are read with conlleval's
chunk rules (`entity_spans`), which never fail, so conversion is tags ->
spans -> tags. `sequence_problem` rejects, in gold files only: for IOB2 an
`I-X` opening an entity (an IOB1 file declared IOB2); for BIOES every broken
transition; nothing for IOB1.
"""
import collections

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
    """One of SCHEMES for a case-insensitive name or alias ("bio", "iobes").

    Raises:
      ValueError: an unknown name.
    """
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in SCHEMES:
        raise ValueError("unknown tag scheme %r; expected one of %s (or bio, "
                         "iobes)" % (name, ", ".join(SCHEMES)))
    return key


def split_tag(tag):
    """(prefix, type): ("O", None), ("B", "PER"); split at the first `-`."""
    if tag == OUTSIDE:
        return OUTSIDE, None
    prefix, _, entity_type = tag.partition("-")
    return prefix, entity_type


def tag_problem(tag, scheme):
    """None, or why `tag` is not a tag of `scheme` (a str message)."""
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
    """None, or (index, message) of the first tag of one sentence that
    breaks `scheme`'s transitions (tags already pass `tag_problem`)."""
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


def entity_spans(tags):
    """list of Entity(type, start, end) of one sentence's tags, in order.

    Source: `startOfChunk`/`endOfChunk` of the CoNLL-2000 `conlleval` script
    (BIOES as seqeval extends them); reads any sequence, valid or not.
    """
    spans = []
    previous = (OUTSIDE, None)
    start = 0
    for index, tag in enumerate(list(tags) + [OUTSIDE]):
        current = split_tag(tag)
        other_type = current[1] != previous[1]
        # endOfChunk, then startOfChunk (E and S: seqeval's extension).
        if previous[0] != OUTSIDE and (previous[0] in ("E", "S") or other_type
                                       or current[0] in ("B", "S", OUTSIDE)):
            spans.append(Entity(previous[1], start, index))
        if current[0] != OUTSIDE and (current[0] in ("B", "S") or other_type
                                      or previous[0] in (OUTSIDE, "E", "S")):
            start = index
        previous = current
    return spans


def render_tags(spans, length, scheme):
    """list of `length` tags in `scheme` holding `spans` (Entity iterable).

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
    """One sentence's tags (list of str) from scheme `source` to `target`,
    through `entity_spans` and `render_tags`.

    Raises:
      ValueError: a tag is not a `source` tag.
    """
    for tag in tags:
        problem = tag_problem(tag, source)
        if problem:
            raise ValueError(problem)
    return render_tags(entity_spans(tags), len(tags), target)


def scheme_labels(types, scheme):
    """["O"] then each sorted type's tags in prefix order, e.g.
    ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"] (label id 0 is `O`)."""
    prefixes = _PREFIXES[normalize_scheme(scheme)]
    labels = [OUTSIDE]
    for entity_type in sorted(set(types)):
        labels.extend("%s-%s" % (prefix, entity_type) for prefix in prefixes)
    return labels


def entity_types(tags):
    """The sorted set of entity types among `tags` (any iterable of str)."""
    return sorted({split_tag(tag)[1] for tag in tags if tag != OUTSIDE})
