"""Checking TFRecord files record by record, and naming the one that is bad.

A TFRecord file is a sequence of records, each framed as

    uint64 length | uint32 masked CRC32C of length | data | uint32 masked CRC32C of data

(little-endian; tensorflow/core/lib/io/record_writer.cc). TensorFlow checks
both CRCs while reading, but its error (`DataLossError: corrupted record at
<offset>`) names neither the file nor the record, and a file cut short in
the middle of a record is read without any error: the partial record is
silently dropped.

Here:
  * `scan_record_files` (the pre-check): when the files total less than
    `SCAN_LIMIT_BYTES` (1 GB), every file's framing is walked to its last
    byte (a file that ends inside a record is named, with the record's
    index) and every record's CRCs are verified (by TensorFlow's own reader,
    at C++ speed);
  * `naming_record_errors` (at run time, for larger inputs or files that
    changed after the check): turns TensorFlow's `DataLossError` into
    `RecordFileCorruptError` naming the file, the record index and its
    offset, and a parse error into one naming the files.
"""
import contextlib
import mmap
import os
import re
import struct

from data.io.errors import cut_list
from data.io.tfrecord import RecordFormatError

__all__ = ["SCAN_LIMIT_BYTES", "RecordFileCorruptError", "check_record_file",
           "locate_record", "masked_crc32c", "naming_record_errors",
           "scan_record_files"]

SCAN_LIMIT_BYTES = 1 << 30
_HEADER = struct.Struct("<QI")
_FOOTER_BYTES = 4
_OFFSET_PATTERN = re.compile(r"(?:corrupted|truncated) record at (\d+)")


class RecordFileCorruptError(RecordFormatError):
    """A TFRecord file is damaged: cut short, or a record fails its CRC."""


def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    """CRC-32C (Castagnoli) of `data` (bytes); pure Python, for short data."""
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """The masked CRC TFRecord framing stores (tensorflow/core/lib/hash/crc32c.h)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _size(path):
    if "://" in path:
        import tensorflow as tf
        return tf.io.gfile.stat(path).length
    return os.path.getsize(path)


def _walk(path):
    """Yields (index, offset, length) of each framed record of a local file.

    Raises:
        RecordFileCorruptError: the file ends inside a record, or a length
            field fails its CRC (the framing cannot be followed).
    """
    size = os.path.getsize(path)
    if size == 0:
        return
    with open(path, "rb") as reader, mmap.mmap(reader.fileno(), 0,
                                               access=mmap.ACCESS_READ) as data:
        offset = index = 0
        while offset < size:
            if offset + _HEADER.size > size:
                raise _cut_short(path, index, offset, size)
            length, length_crc = _HEADER.unpack_from(data, offset)
            if masked_crc32c(data[offset:offset + 8]) != length_crc:
                raise RecordFileCorruptError(
                    f"{path}: record {index} (byte offset {offset}) is "
                    "corrupt: its length field fails its checksum. The file "
                    "is damaged; write or copy it again.")
            end = offset + _HEADER.size + length + _FOOTER_BYTES
            if end > size:
                raise _cut_short(path, index, offset, size)
            yield index, offset, length
            offset = end
            index += 1


def _cut_short(path, index, offset, size):
    return RecordFileCorruptError(
        f"{path}: the file ends inside record {index} (byte offset {offset}; "
        f"the file has {size} bytes): it was cut short, e.g. by an "
        "interrupted copy or write. Write or copy it again.")


def locate_record(path, offset):
    """(index, start) of the record at byte `offset` of a local file.

    TensorFlow reports a record by the offset of its header (a bad length
    CRC) or of its data (a bad data CRC, 12 bytes further); both are found.
    Follows the length fields only (no CRC), so it reaches a damaged record
    as long as the records before it are intact.

    Returns:
        (int, int), or None when no record starts at or 12 bytes before
        `offset`.
    """
    for start in (offset, offset - _HEADER.size):
        index = _index_at(path, start)
        if index is not None:
            return index, start
    return None


def _index_at(path, offset):
    size = os.path.getsize(path)
    with open(path, "rb") as reader:
        start = index = 0
        while start < offset and start + _HEADER.size <= size:
            reader.seek(start)
            length, _ = _HEADER.unpack(reader.read(_HEADER.size))
            start += _HEADER.size + length + _FOOTER_BYTES
            index += 1
    return index if start == offset else None


def _record_is_damaged(path, offset):
    """True when the record at `offset` fails its length or data CRC."""
    with open(path, "rb") as reader:
        reader.seek(offset)
        header = reader.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return True
        length, length_crc = _HEADER.unpack(header)
        if masked_crc32c(header[:8]) != length_crc:
            return True
        data = reader.read(length)
        footer = reader.read(_FOOTER_BYTES)
    if len(data) < length or len(footer) < _FOOTER_BYTES:
        return True
    return masked_crc32c(data) != struct.unpack("<I", footer)[0]


def _tf_verify_crcs(path):
    """Reads every record with TensorFlow (both CRCs checked, C++ speed).

    Returns:
        None, or the byte offset TensorFlow reports as corrupt.
    """
    import tensorflow as tf

    try:
        # Batched: a reduce step per record costs more than reading it.
        tf.data.TFRecordDataset(path, buffer_size=8 << 20).batch(1024).reduce(
            tf.constant(0, tf.int64),
            lambda count, records: count + tf.size(records, tf.int64))
    except tf.errors.DataLossError as error:
        match = _OFFSET_PATTERN.search(str(error))
        return int(match.group(1)) if match else -1
    return None


def check_record_file(path):
    """Walks every record of one TFRecord file: framing and both CRCs.

    Raises:
        RecordFileCorruptError: the file ends inside a record, or a record
            fails a CRC (names the file, the record index and its offset).
    """
    path = os.fspath(path)
    if "://" not in path:
        for _ in _walk(path):
            pass
    offset = _tf_verify_crcs(path)
    if offset is not None:
        raise _corrupt_at(path, offset)


def _corrupt_at(path, offset):
    found = locate_record(path, offset) if "://" not in path and offset >= 0 else None
    where = (f"record {found[0]} (byte offset {found[1]})" if found
             else f"the record at byte offset {offset}" if offset >= 0
             else "a record")
    return RecordFileCorruptError(
        f"{path}: {where} is corrupt: it fails its checksum. The file "
        "is damaged; write or copy it again.")


def scan_record_files(paths, limit_bytes=SCAN_LIMIT_BYTES):
    """The pre-check: every record of every file, when they are small enough.

    Args:
        paths: TFRecord file paths.
        limit_bytes: scan only when the files total less than this (the scan
            reads every byte once); above it, run-time errors still name the
            file and record (`naming_record_errors`).

    Returns:
        bool, True when the files were scanned.

    Raises:
        RecordFileCorruptError: a file is cut short or a record is corrupt.
    """
    paths = [os.fspath(path) for path in paths]
    total = sum(_size(path) for path in paths)
    if total >= limit_bytes:
        from absl import logging
        logging.info("Record files total %.1f GB: not scanned before the run "
                     "(limit %.1f GB); a damaged record is named when it is "
                     "read.", total / 1e9, limit_bytes / 1e9)
        return False
    for path in paths:
        check_record_file(path)
    return True


def _find_damaged(paths, offset):
    """(path, (index, start)) of the first local file with a damaged record
    at `offset`."""
    for path in paths:
        if "://" in path or not os.path.isfile(path):
            continue
        if offset >= os.path.getsize(path):
            continue
        found = locate_record(path, offset)
        if found is not None and _record_is_damaged(path, found[1]):
            return path, found
    return None


@contextlib.contextmanager
def naming_record_errors(paths, what="records"):
    """Re-raises TensorFlow's errors about `paths` naming the file at fault.

    Use around the code that consumes a dataset over `paths` (`fit`,
    `predict`, an evaluation loop).

    Args:
        paths: the TFRecord files the dataset reads.
        what: how to call the records in messages (e.g. "pre-training
            records").

    Raises:
        RecordFileCorruptError: a `DataLossError` (names the file, record
            index and offset when it can be found, else the files).
        RecordFormatError: a record that is not the expected
            tf.train.Example (names the files).
    """
    import tensorflow as tf

    paths = [os.fspath(path) for path in paths]
    try:
        yield
    except tf.errors.DataLossError as error:
        match = _OFFSET_PATTERN.search(str(error))
        offset = int(match.group(1)) if match else -1
        found = _find_damaged(paths, offset) if offset >= 0 else None
        if found:
            path, (index, start) = found
            raise RecordFileCorruptError(
                f"{path}: record {index} (byte offset {start}) is corrupt: "
                "it fails its checksum. The file is damaged; write or "
                "copy it again.") from None
        raise RecordFileCorruptError(
            f"one of the {what} files is damaged (TensorFlow: "
            f"{_first_line(error)}); files: {cut_list(paths)}") from None
    except tf.errors.InvalidArgumentError as error:
        message = _first_line(error)
        if "parse" not in message.lower() and "Feature" not in message:
            raise
        raise RecordFormatError(
            f"{cut_list(paths)}: a record is not a {what} tf.train.Example "
            f"({message})") from None


def _first_line(error):
    message = str(getattr(error, "message", "") or error)
    message = message.split("\n\t [[", 1)[0]
    # Drop TensorFlow's "{{function_node ...}}" prefix and op name suffix.
    message = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", message)
    message = re.sub(r"\s*\[Op:\w+\].*$", "", message, flags=re.S)
    return (message.strip().splitlines() or [type(error).__name__])[0][:300]
