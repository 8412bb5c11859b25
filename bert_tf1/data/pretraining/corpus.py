"""Reading the pre-training text corpus, whole or in shards.

The original reads every input file whole into memory; here a corpus can be
cut into shards (byte ranges cut after a blank line or at a file's end), so
input larger than memory works. With one shard the lines are the original's.
"""
import codecs

from bert_tf1.data.io.text_files import (TextFileError, TextRange,  # noqa: F401
                                file_size, iter_lines, open_file)


def check_utf8(paths, block_size=16 << 20):
    """Raises iter_lines' error for the first input that is not UTF-8.

    Decodes in blocks; a failing file is read again with iter_lines for the
    local pipeline's message (file, line).

    Raises:
      TextFileError: as iter_lines.
    """
    for path in paths:
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            with open_file(path, "rb") as reader:
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
            raise TextFileError("%s: not valid UTF-8 (%s)" % (path, error)
                                ) from None


def iter_shard_lines(shard):
    """Yields the lines of every TextRange of a shard, in order."""
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

    A shard closes at the first blank line or file end after
    shard_size_bytes.

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
        with open_file(path, "rb") as reader:
            for raw in reader:
                position += len(raw)
                line_number += 1
                # ASCII-blank lines only (others merely delay the cut).
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
