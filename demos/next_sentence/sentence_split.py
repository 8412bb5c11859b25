"""A small, documented sentence splitter for the next-sentence demo task.

Rule: a sentence ends at a run of `.`, `?` or `!`, optionally followed by
closing quotes or brackets, when whitespace and then (after optional
opening quotes or brackets) an upper-case letter follow. A `.` does not end
a sentence after a title abbreviation (`ABBREVIATIONS`, e.g. "Mr."), a
single letter (an initial, "J. Smith") or a dotted initialism ("U.S.").
Whitespace inside a sentence is collapsed to single spaces.

This is not the splitter the original create_pretraining_data.py input was
made with (its input files are already one sentence per line); it only has
to be simple, deterministic and good enough to pair a sentence with the
next one.
"""
import re

__all__ = ["ABBREVIATIONS", "split_sentences", "count_words"]

#: Words that end with "." without ending a sentence (compared without the
#: dot, case-sensitive).
ABBREVIATIONS = frozenset([
    "Mr", "Mrs", "Ms", "Messrs", "Mme", "Mlle", "Dr", "St", "Jr", "Sr",
    "Prof", "Rev", "Hon", "Capt", "Col", "Gen", "Lt", "Sgt", "Maj", "Gov",
    "Mt", "Ft", "Sen", "Rep", "Adm", "Cpl", "Pte",
])

_CLOSERS = "\"'\u201d\u2019)]"
_CANDIDATE = re.compile(r"[.?!]+[\"'\u201d\u2019)\]]*(\s+)")
_OPENERS = "\"'\u201c\u2018(["
_INITIALISM = re.compile(r"^(?:[A-Za-z]\.)*[A-Za-z]$")


def _is_abbreviation(text_before_dot):
    match = re.search(r"(\S+)$", text_before_dot)
    if not match:  # "actor ." (WikiText spacing) ends a sentence.
        return False
    word = match.group(1).lstrip(_OPENERS)
    return word in ABBREVIATIONS or bool(_INITIALISM.match(word))


def _starts_sentence(text, start):
    """True when text[start:] begins (after openers) with a capital."""
    position = start
    while position < len(text) and text[position] in _OPENERS:
        position += 1
    return position < len(text) and text[position].isupper()


def split_sentences(text):
    """Splits a paragraph into sentences (see the module docstring).

    Args:
      text: str, one paragraph (line breaks count as spaces).

    Returns:
      list of str, the non-empty sentences in order, each stripped and with
      whitespace runs collapsed to one space.
    """
    text = " ".join(text.split())
    sentences = []
    begin = 0
    for match in _CANDIDATE.finditer(text):
        end_of_sentence = match.start(1)
        if not _starts_sentence(text, match.end()):
            continue
        # Only a lone "." can follow an abbreviation ("Mr.", not "Mr.?").
        punctuation = match.group(0).rstrip().rstrip(_CLOSERS)
        if punctuation == "." and _is_abbreviation(
                text[begin:match.start()]):
            continue
        sentences.append(text[begin:end_of_sentence])
        begin = match.end()
    sentences.append(text[begin:])
    return [s.strip() for s in sentences if s.strip()]


def count_words(sentence):
    """The number of whitespace-separated words holding a letter or digit
    (WikiText's spaced-out punctuation " , " is not a word)."""
    return sum(1 for word in sentence.split()
               if any(char.isalnum() for char in word))
