"""The in-memory form of a tagged file: documents of sentences of words,
with each word's line and each document's path for error messages.
"""
import dataclasses
from typing import Optional, Tuple

from bert_tf1.data.tagging import schemes


@dataclasses.dataclass(frozen=True)
class Word:
    """One token of a tagged file.

    Attributes:
      text: str, the token as in the file (no cleaning).
      tag: str, e.g. "B-PER"; None when read without tags.
      line: int, 1-based line number in the file.
    """
    text: str
    tag: Optional[str]
    line: int


@dataclasses.dataclass(frozen=True)
class Sentence:
    """A non-empty tuple of Word (the lines between two blank lines)."""
    words: Tuple[Word, ...]

    @property
    def tokens(self):
        """list of str, the words' texts."""
        return [word.text for word in self.words]

    @property
    def tags(self):
        """list of str (or None entries when read without tags)."""
        return [word.tag for word in self.words]

    @property
    def line(self):
        """int, the line of the first word."""
        return self.words[0].line

    def with_tags(self, tags):
        """A copy whose words carry `tags` (a sequence of len(words))."""
        if len(tags) != len(self.words):
            raise ValueError("%d tags for a sentence of %d words (line %d)"
                             % (len(tags), len(self.words), self.line))
        return Sentence(tuple(dataclasses.replace(word, tag=tag)
                              for word, tag in zip(self.words, tags)))

    def __len__(self):
        return len(self.words)


@dataclasses.dataclass(frozen=True)
class Document:
    """Sentences that share context (one `-DOCSTART-` / `# newdoc` section,
    or a single sentence in a file without document markers).

    Attributes:
      sentences: tuple of Sentence (not empty).
      path: str, the file it was read from.
      doc_id: str or None, e.g. UNER's `# newdoc id = batch-0000`.
    """
    sentences: Tuple[Sentence, ...]
    path: str
    doc_id: Optional[str] = None

    @property
    def words(self):
        """list of Word, all sentences in order."""
        return [word for sentence in self.sentences for word in sentence.words]

    @property
    def num_words(self):
        return sum(len(sentence) for sentence in self.sentences)

    @property
    def line(self):
        """int, the line of the first word."""
        return self.sentences[0].line

    def with_tags(self, tags):
        """A copy with new tags: `tags[s][w]` for word w of sentence s."""
        if len(tags) != len(self.sentences):
            raise ValueError("tags for %d sentences, the document at %s line "
                             "%d has %d" % (len(tags), self.path, self.line,
                                            len(self.sentences)))
        return dataclasses.replace(self, sentences=tuple(
            sentence.with_tags(sentence_tags)
            for sentence, sentence_tags in zip(self.sentences, tags)))


def convert_documents(documents, source, target=schemes.TRAINING_SCHEME):
    """list of Document with every sentence's tags converted from `source`
    to `target` (schemes.convert_tags); untagged documents unchanged."""
    if schemes.normalize_scheme(source) == schemes.normalize_scheme(target):
        return list(documents)
    converted = []
    for document in documents:
        if any(word.tag is None for word in document.words):
            converted.append(document)
            continue
        converted.append(document.with_tags([
            schemes.convert_tags(sentence.tags, source, target)
            for sentence in document.sentences]))
    return converted


def all_tags(documents):
    """Every tag of `documents`, in file order (None entries skipped)."""
    return [word.tag for document in documents for word in document.words
            if word.tag is not None]
