"""Tagging TFRecords: the spec, a write/read round trip, length checks."""
import numpy as np
import pytest

from bert_tf1.data.io.record_specs import tagging_record_spec
from bert_tf1.data.io.tfrecord import RecordFormatError
from bert_tf1.data.tagging.documents import Document, Sentence, Word
from bert_tf1.data.tagging.features import convert_documents_to_features
from bert_tf1.data.tagging.records import tagging_dataset, write_tagging_records
from bert_tf1.data.tokenization import FullTokenizer

LABELS = ["O", "B-X", "I-X"]


def test_spec_keys_and_dtypes():
    spec = tagging_record_spec(16)
    assert spec.keys == ("input_ids", "input_mask", "segment_ids",
                         "label_ids", "label_weights")
    assert [f.dtype for f in spec.fields] == ["int64"] * 4 + ["float32"]
    assert all(spec.length(f) == 16 for f in spec.fields)


@pytest.fixture()
def features(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\na\nb\n##c\n")
    tokenizer = FullTokenizer(str(vocab))
    words = [Word(t, g, i + 1) for i, (t, g) in enumerate(
        [("a", "B-X"), ("bc", "I-X"), ("a", "O")] * 5)]
    document = Document((Sentence(tuple(words)),), "x.txt")
    return convert_documents_to_features([document, document], tokenizer,
                                         LABELS, max_seq_length=8,
                                         doc_stride=3)


def test_round_trip_in_order(tmp_path, features):
    path = tmp_path / "eval.tf_record"
    assert write_tagging_records(features, path) == len(features)
    batches = list(tagging_dataset(str(path), 8, is_training=False,
                                   batch_size=3))
    assert sum(b[1].shape[0] for b in batches) == len(features)
    inputs = {k: np.concatenate([b[0][k].numpy() for b in batches])
              for k in ("input_ids", "input_mask", "segment_ids")}
    label_ids = np.concatenate([b[1].numpy() for b in batches])
    weights = np.concatenate([b[0]["label_weights"].numpy() for b in batches])
    assert inputs["input_ids"].dtype == np.int32
    assert weights.dtype == np.float32
    np.testing.assert_array_equal(inputs["input_ids"],
                                  [f.input_ids for f in features])
    np.testing.assert_array_equal(inputs["input_mask"],
                                  [f.input_mask for f in features])
    np.testing.assert_array_equal(label_ids, [f.label_ids for f in features])
    np.testing.assert_array_equal(weights, [f.label_weights for f in features])
    train = tagging_dataset(str(path), 8, is_training=True, batch_size=4,
                            seed=1)
    x, y = next(iter(train))
    assert y.shape == (4, 8) and x["label_weights"].shape == (4, 8)


def test_other_max_seq_length_is_named(tmp_path, features):
    path = tmp_path / "train.tf_record"
    write_tagging_records(features, path)
    with pytest.raises(RecordFormatError, match="max_seq_length=8"):
        tagging_dataset(str(path), 16, is_training=False, batch_size=2)
