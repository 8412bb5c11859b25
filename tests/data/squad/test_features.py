"""Tests for bert_tf1/data/squad/features.py (run_squad.py feature building)."""
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.tokenization import full_tokenizer as tokenization
from bert_tf1.data.squad.examples import SquadExample, read_squad_examples
from bert_tf1.data.squad.features import (
             FeatureWriter, convert_examples_to_features, improve_answer_span,
             squad_dataset)
from bert_tf1.data.tokenization.windows import (
             WindowSpan, max_context_windows, sliding_windows)

# (fixture folder, max_seq_length, doc_stride, number of windows); the
# settings and the 190 windows are those of shared/fixtures/README.md.
FIXTURES = [
    ("squad_v1_sample", 384, 128, 134),
    ("squad_v1_windows", 128, 48, 190),
    ("squad_v2_sample", 384, 128, 36),
]


@pytest.fixture(scope="module")
def tokenizer(fixtures_dir):
    return tokenization.FullTokenizer(
        str(fixtures_dir / "tf1_vocab_squad/vocab.txt"), do_lower_case=True)


def _features(examples, tokenizer, max_seq_length=384, doc_stride=128,
              max_query_length=64, is_training=False):
    features = []
    count = convert_examples_to_features(
        examples, tokenizer, max_seq_length, doc_stride, max_query_length,
        is_training, features.append)
    assert count == len(features)
    return features


@pytest.mark.parametrize("name,max_seq_length,doc_stride,num_windows",
                         FIXTURES)
def test_fixture_windows_match_the_original(fixtures_dir, tokenizer, name,
                                            max_seq_length, doc_stride,
                                            num_windows):
    folder = fixtures_dir / "tf1_vocab_squad" / name
    examples = read_squad_examples(str(folder / "input.json"), False)
    features = _features(examples, tokenizer, max_seq_length, doc_stride)
    # The original's unique ids, one per window, in the same order.
    expected_ids = np.load(folder / "raw_logits.npz")["unique_ids"]
    assert len(features) == num_windows
    assert [f.unique_id for f in features] == expected_ids.tolist()
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    for feature in features:
        example = examples[feature.example_index]
        query = tokenizer.tokenize(example.question_text)[:64]
        tokens = feature.tokens
        num_query = len(query)
        assert tokens[:num_query + 2] == ["[CLS]"] + query + ["[SEP]"]
        assert tokens[-1] == "[SEP]"
        num_real = len(tokens)
        assert num_real <= max_seq_length
        assert len(feature.input_ids) == max_seq_length
        assert feature.input_ids[0] == cls_id
        assert feature.input_ids[num_real - 1] == sep_id
        assert feature.input_ids[num_real:] == [0] * (max_seq_length
                                                      - num_real)
        assert feature.input_mask == ([1] * num_real
                                      + [0] * (max_seq_length - num_real))
        assert feature.segment_ids == (
            [0] * (num_query + 2) + [1] * (num_real - num_query - 2)
            + [0] * (max_seq_length - num_real))
        # Context positions map to the word the piece came from.
        doc_positions = range(num_query + 2, num_real - 1)
        assert sorted(feature.token_to_orig_map) == list(doc_positions)
        for position in doc_positions:
            word = example.doc_tokens[feature.token_to_orig_map[position]]
            assert tokens[position] in tokenizer.tokenize(word)


def test_each_token_is_max_context_in_exactly_one_window(fixtures_dir,
                                                         tokenizer):
    folder = fixtures_dir / "tf1_vocab_squad/squad_v1_windows"
    examples = read_squad_examples(str(folder / "input.json"), False)
    features = _features(examples, tokenizer, 128, 48)
    counts = {}
    window_start = 0
    for feature in features:
        if feature.doc_span_index == 0:
            window_start = 0
        num_query = feature.tokens.index("[SEP]") - 1
        window_length = len(feature.tokens) - num_query - 3
        for position, is_max in feature.token_is_max_context.items():
            key = (feature.example_index,
                   window_start + position - num_query - 2)
            counts[key] = counts.get(key, 0) + int(is_max)
        # The original's stride rule: next start = start + min(len, stride).
        window_start += min(window_length, 48)
    assert len(features) > len(examples)
    assert set(counts.values()) == {1}


def test_sliding_windows_stride_rule():
    # 10 tokens, windows of 4, stride 3: starts 0, 3, 6; the last reaches
    # the end; an empty context has no window.
    assert sliding_windows(10, 4, 3) == [
        WindowSpan(0, 4), WindowSpan(3, 4), WindowSpan(6, 4)]
    assert sliding_windows(10, 4, 5) == [
        WindowSpan(0, 4), WindowSpan(4, 4), WindowSpan(8, 2)]
    assert sliding_windows(3, 4, 2) == [WindowSpan(0, 3)]
    assert sliding_windows(0, 4, 2) == []


def test_is_max_context_original_example():
    # "the man went to the store and bought a gallon of milk": spans
    # A = 0..4, B = 3..7, C = 6..10; "bought" (7) has most context in C.
    spans = [WindowSpan(0, 5), WindowSpan(3, 5), WindowSpan(6, 5)]
    best = max_context_windows(spans, 11)
    assert best[7] == 2
    # "to" (3): A gives min(3, 1) = 1, B gives min(0, 4) = 0.
    assert best[3] == 0


def test_improve_answer_span_finds_sub_word_answer(tokenizer):
    doc_tokens = tokenizer.tokenize("the leader was john smith (1895-1943).")
    start = doc_tokens.index("(")
    end = len(doc_tokens) - 1
    new_start, new_end = improve_answer_span(doc_tokens, start, end,
                                             tokenizer, "1895")
    assert doc_tokens[new_start:new_end + 1] == ["1895"]
    # No match: the input span comes back.
    assert improve_answer_span(doc_tokens, start, end, tokenizer,
                               "zebra") == (start, end)


def _example(qid, context, answer=None, occurrence=0, is_impossible=False):
    words = context.split(" ")
    if answer is None:
        return SquadExample(qid, "what is it?", words,
                            orig_answer_text="" if is_impossible else None,
                            start_position=-1 if is_impossible else None,
                            end_position=-1 if is_impossible else None,
                            is_impossible=is_impossible)
    answer_words = answer.split(" ")
    starts = [i for i in range(len(words))
              if words[i:i + len(answer_words)] == answer_words]
    start = starts[occurrence]
    return SquadExample(qid, "what is it?", words, orig_answer_text=answer,
                        start_position=start,
                        end_position=start + len(answer_words) - 1)


def test_training_windows_without_answer_are_kept_at_cls(tokenizer):
    context = " ".join("word%d" % i for i in range(40)) + " target answer"
    example = _example("q", context, "target answer")
    features = _features([example], tokenizer, max_seq_length=32,
                         doc_stride=8, is_training=True)
    assert len(features) > 2
    with_answer = [f for f in features if f.start_position != 0]
    without = [f for f in features if f.start_position == 0]
    assert without and all(f.end_position == 0 for f in without)
    assert with_answer
    for feature in with_answer:
        answer_tokens = feature.tokens[feature.start_position:
                                       feature.end_position + 1]
        assert answer_tokens == tokenizer.tokenize("target answer")
    # Every window of an impossible question points at [CLS].
    impossible = _example("imp", context, is_impossible=True)
    features = _features([impossible], tokenizer, max_seq_length=32,
                         doc_stride=8, is_training=True)
    assert all((f.start_position, f.end_position) == (0, 0)
               for f in features)


def test_words_without_pieces_do_not_break_features(tokenizer):
    # U+200B (zero width space, Cf) and a lone U+0E38 (Thai vowel sign,
    # Mn: stripped when lower-casing) tokenize to nothing.
    assert tokenizer.tokenize("\u200b") == []
    assert tokenizer.tokenize("\u0e38") == []
    context = "alpha \u200b beta \u0e38 gamma \u0e38"
    examples = [
        _example("mid", context, "beta \u0e38 gamma"),
        _example("lone", context, "\u0e38", occurrence=1),
        _example("first", context, "\u200b beta"),
    ]
    features = _features(examples, tokenizer, max_seq_length=16,
                         doc_stride=4, is_training=True)
    by_example = {}
    for feature in features:
        by_example.setdefault(feature.example_index, []).append(feature)
    # An answer made only of piece-less words cannot be labelled: skipped.
    assert sorted(by_example) == [0, 2]
    mid = [f for f in by_example[0] if f.start_position][0]
    assert mid.tokens[mid.start_position:mid.end_position + 1] == [
        "beta", "gamma"]
    first = [f for f in by_example[2] if f.start_position][0]
    assert first.tokens[first.start_position:first.end_position + 1] == [
        "beta"]
    # Prediction: contexts of piece-less words only give no feature at all.
    only_marks = SquadExample("marks", "q?", ["\u200b", "\u0e38"])
    empty = SquadExample("empty", "q?", [])
    normal = SquadExample("normal", "q?", ["alpha"])
    features = _features([only_marks, empty, normal], tokenizer)
    assert [f.example_index for f in features] == [2]
    assert features[0].unique_id == 1000000000


def test_bad_lengths_are_rejected(tokenizer):
    example = SquadExample("q", "q?", ["alpha"])
    # "q?" is 2 tokens: [CLS] q ? [SEP] [SEP] leaves no room in 5.
    with pytest.raises(ValueError, match="'q'.*no room for context"):
        _features([example], tokenizer, max_seq_length=5)
    assert len(_features([example], tokenizer, max_seq_length=6)) == 1
    with pytest.raises(ValueError, match="doc_stride"):
        _features([example], tokenizer, doc_stride=0)


def _read_records(path):
    return [tf.train.Example.FromString(r.numpy())
            for r in tf.data.TFRecordDataset(path)]


def test_tfrecord_round_trip_predict(tmp_path, fixtures_dir, tokenizer):
    folder = fixtures_dir / "tf1_vocab_squad/squad_v2_sample"
    examples = read_squad_examples(str(folder / "input.json"), False)[:7]
    path = tmp_path / "eval.tf_record"
    with FeatureWriter(path, is_training=False) as writer:
        features = []

        def output_fn(feature):
            features.append(feature)
            writer.process_feature(feature)

        convert_examples_to_features(examples, tokenizer, 384, 128, 64,
                                     False, output_fn)
    assert writer.num_features == len(features) == 7
    assert os.listdir(tmp_path) == ["eval.tf_record"]
    record = _read_records(str(path))[0].features.feature
    assert sorted(record) == ["input_ids", "input_mask", "segment_ids",
                              "unique_ids"]
    assert all(record[k].WhichOneof("kind") == "int64_list" for k in record)
    # Prediction keeps the last partial batch: 3 + 3 + 1.
    batches = list(squad_dataset(str(path), 384, is_training=False,
                                 batch_size=3))
    assert [int(b["input_ids"].shape[0]) for b in batches] == [3, 3, 1]
    merged = {k: np.concatenate([b[k].numpy() for b in batches])
              for k in batches[0]}
    assert all(v.dtype == np.int32 for v in merged.values())
    assert merged["unique_ids"].tolist() == [f.unique_id for f in features]
    for key in ("input_ids", "input_mask", "segment_ids"):
        assert merged[key].tolist() == [getattr(f, key) for f in features]


def test_tfrecord_training_keys_and_dataset(tmp_path, tokenizer):
    context = " ".join("word%d" % i for i in range(40)) + " target answer"
    examples = [_example("q", context, "target answer"),
                _example("imp", context, is_impossible=True)]
    path = tmp_path / "train.tf_record"
    features = []
    with FeatureWriter(path, is_training=True) as writer:
        def output_fn(feature):
            features.append(feature)
            writer.process_feature(feature)
        convert_examples_to_features(examples, tokenizer, 32, 8, 64, True,
                                     output_fn)
    records = _read_records(str(path))
    assert len(records) == len(features)
    first = records[0].features.feature
    assert sorted(first) == ["end_positions", "input_ids", "input_mask",
                             "is_impossible", "segment_ids",
                             "start_positions", "unique_ids"]
    assert [r.features.feature["is_impossible"].int64_list.value[0]
            for r in records] == [int(f.is_impossible) for f in features]
    assert [r.features.feature["start_positions"].int64_list.value[0]
            for r in records] == [f.start_position for f in features]
    dataset = squad_dataset([str(path)], 32, is_training=True, batch_size=4,
                            seed=1)
    batch = next(iter(dataset))
    assert set(batch) == {"unique_ids", "input_ids", "input_mask",
                          "segment_ids", "start_positions", "end_positions"}
    assert batch["input_ids"].shape == (4, 32)
    assert batch["start_positions"].dtype == tf.int32
    # Training repeats: more batches than records are available.
    assert len(list(dataset.take(len(records)))) == len(records)


def test_feature_writer_is_atomic(tmp_path, tokenizer):
    path = tmp_path / "eval.tf_record"
    path.write_bytes(b"old")
    features = _features([SquadExample("q", "q?", ["alpha"])], tokenizer)
    with pytest.raises(RuntimeError):
        with FeatureWriter(path, is_training=False) as writer:
            writer.process_feature(features[0])
            raise RuntimeError("interrupted")
    # The old file is untouched and no temporary file is left behind.
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["eval.tf_record"]
