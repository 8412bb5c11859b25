"""Checking TFRecord files, and naming the file and record that is bad.

TensorFlow checks both CRCs when it reads, but its `DataLossError` names
neither file nor record, and it drops a record cut inside its header
silently. So (own code) a walk over the length fields only (framing:
tensorflow/core/lib/io/record_writer.cc) turns an offset into a record index
and finds a cut tail; `scan_record_files` is the pre-check,
`naming_record_errors` names the file at run time.
"""
import contextlib
import os
import re
import struct

from bert_tf1.data.io.atomic import is_remote
from bert_tf1.data.io.errors import cut_list
from bert_tf1.data.io.text_files import file_size
from bert_tf1.data.io.tfrecord import RecordFormatError

SCAN_LIMIT_BYTES = 1 << 30
_HEADER = struct.Struct("<QI")   # length, masked CRC of the length
_FRAME_BYTES = _HEADER.size + 4  # + masked CRC of the data
_DATA_LOSS = re.compile(r"(corrupted|truncated) record at (\d+)")


class RecordFileCorruptError(RecordFormatError):
    """A TFRecord file is damaged: cut short, or a record fails its CRC."""


def _frames(path):
    """Yields (index, start, end) of the records of a local file, by their
    length fields; the last `end` passes the file's size when it was cut."""
    size = os.path.getsize(path)
    with open(path, "rb") as reader:
        index = start = 0
        while start < size:
            reader.seek(start)
            header = reader.read(_HEADER.size)
            end = (start + _FRAME_BYTES + _HEADER.unpack(header)[0]
                   if len(header) == _HEADER.size else size + 1)
            yield index, start, end
            index, start = index + 1, end


def locate_record(path, offset):
    """(index, start) of the record TensorFlow reports at byte `offset` (its
    header's or, 12 bytes further, its data's), or None (also for remote
    paths)."""
    if is_remote(path):
        return None
    for index, start, _ in _frames(path):
        if start in (offset, offset - _HEADER.size):
            return index, start
        if start > offset:
            break
    return None


def _tf_data_loss(path):
    """None, or ("corrupted"/"truncated", offset or -1) of TensorFlow's
    read of every record (both CRCs checked)."""
    import tensorflow as tf

    try:
        # Batched: a reduce step per record costs more than reading it.
        tf.data.TFRecordDataset(path, buffer_size=8 << 20).batch(1024).reduce(
            tf.constant(0, tf.int64),
            lambda count, records: count + tf.size(records, tf.int64))
    except tf.errors.DataLossError as error:
        match = _DATA_LOSS.search(str(error))
        return (match.group(1), int(match.group(2))) if match else ("corrupted", -1)
    return None


def _cut_short(path, index, offset):
    # Only local files are walked, so `path` has a size.
    return RecordFileCorruptError(
        f"{path}: the file ends inside record {index} (byte offset {offset}; "
        f"the file has {os.path.getsize(path)} bytes): it was cut short, e.g."
        " by an interrupted copy or write. Write or copy it again.")


def _damaged(path, kind, offset):
    """The error for what TensorFlow reported at `offset` of `path`."""
    found = locate_record(path, offset) if offset >= 0 else None
    if found is None:
        where = (f"the record at byte offset {offset}" if offset >= 0
                 else "a record")
        return RecordFileCorruptError(
            f"{path}: {where} is {kind}. The file is damaged; write or copy "
            "it again.")
    index, start = found
    if kind == "truncated":
        return _cut_short(path, index, start)
    part = "its length field fails" if start == offset else "it fails"
    return RecordFileCorruptError(
        f"{path}: record {index} (byte offset {start}) is corrupt: {part} "
        "its checksum. The file is damaged; write or copy it again.")


def check_record_file(path):
    """Reads every record of one TFRecord file: framing and both CRCs.

    Raises:
        RecordFileCorruptError: the file ends inside a record, or a record
            fails a CRC (names the file, the record index and its offset).
    """
    path = os.fspath(path)
    loss = _tf_data_loss(path)
    if loss is not None:
        raise _damaged(path, *loss)
    if not is_remote(path):
        # TensorFlow drops a record cut inside its header without an error.
        size = os.path.getsize(path)
        for index, start, end in _frames(path):
            if end > size:
                raise _cut_short(path, index, start)


def scan_record_files(paths, limit_bytes=SCAN_LIMIT_BYTES):
    """The pre-check: every record of every file, when they are small enough.

    Scans only files totalling less than `limit_bytes`.

    Returns:
        bool, True when the files were scanned.

    Raises:
        RecordFileCorruptError: a file is cut short or a record is corrupt.
    """
    paths = [os.fspath(path) for path in paths]
    total = sum(file_size(path) for path in paths)
    if total >= limit_bytes:
        from absl import logging
        logging.info("Record files total %.1f GB: not scanned before the run "
                     "(limit %.1f GB); a damaged record is named when it is "
                     "read.", total / 1e9, limit_bytes / 1e9)
        return False
    for path in paths:
        check_record_file(path)
    return True


def _find_damaged(paths, kind, offset):
    """The error naming the first local file whose TensorFlow read fails at
    `offset`, or None."""
    for path in paths:
        if (is_remote(path) or not os.path.isfile(path)
                or offset >= os.path.getsize(path)
                or locate_record(path, offset) is None):
            continue
        if _tf_data_loss(path) == (kind, offset):
            return _damaged(path, kind, offset)
    return None


@contextlib.contextmanager
def naming_record_errors(paths, what="records"):
    """Re-raises TensorFlow's errors about `paths` naming the file at fault.

    Use around the code consuming a dataset over `paths`; `what` names the
    records in messages.

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
        match = _DATA_LOSS.search(str(error))
        found = (_find_damaged(paths, match.group(1), int(match.group(2)))
                 if match else None)
        if found is not None:
            raise found from None
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
