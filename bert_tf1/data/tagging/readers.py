"""Reading tagged files (`--data_format` conll, uner, chinese_bio) into
documents of sentences of words, each with its line number (layouts and
rules: docs/tagging.md); errors are `TaggingFileError`s naming file and line.
"""
import os
import re

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.io.text_files import read_user_text
from bert_tf1.data.tagging import schemes
from bert_tf1.data.tagging.documents import Document, Sentence, Word

DATA_FORMATS = ("conll", "uner", "chinese_bio")
DOCSTART = "-DOCSTART-"

_LAYOUTS = {
    "conll": "conll format: TOKEN first, TAG last, separated by a TAB or "
             "spaces",
    "uner": "uner format: TAB-separated INDEX, TOKEN, TAG, ...",
    "chinese_bio": "chinese_bio format: one character and its TAG per line",
}
_NEWDOC = re.compile(r"#\s*newdoc\b(?:\s+id\s*=\s*(.*))?")


class TaggingFileError(UserError):
    """A tagged file is unreadable or has a bad line (the message names the
    file and line)."""


def _columns(line):
    """Fields of a conll/chinese_bio line: TAB-separated if it has a TAB."""
    if "\t" in line:
        return line.split("\t")
    return [field for field in line.split(" ") if field]


def _read_lines(path):
    text = read_user_text(path, "a UTF-8 tagged text file", TaggingFileError,
                          "%s: no such file" % path)
    if not text.strip():
        raise TaggingFileError("%s: the file is empty; expected tagged "
                               "sentences" % path)
    # Not splitlines: U+2028, U+0085 may sit inside tokens of web text.
    return [line.rstrip("\r") for line in text.split("\n")]


class _Parser:
    """Turns the lines of one file into documents (state of one read)."""

    def __init__(self, path, data_format, scheme, has_tags):
        self.path = path
        self.data_format = data_format
        self.scheme = scheme
        self.has_tags = has_tags
        self.columns = None  # Column count of the first token line.
        self.first_columns_line = None
        self.sections = [[None, []]]  # [doc_id, [Sentence]] per document.
        self.words = []
        self.has_markers = False

    def fail(self, number, message):
        raise TaggingFileError("%s, line %d: %s" % (self.path, number,
                                                    message))

    def end_sentence(self):
        if self.words:
            self.sections[-1][1].append(Sentence(tuple(self.words)))
            self.words = []

    def start_document(self, doc_id=None):
        self.end_sentence()
        self.has_markers = True
        self.sections.append([doc_id, []])

    def check_columns(self, number, fields, minimum, maximum=None):
        count = len(fields)
        if count < minimum or (maximum is not None and count > maximum):
            wanted = ("%d" % minimum if maximum == minimum else
                      "%d or more" % minimum if maximum is None else
                      "%d to %d" % (minimum, maximum))
            self.fail(number, "%d column%s (%r); expected %s columns (%s)%s"
                      % (count, "" if count == 1 else "s",
                         "\t".join(fields)[:80], wanted,
                         _LAYOUTS[self.data_format],
                         "" if self.has_tags else ", read without tags"))
        if self.columns is None:
            self.columns, self.first_columns_line = count, number
        elif count != self.columns:
            self.fail(number, "%d columns, but line %d has %d; every token "
                      "line must have the same columns (%s)" % (
                          count, self.first_columns_line, self.columns,
                          _LAYOUTS[self.data_format]))

    def add_word(self, number, token, tag):
        if not token:
            self.fail(number, "empty token; expected %s"
                      % _LAYOUTS[self.data_format])
        if self.has_tags:
            tag = tag.strip()
            problem = schemes.tag_problem(tag, self.scheme)
            if problem:
                self.fail(number, problem + " (the file was declared %s)"
                          % self.scheme)
        else:
            tag = None
        self.words.append(Word(token, tag, number))

    def line(self, number, line):
        if not line.strip():
            self.end_sentence()
            return
        if self.data_format == "uner":
            self.uner_line(number, line)
            return
        fields = _columns(line.rstrip(" \t"))
        if self.data_format == "conll" and fields[0] == DOCSTART:
            self.start_document()
            return
        tag_columns = 1 if self.has_tags else 0
        maximum = 2 if self.data_format == "chinese_bio" else None
        self.check_columns(number, fields, 1 + tag_columns, maximum)
        self.add_word(number, fields[0], fields[-1])

    def uner_line(self, number, line):
        if line.startswith("#"):
            marker = _NEWDOC.match(line.rstrip())
            if marker:
                doc_id = marker.group(1)
                self.start_document(doc_id.strip() if doc_id else None)
            return
        fields = line.rstrip(" \t").split("\t")
        self.check_columns(number, fields, 3 if self.has_tags else 2)
        index = fields[0].strip()
        if "-" in index or "." in index:
            return  # A CoNLL-U multiword range or empty node: not a word.
        if not index.isdigit():
            self.fail(number, "column 1 is %r, expected the word index "
                      "(%s)" % (fields[0][:40], _LAYOUTS["uner"]))
        self.add_word(number, fields[1], fields[2] if self.has_tags else "")

    def finish(self):
        self.end_sentence()
        documents = []
        for doc_id, sentences in self.sections:
            if not sentences:
                continue
            if self.has_markers:
                documents.append(Document(tuple(sentences), self.path, doc_id))
            else:
                documents.extend(Document((sentence,), self.path)
                                 for sentence in sentences)
        if not documents:
            raise TaggingFileError("%s: no token lines; expected %s" % (
                self.path, _LAYOUTS[self.data_format]))
        return documents


def _check_sequences(documents, scheme):
    for document in documents:
        for sentence in document.sentences:
            problem = schemes.sequence_problem(sentence.tags, scheme)
            if problem:
                index, message = problem
                raise TaggingFileError("%s, line %d: %s" % (
                    document.path, sentence.words[index].line, message))


def read_tagged_file(path, data_format="conll", scheme=schemes.IOB2,
                     has_tags=True, check_sequences=True):
    """Reads a tagged (or, for prediction, untagged) file.

    Args:
      path: str or os.PathLike (local or gs://).
      data_format: one of DATA_FORMATS.
      scheme: the file's tag scheme; every tag must be one of its tags.
      has_tags: False to read only the tokens (tags None).
      check_sequences: reject sentences breaking `scheme`
        (schemes.sequence_problem).

    Returns:
      list of Document in file order, every Word with its 1-based line.

    Raises:
      TaggingFileError: naming the file and line: missing, not UTF-8,
        empty, bad column counts, an empty token, a bad tag or sequence.
      ValueError: an unknown data_format or scheme.
    """
    path = os.fspath(path)
    if data_format not in DATA_FORMATS:
        raise ValueError("unknown data_format %r; expected one of %s" % (
            data_format, ", ".join(DATA_FORMATS)))
    scheme = schemes.normalize_scheme(scheme)
    parser = _Parser(path, data_format, scheme, has_tags)
    for number, line in enumerate(_read_lines(path), start=1):
        parser.line(number, line)
    documents = parser.finish()
    if has_tags and check_sequences:
        _check_sequences(documents, scheme)
    return documents
