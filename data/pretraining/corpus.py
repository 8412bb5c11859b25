"""Reading the pre-training text corpus, whole or in shards.

The original (create_pretraining_data.py) reads every input file with
`tf.gfile.GFile(...).readline()` and keeps the whole corpus in memory. Here a
corpus can also be cut into shards (byte ranges of the input files, cut only
after a blank line or at the end of a file) that are processed one by one or
by several processes, so input larger than memory works. With one shard the
lines are exactly the original's.
"""
import codecs
import dataclasses

import tensorflow as tf

from data.io.text_files import archive_hint


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


def _open(path, mode):
    # Built-in open for local files (fast line iteration); tf.io.gfile for
    # remote ones (gs://, ...), which the original also reads.
    if "://" in path:
        return tf.io.gfile.GFile(path, mode)
    return open(path, mode)


def file_size(path):
    """Size of `path` in bytes."""
    return tf.io.gfile.stat(path).length


def iter_lines(text_range):
    """Yields the decoded lines of a TextRange (line ends kept).

    Lines end at b"\\n" only, like GFile.readline (a lone "\\r" stays inside
    the line, where the tokenizer treats it as a space).

    Raises:
      ValueError: a line is not valid UTF-8; the message names the file and
        line number (a zip/gzip archive: says to extract it).
    """
    with _open(text_range.path, "rb") as reader:
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
                raise ValueError(hint or "%s:%d: the line is not valid UTF-8 (%s)"
                                 % (text_range.path, line_number, error)
                                 ) from None
            line_number += 1


def check_utf8(paths, block_size=16 << 20):
    """Raises iter_lines' error for the first input that is not UTF-8.

    For runners that must reject bad input before they start (the Beam
    pipeline): the files are decoded in blocks at C speed, and only a file
    that fails is read again with iter_lines, so the message (file, line,
    archive hint) is exactly the one the local pipeline gives.

    Args:
      paths: list of str, the input files (local or gs://).
      block_size: int, bytes read at a time.

    Raises:
      ValueError: as iter_lines.
    """
    for path in paths:
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            with _open(path, "rb") as reader:
                while True:
                    block = reader.read(block_size)
                    decoder.decode(block, final=not block)
                    if not block:
                        break
        except UnicodeDecodeError as error:
            # A line break never falls inside a UTF-8 sequence, so the file
            # fails line by line exactly where it fails as a whole.
            for _ in iter_lines(TextRange(path)):
                pass
            raise ValueError("%s: not valid UTF-8 (%s)" % (path, error)
                             ) from None


def iter_shard_lines(shard):
    """Yields the lines of every TextRange of a shard, in order.

    As in the original, reaching the next file does not start a new
    document: only a blank line does.
    """
    for text_range in shard:
        yield from iter_lines(text_range)


def shard_size(shard):
    """Number of bytes in a shard (list of TextRange)."""
    total = 0
    for text_range in shard:
        end = (file_size(text_range.path) if text_range.end is None
               else text_range.end)
        total += end - text_range.start
    return total


def plan_shards(input_files, shard_size_bytes):
    """Cuts the input files into shards of about shard_size_bytes.

    A shard is closed once it holds at least shard_size_bytes, after the
    next blank line (a document boundary) or at the end of a file,
    whichever comes first. A document longer than shard_size_bytes stays
    whole, in one shard.

    Args:
      input_files: list of str.
      shard_size_bytes: int; 0 or less means one shard with everything
        (the original's behaviour; no scan of the files).

    Returns:
      list of shards, each a list of TextRange, in input order; at least one
      shard (possibly of empty files).
    """
    if shard_size_bytes <= 0:
        return [[TextRange(path) for path in input_files]]
    shards = []
    current = []
    current_bytes = 0
    for path in input_files:
        start = 0
        start_line = 1
        position = 0
        line_number = 0
        with _open(path, "rb") as reader:
            for raw in reader:
                position += len(raw)
                line_number += 1
                # bytes.strip() only knows ASCII whitespace: a line of other
                # Unicode spaces is never cut at, which is safe (it only
                # delays the cut to the next ASCII-blank line).
                if (current_bytes + position - start >= shard_size_bytes
                        and not raw.strip()):
                    current.append(TextRange(path, start, position,
                                             start_line))
                    shards.append(current)
                    current, current_bytes = [], 0
                    start, start_line = position, line_number + 1
        if position > start:
            current.append(TextRange(path, start, position, start_line))
            current_bytes += position - start
        if current_bytes >= shard_size_bytes:
            shards.append(current)
            current, current_bytes = [], 0
    if current or not shards:
        shards.append(current)
    return shards
