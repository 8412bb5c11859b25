"""Reading a whole text file as UTF-8, with errors that name the file.

A downloaded `.zip`/`.gz` or another encoding gives a `TextFileError` naming
the file and what to do (Python's UnicodeDecodeError names neither). TF-free
for local paths; gs:// through tf.io.gfile, as the original's tf.gfile.
"""
import dataclasses
import json
import os

from bert_tf1.data.io.errors import UserError

# Leading bytes of archive formats people download data sets in.
_ARCHIVES = (
    (b"PK\x03\x04", "a zip archive", "unzip it"),
    (b"\x1f\x8b", "a gzip file", "gunzip it"),
    (b"BZh", "a bzip2 file", "bunzip2 it"),
    (b"\xfd7zXZ\x00", "an xz file", "unxz it"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive", "extract it"),
)


class TextFileError(UserError):
    """A file that should be UTF-8 text is an archive or another encoding."""


def archive_hint(path, head, expected="UTF-8 text"):
    """A message when `head` (a file's first bytes) starts an archive, else
    None: "x.zip: is a zip archive, expected UTF-8 text; unzip it first..."."""
    for magic, kind, action in _ARCHIVES:
        if head.startswith(magic):
            return ("%s: is %s, expected %s; %s first and pass the extracted "
                    "file" % (path, kind, expected, action))
    return None


def read_utf8_text(path, expected="UTF-8 text", data=None):
    """The content of `path` (or `data`, bytes read from it) as UTF-8.

    `expected` says what the file should hold, for the message.

    Raises:
      TextFileError: an archive (says to extract it), or not UTF-8 (gives
        the line and byte offset).
      FileNotFoundError: no file at `path`.
    """
    path = os.fspath(path)
    if data is None:
        with open_file(path, "rb") as reader:
            data = reader.read()
    hint = archive_hint(path, data[:8], expected)
    if hint:
        raise TextFileError(hint)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise TextFileError(
            "%s, line %d (byte %d): not UTF-8 text (%s); expected %s saved "
            "as UTF-8" % (path, line, error.start, error.reason, expected)
        ) from None


def read_user_text(path, expected, error, missing, missing_error=None):
    """`read_utf8_text(path, expected)`, a leading BOM dropped.

    Raises:
      error (a UserError class): an archive, not UTF-8, or unreadable.
      missing_error (default `error`): no file at `path` (also gs://), with
        the message `missing`.
    """
    try:
        text = read_utf8_text(path, expected)
    except TextFileError as err:
        raise error(str(err)) from None
    except FileNotFoundError:
        raise (missing_error or error)(missing) from None
    except OSError as err:  # A directory, no permission.
        raise error("%s: cannot be read (%s)" % (
            path, err.strerror or err)) from None
    except Exception as err:  # tf.errors.NotFoundError for gs:// paths.
        if type(err).__name__ == "NotFoundError":
            raise (missing_error or error)(missing) from None
        raise
    return text[1:] if text.startswith("\ufeff") else text


def read_json(path, expected="a JSON file", text=None):
    """`json.loads` of the UTF-8 text of `path` (or of `text`, read from it).

    Raises:
      UserError: not valid JSON (names the file, line and column).
      TextFileError, FileNotFoundError: as `read_utf8_text`.
    """
    if text is None:
        text = read_utf8_text(path, expected)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError("%s: not valid JSON (line %d, column %d): %s" % (
            path, error.lineno, error.colno, error.msg)) from None


@dataclasses.dataclass(frozen=True)
class TextRange:
    """A run of whole lines of one file.

    Attributes:
      path: str, the file.
      start: int, byte offset of the first line.
      end: int or None, byte offset just after the last line (None: to the
        end of the file).
      first_line: int, 1-based line number of the first line (for errors).
    """
    path: str
    start: int = 0
    end: int = None
    first_line: int = 1


def open_file(path, mode="rb"):
    """`open(path, mode)` for local paths, `tf.io.gfile.GFile` for remote ones."""
    if "://" in path:
        import tensorflow as tf  # Only remote paths need TensorFlow.

        return tf.io.gfile.GFile(path, mode)
    return open(path, mode)


def file_size(path):
    """Size of `path` in bytes."""
    if "://" not in path:
        return os.path.getsize(path)
    import tensorflow as tf  # Only remote paths need TensorFlow.

    return tf.io.gfile.stat(path).length


def iter_lines(text_range):
    """Yields the decoded lines of a TextRange (line ends kept).

    Lines end at b"\\n" only, like GFile.readline.

    Raises:
      TextFileError: a line is not valid UTF-8 (names file and line; an
        archive: says to extract it).
    """
    with open_file(text_range.path, "rb") as reader:
        reader.seek(text_range.start)
        position = text_range.start
        line_number = text_range.first_line
        while text_range.end is None or position < text_range.end:
            raw = reader.readline()
            if not raw:
                break
            position += len(raw)
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as error:
                hint = position == len(raw) and archive_hint(
                    text_range.path, raw[:8], "a UTF-8 text corpus")
                raise TextFileError(
                    hint or "%s:%d: the line is not valid UTF-8 (%s)"
                    % (text_range.path, line_number, error)) from None
            line_number += 1
