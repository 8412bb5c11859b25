"""convert_single_example, TFRecord writing and the tf.data reader.

Expected ids are worked out by hand from a small vocab, following the rules of
the original run_classifier.py (convert_single_example, _truncate_seq_pair).
"""
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.glue import features as cf
from bert_tf1.data.glue.processors import (InputExample, PaddingInputExample,
                                                 get_processor)
from bert_tf1.data.tokenization import FullTokenizer
from tests.helpers.vocab import tokenizer_for

# id:   0       1       2       3       4    5    6    7    8    9    10
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d", "e", "f",
         "g", "h", "##s"]
CLS, SEP = 2, 3
A, B, C, D, E, F, G, H = 4, 5, 6, 7, 8, 9, 10, 11


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return tokenizer_for(tmp_path_factory, VOCAB)


def _convert(tokenizer, text_a, text_b=None, label="1", max_seq_length=8,
             label_list=("0", "1"), ex_index=10):
    example = InputExample("dev-1", text_a, text_b, label)
    return cf.convert_single_example(
        ex_index, example, None if label_list is None else list(label_list),
        max_seq_length, tokenizer)


def test_pair_layout_and_padding(tokenizer):
    f = _convert(tokenizer, "A b", "C", max_seq_length=9)
    assert f.input_ids == [CLS, A, B, SEP, C, SEP, 0, 0, 0]
    assert f.input_mask == [1, 1, 1, 1, 1, 1, 0, 0, 0]
    assert f.segment_ids == [0, 0, 0, 0, 1, 1, 0, 0, 0]
    assert f.label_id == 1 and f.is_real_example is True


def test_single_layout(tokenizer):
    f = _convert(tokenizer, "d e xyz", label="0", max_seq_length=7)
    # Unknown word -> [UNK] (1); labels map to their index.
    assert f.input_ids == [CLS, D, E, 1, SEP, 0, 0]
    assert f.input_mask == [1, 1, 1, 1, 1, 0, 0]
    assert f.segment_ids == [0] * 7
    assert f.label_id == 0


def test_pair_truncation_pops_longer_then_b_on_ties(tokenizer):
    # a has 5 tokens, b has 3, room for 8 - 3 = 5: pop a (5>3), pop a (4>3),
    # tie 3 = 3 pops b -> a = a b c, b = f g.
    f = _convert(tokenizer, "a b c d e", "f g h", max_seq_length=8)
    assert f.input_ids == [CLS, A, B, C, SEP, F, G, SEP]
    assert f.segment_ids == [0, 0, 0, 0, 0, 1, 1, 1]
    assert f.input_mask == [1] * 8
    # Only b is long: it alone is cut.
    f = _convert(tokenizer, "a", "b c d e f g", max_seq_length=8)
    assert f.input_ids == [CLS, A, SEP, B, C, D, E, SEP]


def test_wordpieces_are_truncated_not_words(tokenizer):
    # "bs" -> b ##s: the cut may split a word, as in the original.
    f = _convert(tokenizer, "a bs c", max_seq_length=4)
    assert f.input_ids == [CLS, A, B, SEP]


def test_single_truncation(tokenizer):
    f = _convert(tokenizer, "a b c d e f", max_seq_length=5)
    assert f.input_ids == [CLS, A, B, C, SEP]


def test_empty_or_tokenless_text_b_means_single(tokenizer):
    for text_b in ("", None, "   ", "\u200b"):
        f = _convert(tokenizer, "a b", text_b, max_seq_length=6)
        assert f.input_ids == [CLS, A, B, SEP, 0, 0], repr(text_b)
        assert f.segment_ids == [0] * 6


def test_padding_example(tokenizer):
    f = cf.convert_single_example(0, PaddingInputExample(), ["0", "1"], 6,
                                  tokenizer)
    assert f.input_ids == f.input_mask == f.segment_ids == [0] * 6
    assert f.label_id == 0 and f.is_real_example is False


def test_regression_label(tokenizer):
    f = _convert(tokenizer, "a", "b", label=3.25, label_list=None)
    assert isinstance(f.label_id, float) and f.label_id == 3.25
    f = _convert(tokenizer, "a", "b", label="4.5", label_list=None)
    assert f.label_id == 4.5


def test_bad_label_and_length(tokenizer):
    with pytest.raises(ValueError, match=r"dev-1: label '2' is not in"):
        _convert(tokenizer, "a", label="2")
    with pytest.raises(ValueError, match="not a number"):
        _convert(tokenizer, "a", label="x", label_list=None)
    with pytest.raises(ValueError, match="max_seq_length=2"):
        _convert(tokenizer, "a", "b", max_seq_length=2)


def test_real_vocab_mrpc_example(data_dir):
    vocab = data_dir / "bert_models" / "uncased_L-12_H-768_A-12" / "vocab.txt"
    tokenizer = FullTokenizer(str(vocab), do_lower_case=True)
    example = get_processor("mrpc").get_dev_examples(
        data_dir / "glue" / "MRPC")[0]
    f = cf.convert_single_example(0, example, ["0", "1"], 128, tokenizer)
    tokens_a = tokenizer.tokenize(example.text_a)
    tokens_b = tokenizer.tokenize(example.text_b)
    n = len(tokens_a) + len(tokens_b) + 3
    assert n <= 128  # no truncation for this pair
    # [CLS] = 101, [SEP] = 102 in the uncased vocab.
    assert f.input_ids[0] == 101
    assert f.input_ids[len(tokens_a) + 1] == 102 and f.input_ids[n - 1] == 102
    assert f.input_ids[1:len(tokens_a) + 1] == [tokenizer.vocab[t]
                                                for t in tokens_a]
    assert f.input_ids[n:] == [0] * (128 - n)
    assert f.segment_ids == ([0] * (len(tokens_a) + 2) +
                             [1] * (len(tokens_b) + 1) + [0] * (128 - n))
    assert f.input_mask == [1] * n + [0] * (128 - n)
    assert f.label_id == 1


# ------------------------------------------------------- TFRecord / tf.data

def _examples():
    return [InputExample("dev-%d" % i, "a " * (i + 1),
                         "b c" if i % 2 else None, label=str(i % 2))
            for i in range(5)]


def test_tfrecord_keys_and_types(tokenizer, tmp_path):
    out = tmp_path / "eval.tf_record"
    examples = _examples() + [PaddingInputExample()]
    n = cf.file_based_convert_examples_to_features(
        examples, ["0", "1"], 8, tokenizer, str(out))
    assert n == 6
    records = list(tf.data.TFRecordDataset(str(out)).as_numpy_iterator())
    assert len(records) == 6
    first = tf.train.Example.FromString(records[0]).features.feature
    assert sorted(first) == sorted(cf.FEATURE_KEYS)
    for key in cf.FEATURE_KEYS:
        assert first[key].WhichOneof("kind") == "int64_list"
    assert list(first["input_ids"].int64_list.value) == [CLS, A, SEP, 0, 0,
                                                         0, 0, 0]
    assert list(first["label_ids"].int64_list.value) == [0]
    assert list(first["is_real_example"].int64_list.value) == [1]
    last = tf.train.Example.FromString(records[-1]).features.feature
    assert list(last["is_real_example"].int64_list.value) == [0]
    # Parsable with the original reader's spec (scalar label_ids).
    spec = {"input_ids": tf.io.FixedLenFeature([8], tf.int64),
            "input_mask": tf.io.FixedLenFeature([8], tf.int64),
            "segment_ids": tf.io.FixedLenFeature([8], tf.int64),
            "label_ids": tf.io.FixedLenFeature([], tf.int64),
            "is_real_example": tf.io.FixedLenFeature([], tf.int64)}
    parsed = tf.io.parse_single_example(records[1], spec)
    assert parsed["label_ids"].numpy() == 1
    np.testing.assert_array_equal(parsed["input_ids"],
                                  [CLS, A, A, SEP, B, C, SEP, 0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval.tf_record"]


def test_eval_dataset_keeps_every_example_in_order(tokenizer, tmp_path):
    out = str(tmp_path / "eval.tf_record")
    examples = _examples()
    cf.file_based_convert_examples_to_features(examples, ["0", "1"], 8,
                                               tokenizer, out)
    expected = [cf.convert_single_example(i, e, ["0", "1"], 8, tokenizer)
                for i, e in enumerate(examples)]
    batches = list(cf.classifier_dataset(out, 8, is_training=False,
                                         batch_size=2))
    assert [len(b[1]) for b in batches] == [2, 2, 1]
    assert cf.classifier_dataset(out, 8, False, 2).cardinality() == 3
    features, labels, weights = batches[0]
    assert set(features) == {"input_ids", "input_mask", "segment_ids"}
    for name in features:
        assert features[name].dtype == tf.int32
        assert features[name].shape == (2, 8)
    assert labels.dtype == tf.int32 and weights.dtype == tf.float32
    got_ids = np.concatenate([b[0]["input_ids"] for b in batches])
    np.testing.assert_array_equal(got_ids, [f.input_ids for f in expected])
    got_segments = np.concatenate([b[0]["segment_ids"] for b in batches])
    np.testing.assert_array_equal(got_segments,
                                  [f.segment_ids for f in expected])
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]),
                                  [0, 1, 0, 1, 0])
    np.testing.assert_array_equal(np.concatenate([b[2] for b in batches]),
                                  np.ones(5))


def test_single_example_predict_file_is_not_dropped(tokenizer, tmp_path):
    out = str(tmp_path / "predict.tf_record")
    cf.file_based_convert_examples_to_features(_examples()[:1], ["0", "1"],
                                               8, tokenizer, out)
    batches = list(cf.classifier_dataset(out, 8, False, batch_size=8))
    assert len(batches) == 1 and batches[0][1].shape == (1,)


def test_training_dataset_repeats_shuffles_and_drops_remainder(tokenizer,
                                                               tmp_path):
    out = str(tmp_path / "train.tf_record")
    cf.file_based_convert_examples_to_features(_examples(), ["0", "1"], 8,
                                               tokenizer, out)
    dataset = cf.classifier_dataset(out, 8, is_training=True, batch_size=4,
                                    seed=1)
    # Static batch dimension (drop_remainder=True).
    assert dataset.element_spec[0]["input_ids"].shape == (4, 8)
    batches = list(dataset.take(5))  # 20 rows from a 5-row file: it repeats
    rows = np.concatenate([b[0]["input_ids"] for b in batches])
    assert rows.shape == (20, 8)
    # Every row is one of the file's 5 rows (repeat before shuffle mixes
    # epochs, as the original, so counts need not be equal).
    file_rows = [f.input_ids for f in cf.convert_examples_to_features(
        _examples(), ["0", "1"], 8, tokenizer)]
    assert all(list(r) in file_rows for r in rows)
    # Shuffled: not the file order repeated.
    assert [list(r) for r in rows] != (file_rows * 4)


def test_regression_round_trip(tokenizer, tmp_path):
    out = str(tmp_path / "train.tf_record")
    examples = [InputExample("t-0", "a", "b", 3.8),
                InputExample("t-1", "c", "d", 0.25),
                PaddingInputExample()]
    cf.file_based_convert_examples_to_features(examples, None, 6, tokenizer,
                                               out)
    raw = next(iter(tf.data.TFRecordDataset(out))).numpy()
    label = tf.train.Example.FromString(raw).features.feature["label_ids"]
    assert label.WhichOneof("kind") == "float_list"
    (features, labels, weights), = list(cf.classifier_dataset(
        out, 6, False, 8, is_regression=True))
    assert labels.dtype == tf.float32
    np.testing.assert_allclose(labels, [3.8, 0.25, 0.0], rtol=1e-7)
    np.testing.assert_array_equal(weights, [1.0, 1.0, 0.0])


def test_write_is_atomic_on_error(tokenizer, tmp_path):
    out = tmp_path / "train.tf_record"
    out.write_bytes(b"old")
    bad = _examples() + [InputExample("dev-9", "a", label="7")]
    with pytest.raises(ValueError, match="dev-9"):
        cf.file_based_convert_examples_to_features(bad, ["0", "1"], 8,
                                                   tokenizer, str(out))
    # The old file is untouched and no temporary file is left behind.
    assert out.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["train.tf_record"]
    cf.file_based_convert_examples_to_features(_examples(), ["0", "1"], 8,
                                               tokenizer, str(out))
    assert sum(1 for _ in tf.data.TFRecordDataset(str(out))) == 5


def test_in_memory_conversion(tokenizer):
    features = cf.convert_examples_to_features(_examples(), ["0", "1"], 8,
                                               tokenizer)
    assert [f.label_id for f in features] == [0, 1, 0, 1, 0]
    assert features[2].input_ids == [CLS, A, A, A, SEP, 0, 0, 0]


def test_dataset_feeds_keras_fit_evaluate_predict(tokenizer, tmp_path):
    import keras

    out = str(tmp_path / "eval.tf_record")
    cf.file_based_convert_examples_to_features(
        _examples() + [PaddingInputExample()], ["0", "1"], 8, tokenizer, out)
    inputs = {name: keras.Input((8,), dtype="int32", name=name)
              for name in ("input_ids", "input_mask", "segment_ids")}
    summed = keras.ops.cast(
        keras.ops.stack([inputs[n] for n in sorted(inputs)], axis=1),
        "float32")
    logits = keras.layers.Dense(2)(keras.layers.Flatten()(summed))
    model = keras.Model(inputs, logits)
    model.compile(optimizer="sgd", weighted_metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(
                      from_logits=True))
    model.fit(cf.classifier_dataset(out, 8, True, 2, seed=0),
              steps_per_epoch=1, verbose=0, shuffle=False)
    model.evaluate(cf.classifier_dataset(out, 8, False, 4), verbose=0)
    predictions = model.predict(cf.classifier_dataset(out, 8, False, 4),
                                verbose=0)
    assert predictions.shape == (6, 2)  # every row, padding included


def test_mrpc_features_reproduce_original_predictions(fixtures_dir, tmp_path):
    """Processor + features + reader feed the fixture model to the original's
    test_results.tsv (64 MRPC test pairs, max_seq_length 128)."""
    import shutil

    from bert_tf1.modeling import BertConfig, checkpoints
    from bert_tf1.modeling.models import BertClassifier

    fixture = fixtures_dir / "tf1_vocab_mrpc_classifier"
    shutil.copy(fixture / "mrpc_test64.tsv", tmp_path / "test.tsv")
    processor = get_processor("mrpc")
    examples = processor.get_test_examples(tmp_path)
    assert len(examples) == 64
    tokenizer = FullTokenizer(str(fixture / "vocab.txt"), do_lower_case=True)
    record = str(tmp_path / "predict.tf_record")
    cf.file_based_convert_examples_to_features(
        examples, processor.get_labels(), 128, tokenizer, record)
    model = BertClassifier(
        BertConfig.from_json_file(str(fixture / "bert_config.json")),
        num_labels=2)
    checkpoints.load_tf1_checkpoint(model, str(fixture / "bert_model.ckpt"),
                                    verbose=False)
    logits = model.predict(cf.classifier_dataset(record, 128, False, 8),
                           verbose=0)
    probabilities = tf.nn.softmax(logits).numpy()
    expected = np.loadtxt(fixture / "mrpc_test64_test_results.tsv",
                          delimiter="\t")
    np.testing.assert_allclose(probabilities, expected, atol=1e-5, rtol=0)
