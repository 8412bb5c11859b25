"""TFRecord files checked record by record: a damaged one is named with its index."""
import pytest
import tensorflow as tf

from bert_tf1.data.io import record_scan

RECORD = b"payload-" * 10          # 80 bytes of data
FRAMED = 8 + 4 + len(RECORD) + 4   # length, its CRC, data, its CRC


def _records(path, count=20):
    with tf.io.TFRecordWriter(str(path)) as writer:
        for index in range(count):
            writer.write(RECORD[:-2] + b"%02d" % index)
    return path


def test_an_intact_file_passes(tmp_path):
    path = _records(tmp_path / "a.tfrecord")
    record_scan.check_record_file(path)
    assert record_scan.scan_record_files([path]) is True


@pytest.mark.parametrize("inside", [5, 30], ids=["in_the_header", "in_the_data"])
def test_a_file_cut_in_the_middle_is_named_with_the_record(tmp_path, inside):
    path = _records(tmp_path / "a.tfrecord")
    data = path.read_bytes()
    path.write_bytes(data[:7 * FRAMED + inside])   # inside record 7
    if inside < 12:
        # Cut inside a header, TensorFlow itself reads the first 7 records
        # and stops without any error.
        assert int(tf.data.TFRecordDataset(str(path)).reduce(
            tf.constant(0, tf.int64), lambda n, _: n + 1)) == 7
    with pytest.raises(record_scan.RecordFileCorruptError) as error:
        record_scan.scan_record_files([path])
    message = str(error.value)
    assert str(path) in message and "record 7 " in message
    assert f"byte offset {7 * FRAMED}" in message and "cut short" in message


def test_a_corrupt_record_is_named_before_and_during_a_run(tmp_path):
    good = _records(tmp_path / "good.tfrecord")
    bad = _records(tmp_path / "bad.tfrecord")
    data = bytearray(bad.read_bytes())
    data[12 * FRAMED + 12 + 5] ^= 0xFF          # a data byte of record 12
    bad.write_bytes(bytes(data))
    with pytest.raises(record_scan.RecordFileCorruptError,
                       match=rf"{bad}: record 12 \(byte offset {12 * FRAMED}\)"):
        record_scan.scan_record_files([good, bad])
    # Above the size limit the pre-check is skipped...
    assert record_scan.scan_record_files([good, bad], limit_bytes=100) is False
    # ...and the error at run time names the file and the record.
    dataset = tf.data.TFRecordDataset([str(good), str(bad)]).batch(3)
    with pytest.raises(record_scan.RecordFileCorruptError,
                       match=rf"{bad}: record 12 \(byte offset {12 * FRAMED}\)"):
        with record_scan.naming_record_errors([good, bad]):
            for _ in dataset:
                pass


def test_a_corrupt_length_field_is_named(tmp_path):
    path = _records(tmp_path / "a.tfrecord")
    data = bytearray(path.read_bytes())
    data[3 * FRAMED + 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(record_scan.RecordFileCorruptError,
                       match=r"record 3 .*length field"):
        record_scan.check_record_file(path)


def test_a_record_that_is_no_example_names_the_files(tmp_path):
    from bert_tf1.data.io.record_specs import classifier_record_spec

    path = _records(tmp_path / "a.tfrecord")
    spec = classifier_record_spec(8)
    dataset = tf.data.TFRecordDataset(str(path)).batch(2).map(
        lambda records: spec.decode(records, batched=True))
    with pytest.raises(record_scan.RecordFormatError, match=str(path)):
        with record_scan.naming_record_errors([path], "classifier"):
            for _ in dataset:
                pass


def test_a_file_cut_in_a_record_is_named_at_run_time(tmp_path):
    good = _records(tmp_path / "good.tfrecord")
    cut = _records(tmp_path / "cut.tfrecord")
    cut.write_bytes(cut.read_bytes()[:4 * FRAMED + 30])   # inside record 4's data
    dataset = tf.data.TFRecordDataset([str(good), str(cut)])
    with pytest.raises(record_scan.RecordFileCorruptError,
                       match=rf"{cut}: the file ends inside record 4 "
                             rf"\(byte offset {4 * FRAMED}.*cut short"):
        with record_scan.naming_record_errors([good, cut]):
            for _ in dataset:
                pass
