"""bert_tf1/data/multiple_choice features, records, choice reshaping and result files.

Expected ids are worked out by hand from a small vocab with the original
run_classifier.py rules (convert_single_example, _truncate_seq_pair)."""
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.io.record_specs import multiple_choice_record_spec
from bert_tf1.data.io.tfrecord import RecordFormatError
from bert_tf1.data.multiple_choice import features as mcf
from bert_tf1.data.io.results import (format_test_results,
                                      write_text_atomically)
from bert_tf1.data.multiple_choice import records
from bert_tf1.modeling.models.multiple_choice import flatten_choices
from bert_tf1.data.io.dynamic_padding import PaddingInputExample
from bert_tf1.data.multiple_choice.examples import MultipleChoiceExample
from tests.helpers.vocab import tokenizer_for

# id:   0       1       2       3       4    5    6    7    8    9    10   11
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d", "e", "f",
         "g", "h"]
CLS, SEP = 2, 3
A, B, C, D, E, F, G, H = 4, 5, 6, 7, 8, 9, 10, 11


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return tokenizer_for(tmp_path_factory, VOCAB)


def test_each_choice_truncated_on_its_own(tokenizer):
    example = MultipleChoiceExample("x", "A b c d e", ["f g h", "F", ""], 1)
    f = mcf.convert_example_to_features(example, 8, tokenizer)
    # Budget 8 - 3 = 5. Choice 0: a=5, b=3 -> pop a (5>3), pop a (4>3), tie
    # 3=3 pops b -> a b c | f g. Choice 1: a=5, b=1 -> pop a -> a b c d | f.
    # Choice 2: no B tokens -> one segment, budget 6, a b c d e kept.
    assert f.input_ids == [
        [CLS, A, B, C, SEP, F, G, SEP],
        [CLS, A, B, C, D, SEP, F, SEP],
        [CLS, A, B, C, D, E, SEP, 0]]
    assert f.segment_ids == [
        [0, 0, 0, 0, 0, 1, 1, 1],
        [0, 0, 0, 0, 0, 0, 1, 1],
        [0, 0, 0, 0, 0, 0, 0, 0]]
    assert f.input_mask == [[1] * 8, [1] * 8, [1] * 7 + [0]]
    assert f.label_ids == 1 and f.is_real_example
    assert f.tokens[1] == ["[CLS]", "a", "b", "c", "d", "[SEP]", "f", "[SEP]"]


def test_padding_unlabelled_and_tiny_lengths(tokenizer):
    f = mcf.convert_example_to_features(PaddingInputExample(), 4, tokenizer,
                                        num_choices=2)
    assert f.input_ids == f.input_mask == f.segment_ids == [[0] * 4] * 2
    assert f.label_ids == 0 and not f.is_real_example
    unlabelled = MultipleChoiceExample("u", "a", ["b", "c"], None)
    g = mcf.convert_example_to_features(unlabelled, 6, tokenizer)
    assert g.label_ids == 0 and g.is_real_example
    assert g.input_ids == [[CLS, A, SEP, B, SEP, 0], [CLS, A, SEP, C, SEP, 0]]
    # Budget 0 (max_seq_length 3): B is emptied, so no second [SEP].
    h = mcf.convert_example_to_features(unlabelled, 3, tokenizer)
    assert h.input_ids == [[CLS, SEP, 0], [CLS, SEP, 0]]
    with pytest.raises(ValueError, match="need >= 3"):
        mcf.convert_example_to_features(unlabelled, 2, tokenizer)
    with pytest.raises(ValueError, match="expected num_choices=3"):
        mcf.convert_example_to_features(unlabelled, 6, tokenizer,
                                        num_choices=3)


def _random_features(rng, count, num_choices, seq):
    out = []
    for i in range(count):
        out.append(mcf.MultipleChoiceFeatures(
            input_ids=rng.integers(0, 30000, (num_choices, seq)).tolist(),
            input_mask=rng.integers(0, 2, (num_choices, seq)).tolist(),
            segment_ids=rng.integers(0, 2, (num_choices, seq)).tolist(),
            label_ids=int(rng.integers(0, num_choices)),
            is_real_example=bool(i % 3)))
    return out


def test_record_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    feats = _random_features(rng, 5, 3, 7)
    path = str(tmp_path / "eval.tf_record")
    assert records.write_feature_records(feats, path, 3, 7) == 5
    dataset = records.multiple_choice_dataset(
        path, 3, 7, is_training=False, batch_size=2,
        include_is_real_example=True)
    assert dataset.cardinality().numpy() == 3
    batches = list(dataset.as_numpy_iterator())
    assert [len(b[1]) for b in batches] == [2, 2, 1]
    for key in mcf.FEATURE_KEYS:
        got = np.concatenate([b[0][key] for b in batches])
        assert got.dtype == np.int32 and got.shape == (5, 3, 7)
        np.testing.assert_array_equal(got, [getattr(f, key) for f in feats])
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]),
                                  [f.label_ids for f in feats])
    np.testing.assert_array_equal(np.concatenate([b[2] for b in batches]),
                                  [float(f.is_real_example) for f in feats])
    # Flat on disk, choice k at [k * seq, (k + 1) * seq).
    raw = next(iter(tf.data.TFRecordDataset(path))).numpy()
    stored = tf.train.Example.FromString(raw).features.feature
    assert list(stored["input_ids"].int64_list.value) == sum(
        feats[0].input_ids, [])
    # Training: two-tuple batches of a static shape, repeated.
    train = records.multiple_choice_dataset(path, 3, 7, True, 4, seed=1)
    features, labels = next(iter(train))
    assert features["segment_ids"].shape == (4, 3, 7)
    assert labels.shape == (4,) and labels.dtype == tf.int32


def test_file_based_convert(tokenizer, tmp_path):
    examples = [MultipleChoiceExample("1", "a b", ["c", "d e"], 1),
                PaddingInputExample()]
    path = str(tmp_path / "train.tf_record")
    assert records.file_based_convert_examples_to_features(
        examples, 6, tokenizer, path) == 2
    features, labels = next(iter(records.multiple_choice_dataset(
        path, 2, 6, False, 2)))
    # Budget 6 - 3 = 3; choice 1: a=2, b=2, a tie pops b -> a b | d.
    np.testing.assert_array_equal(features["input_ids"].numpy(), [
        [[CLS, A, B, SEP, C, SEP], [CLS, A, B, SEP, D, SEP]],
        [[0] * 6, [0] * 6]])
    np.testing.assert_array_equal(labels.numpy(), [1, 0])


def test_record_spec_names_both_sizes(tmp_path):
    path = str(tmp_path / "r.tf_record")
    records.write_feature_records(
        _random_features(np.random.default_rng(1), 1, 4, 8), path, 4, 8)
    with pytest.raises(RecordFormatError) as info:
        records.multiple_choice_dataset(path, 2, 8, False, 1)
    message = str(info.value)
    assert message.startswith(path + ": feature 'input_ids' has 32 values")
    assert "2 x 8 = 16" in message and "num_choices=4" in message
    spec = multiple_choice_record_spec(2, 3)
    with pytest.raises(RecordFormatError, match=r"shape \[3, 3\]"):
        spec.serialize({"input_ids": [[0] * 3] * 3})
    single = spec.decode(tf.constant(spec.serialize({
        "input_ids": [[1, 2, 3], [4, 5, 6]], "input_mask": [[1] * 3] * 2,
        "segment_ids": [[0] * 3] * 2, "label_ids": [1],
        "is_real_example": [1]})))
    np.testing.assert_array_equal(single["input_ids"], [[1, 2, 3], [4, 5, 6]])
    assert single["label_ids"].shape == ()


def test_flatten_choices_layout():
    x = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    flat = flatten_choices(x)
    assert tuple(flat.shape) == (6, 4)
    # Row i * num_choices + k is choice k of example i.
    np.testing.assert_array_equal(np.asarray(flat)[4], x[1, 1])
    np.testing.assert_array_equal(np.asarray(flat).reshape(2, 3, 4), x)


def test_flatten_choices_in_graph_with_unknown_sizes():
    @tf.function(input_signature=[tf.TensorSpec([None, 4, None], tf.int32)])
    def flatten(x):
        return flatten_choices(x)

    x = tf.reshape(tf.range(3 * 4 * 5), (3, 4, 5))
    flat = flatten(x)
    assert flat.shape == (12, 5)
    np.testing.assert_array_equal(flat.numpy().reshape(3, 4, 5), x.numpy())


def test_test_results_file(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    probabilities = [[0.25, 0.75], [1.0 / 3.0, 2.0 / 3.0]]
    write_text_atomically(path, format_test_results(probabilities))
    with open(path, encoding="utf-8") as f:
        # str(np.float32(1/3)) == "0.33333334", as the original prints it.
        assert f.read() == "0.25\t0.75\n0.33333334\t0.6666667\n"
    assert not list(tmp_path.glob(".bert-tmp*"))


def test_test_results_format_error():
    with pytest.raises(ValueError, match="num_examples, num_choices"):
        format_test_results([0.1, 0.9])
