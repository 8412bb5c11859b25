"""Reading a whole text file as UTF-8, with errors that name the file.

Users hand over what they downloaded: a `.zip` or `.gz` of the data, or a
file in another encoding. Python's own error (`UnicodeDecodeError: 'utf-8'
codec can't decode byte 0x8b in position 1`) names neither the file nor
what to do; these errors do. TF-free for local paths; gs:// paths go
through tf.io.gfile, as the original's tf.gfile.
"""
import dataclasses
import os

from data.io.errors import UserError

__all__ = ["TextFileError", "TextRange", "archive_hint", "file_size",
           "iter_lines", "open_file", "read_utf8_text"]

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
    """A message when `head` (a file's first bytes) starts an archive, else None.

    E.g. "x.zip: is a zip archive, expected UTF-8 text; unzip it first and
    pass the extracted file".
    """
    for magic, kind, action in _ARCHIVES:
        if head.startswith(magic):
            return ("%s: is %s, expected %s; %s first and pass the extracted "
                    "file" % (path, kind, expected, action))
    return None


def _read_bytes(path):
    if "://" in path:
        import tensorflow as tf  # Only remote paths need TensorFlow.
        with tf.io.gfile.GFile(path, "rb") as reader:
            return reader.read()
    with open(path, "rb") as reader:
        return reader.read()


def read_utf8_text(path, expected="UTF-8 text"):
    """The content of `path` decoded as UTF-8.

    Args:
      path: str or os.PathLike (local or gs://).
      expected: what the file should hold, for the message (e.g. "SQuAD
        JSON").

    Returns:
      str.

    Raises:
      TextFileError: the file is a zip/gzip/bzip2/xz/7z archive (the message
        says to extract it), or is not valid UTF-8 (the message gives the
        line and byte offset).
      FileNotFoundError: no file at `path`.
    """
    path = os.fspath(path)
    data = _read_bytes(path)
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
    # Built-in open for local files (fast line iteration); tf.io.gfile for
    # remote ones (gs://, ...), which the original also reads.
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

    Lines end at b"\\n" only, like GFile.readline (a lone "\\r" stays inside
    the line, where the tokenizer treats it as a space).

    Raises:
      TextFileError: a line is not valid UTF-8; the message names the file and
        line number (a zip/gzip archive: says to extract it).
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
