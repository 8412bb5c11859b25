"""Plain-text corpora -> documents of sentences, for the next-sentence demo.

Three layouts, those of the shared files in `shared/data/pretraining/`:

  sentence_lines  one sentence per line, a blank line between documents
                  (the original's `sample_text.txt`);
  wikitext        WikiText raw: one paragraph per line, a ` = Title = ` line
                  starts an article (a document); ` = = Section = = ` lines
                  are dropped; the ` @-@ `, ` @,@ `, ` @.@ ` escapes become
                  `-`, `,`, `.`;
  gutenberg       a Project Gutenberg e-book: only the text between the
                  `*** START OF ...` and `*** END OF ...` lines is kept;
                  `[Illustration ...]` blocks are dropped (a chapter heading
                  inside one is kept); `_italics_` underscores and `/* ... */`
                  layout marks are removed; centred lines (indented by 8 or
                  more spaces) and table lines (3 or more spaces between
                  words) are dropped; a `CHAPTER <roman
                  numeral>` or `PREFACE` line starts a document and what comes
                  before the first one (title page, dedication) is dropped;
                  hard-wrapped paragraphs are joined, and a paragraph that
                  starts in lower case is joined to the one before (an
                  illustration had cut it).

Paragraphs are split into sentences by `sentence_split.split_sentences`.
Files are read as UTF-8, or as Windows-1252 when they are not UTF-8 (the
shared Gutenberg file is); CRLF line ends are accepted.
"""
import dataclasses
import os
import re
from typing import List

from bert_tf1.data.io.errors import UserError
from demos.next_sentence.sentence_split import split_sentences

__all__ = [
    "Document",
    "LAYOUTS",
    "SHARED_TEXT_FILES",
    "read_corpus_text",
    "documents_from_text",
    "read_documents",
]


@dataclasses.dataclass
class Document:
    """One document of a corpus.

    Attributes:
      doc_id: str, "<source>/<index>", unique over the sources read (index
        0-based in file order).
      title: str, the article title or chapter heading ("" if none).
      sentences: list of str, in text order (short ones included).
    """
    doc_id: str
    title: str
    sentences: List[str]


#: The layouts `documents_from_text` knows.
LAYOUTS = ("sentence_lines", "wikitext", "gutenberg")

#: (file name, layout, source name) of the shared pretraining text.
SHARED_TEXT_FILES = (
    ("sample_text.txt", "sentence_lines", "sample"),
    ("pg1342_pride_and_prejudice.txt", "gutenberg", "pg1342"),
    ("wikitext-2-raw_wiki.test.raw", "wikitext", "wikitext"),
)


def read_corpus_text(path):
    """The text of `path`: UTF-8, else Windows-1252; LF line ends, no BOM.

    Raises:
      UserError: the file is missing, or neither UTF-8 nor Windows-1252.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as reader:
            data = reader.read()
    except FileNotFoundError:
        raise UserError("%s: file not found" % path) from None
    except IsADirectoryError:
        raise UserError("%s: is a directory, expected a text file"
                        % path) from None
    for encoding in ("utf-8", "cp1252"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        raise UserError("%s: neither UTF-8 nor Windows-1252 text" % path)
    text = text.lstrip("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _paragraphs(lines):
    """Joins runs of non-blank lines into paragraphs (whitespace collapsed)."""
    paragraphs, current = [], []
    for line in lines + [""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    return paragraphs


def _sentences(paragraphs):
    return [s for paragraph in paragraphs for s in split_sentences(paragraph)]


def _sentence_line_documents(text):
    documents, lines = [], []
    for line in text.split("\n") + [""]:
        if line.strip():
            lines.append(line)
        elif lines:
            # Each line is a paragraph (and normally one sentence).
            documents.append(("", _sentences(lines)))
            lines = []
    return documents


_WIKI_TITLE = re.compile(r"^ = ([^=].*?) = $")
_WIKI_HEADING = re.compile(r"^ (= )+.*( =)+ $")
_WIKI_ESCAPES = ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", "."))


def _wikitext_documents(text):
    documents = []
    for line in text.split("\n"):
        title = _WIKI_TITLE.match(line)
        if title:
            documents.append((title.group(1).strip(), []))
            continue
        if _WIKI_HEADING.match(line) or not line.strip() or not documents:
            continue
        for escape, plain in _WIKI_ESCAPES:
            line = line.replace(escape, plain)
        documents[-1][1].extend(split_sentences(line))
    return documents


_GUTENBERG_START = re.compile(
    r"^\s*\*\*\* ?START OF (THE|THIS) PROJECT GUTENBERG.*$", re.M)
_GUTENBERG_END = re.compile(
    r"^\s*\*\*\* ?END OF (THE|THIS) PROJECT GUTENBERG.*$", re.M)
# One level of nested brackets: "[Illustration: ... [_Copyright ..._]]".
_ILLUSTRATION = re.compile(r"\[Illustration(?:[^\[\]]|\[[^\[\]]*\])*\]")
_HEADING = re.compile(r"^\s*(CHAPTER\s+[IVXLCDM]+|PREFACE)\b\.?\s*\]?\s*$",
                      re.I | re.M)
_LAYOUT_MARK = re.compile(r"/\*\s*[A-Z]*\s*|\s*\*/")
# Centred lines (title page, colophon) and tables (list of illustrations).
_LAYOUT_LINE = re.compile(r"^ {8,}\S|\S {3,}\S")


def _rejoin(paragraphs):
    """Joins a paragraph starting in lower case to the one before: an
    illustration cut it in two."""
    joined = []
    for paragraph in paragraphs:
        if joined and paragraph[:1].islower():
            joined[-1] += " " + paragraph
        else:
            joined.append(paragraph)
    return joined


def _keep_heading(match):
    heading = _HEADING.search(match.group(0).replace("]", ""))
    return "\n\n%s\n\n" % heading.group(1) if heading else "\n\n"


def _gutenberg_documents(text):
    start = _GUTENBERG_START.search(text)
    if start:
        text = text[start.end():]
    end = _GUTENBERG_END.search(text)
    if end:
        text = text[:end.start()]
    text = _ILLUSTRATION.sub(_keep_heading, text)
    text = _LAYOUT_MARK.sub("", text).replace("_", "")
    documents = []
    lines = []

    def close():
        if documents:
            documents[-1][1].extend(_sentences(_rejoin(_paragraphs(lines))))
        lines.clear()

    for line in text.split("\n"):
        heading = _HEADING.match(line)
        if heading:
            close()
            documents.append((" ".join(heading.group(1).split()), []))
        elif not _LAYOUT_LINE.search(line):
            lines.append(line)
    close()
    return documents


_LAYOUT_READERS = {"sentence_lines": _sentence_line_documents,
                   "wikitext": _wikitext_documents,
                   "gutenberg": _gutenberg_documents}


def documents_from_text(text, layout, source):
    """Splits a corpus text into documents of sentences.

    Args:
      text: str, the whole file (LF line ends).
      layout: one of LAYOUTS (see the module docstring).
      source: str, the prefix of every doc_id (e.g. "wikitext").

    Returns:
      list of Document in text order; documents without sentences are
      dropped (their index is still used, so ids follow the file).

    Raises:
      ValueError: an unknown layout.
    """
    if layout not in _LAYOUT_READERS:
        raise ValueError("unknown corpus layout %r (expected one of %s)" % (
            layout, ", ".join(LAYOUTS)))
    return [Document(doc_id="%s/%d" % (source, index), title=title,
                     sentences=sentences)
            for index, (title, sentences)
            in enumerate(_LAYOUT_READERS[layout](text)) if sentences]


def read_documents(path, layout, source=None):
    """Reads one corpus file into documents (`documents_from_text`).

    Args:
      path: str or os.PathLike, a local file.
      layout: one of LAYOUTS.
      source: str, the doc_id prefix (default: the file name).

    Returns:
      list of Document.

    Raises:
      UserError: see `read_corpus_text`.
    """
    path = os.fspath(path)
    return documents_from_text(read_corpus_text(path), layout,
                               source or os.path.basename(path))
