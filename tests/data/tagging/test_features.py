"""Tagging features: first-piece labels, [UNK] for words without pieces,
run_squad.py windows and max context, and one decoded tag per input word."""
import pathlib
import random

import numpy as np
import pytest

from bert_tf1.data.io.errors import UserError
from bert_tf1.data.tokenization import windows
from bert_tf1.data.tagging.decoding import predicted_label_ids, predicted_tags
from bert_tf1.data.tagging.documents import Document, Sentence, Word
from bert_tf1.data.tagging.features import (WordRef, convert_documents_to_features,
                                            document_pieces)
from bert_tf1.data.tagging.readers import read_tagged_file
from bert_tf1.data.tokenization import FullTokenizer

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "john", "un", "##believ",
         "##able", ".", "new", "york", "a", "b", "c", "##x", "##y"]
LABELS = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("".join(token + "\n" for token in VOCAB))
    return FullTokenizer(str(path), do_lower_case=True)


def _document(sentences, path="doc.txt"):
    """Document from [[(token, tag), ...], ...] with made-up lines."""
    line, built = 1, []
    for sentence in sentences:
        words = []
        for token, tag in sentence:
            words.append(Word(token, tag, line))
            line += 1
        built.append(Sentence(tuple(words)))
        line += 1
    return Document(tuple(built), path)


def test_first_piece_carries_the_label_and_empty_words_get_unk(tokenizer):
    document = _document([[("John", "B-PER"), ("unbelievable", "O"),
                           ("\u200b", "O"), ("NY", "B-LOC"), (".", "O")]])
    (feature,) = convert_documents_to_features([document], tokenizer, LABELS,
                                               max_seq_length=12,
                                               doc_stride=4)
    # U+200B is deleted by BERT's text cleaning: no pieces -> [UNK];
    # "ny" is not in the vocab -> WordPiece's own [UNK].
    assert feature.tokens == ["[CLS]", "john", "un", "##believ", "##able",
                              "[UNK]", "[UNK]", ".", "[SEP]"]
    assert feature.input_ids == [2, 4, 5, 6, 7, 1, 1, 8, 3, 0, 0, 0]
    assert feature.input_mask == [1] * 9 + [0] * 3
    assert feature.segment_ids == [0] * 12
    assert feature.label_ids == [0, 3, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
    assert feature.label_weights == [0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0]
    assert all(isinstance(w, float) for w in feature.label_weights)
    assert feature.scored == ((1, WordRef(0, 0, 0)), (2, WordRef(0, 0, 1)),
                              (5, WordRef(0, 0, 2)), (6, WordRef(0, 0, 3)),
                              (7, WordRef(0, 0, 4)))


def test_windows_and_max_context_by_hand():
    # 8 pieces, windows of 5, stride 2: [0,5) [2,7) [4,8).
    spans = windows.sliding_windows(8, 5, 2)
    assert spans == [(0, 5), (2, 5), (4, 4)]
    # Scores min(left, right) + 0.01 * length, by hand:
    #  piece 3: window 0 min(3,1)=1.05, window 1 min(1,3)=1.05 -> tie, the
    #           earlier window wins;
    #  piece 5: window 1 min(3,1)=1.05, window 2 min(1,2)=1.04 -> window 1
    #           (the longer window breaks the tie of min = 1);
    #  piece 4: window 1 min(2,2)=2 beats windows 0 and 2 (min 0).
    assert windows.max_context_windows(spans, 8) == [0, 0, 0, 0, 1, 1, 2, 2]
    # The stride advances by min(length, doc_stride): never past a window.
    assert windows.sliding_windows(7, 3, 10) == [(0, 3), (3, 3), (6, 1)]
    assert windows.sliding_windows(0, 3, 1) == []
    assert windows.sliding_windows(3, 5, 1) == [(0, 3)]


def test_max_context_in_features(tokenizer):
    # Eight one-piece words; max_seq_length 7 holds 5 pieces: the windows
    # and owners of the hand case above.
    words = ["a", "b", "c", "a", "b", "c", "a", "b"]
    document = _document([[(w, "O") for w in words[:3]],
                          [(w, "B-PER") for w in words[3:]]])
    features = convert_documents_to_features([document], tokenizer, LABELS,
                                             max_seq_length=7, doc_stride=2)
    assert [f.start for f in features] == [0, 2, 4]
    assert [f.tokens for f in features][2] == ["[CLS]", "b", "c", "a", "b",
                                               "[SEP]"]
    weights = [f.label_weights for f in features]
    assert weights == [[0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 1, 1, 0, 0],
                       [0, 0, 0, 1, 1, 0, 0]]
    assert [f.label_ids for f in features] == [
        [0, 0, 0, 0, 3, 0, 0], [0, 0, 0, 3, 3, 0, 0], [0, 0, 0, 3, 3, 0, 0]]
    # Sentence boundaries do not cut windows: word 3 is sentence 1, word 0.
    assert features[0].scored[3] == (4, WordRef(0, 1, 0))


def test_multi_piece_word_scored_where_its_first_piece_is(tokenizer):
    # Pieces: a | un ##believ ##able | b  (5), windows of 3, stride 2:
    # [0,3) [2,5). "unbelievable" starts at piece 1, owned by window 0.
    document = _document([[("a", "O"), ("unbelievable", "B-PER"),
                           ("b", "O")]])
    features = convert_documents_to_features([document], tokenizer, LABELS,
                                             max_seq_length=5, doc_stride=2)
    assert [f.tokens for f in features] == [
        ["[CLS]", "a", "un", "##believ", "[SEP]"],
        ["[CLS]", "##believ", "##able", "b", "[SEP]"]]
    assert [f.label_weights for f in features] == [[0, 1, 1, 0, 0],
                                                   [0, 0, 0, 1, 0]]
    assert features[0].label_ids == [0, 0, 3, 0, 0]


WORDS = ["a", "b", "c", "ax", "bxy", "unbelievable", "\u200b", "\ufe0f",
         "zzz", "new", "york", "."]


def _random_document(rng, num_words, path="random.txt"):
    sentences, left = [], num_words
    while left:
        size = min(left, rng.randint(1, 40))
        sentences.append([(rng.choice(WORDS), rng.choice(LABELS))
                          for _ in range(size)])
        left -= size
    return _document(sentences, path)


def _noisy_gold_predictions(rng, features):
    """Random ids everywhere except the scored positions, which get the
    gold label: decoding must read exactly those."""
    ids = np.array([f.label_ids for f in features])
    weights = np.array([f.label_weights for f in features])
    noise = rng.integers(0, len(LABELS), size=ids.shape)
    return np.where(weights == 1.0, ids, noise)


def test_one_tag_per_word_for_1_to_2000_words(tokenizer):
    rng = random.Random(0)
    noise = np.random.default_rng(0)
    lengths = sorted(set(range(1, 40)) | set(range(40, 2001, 97))
                     | {126, 127, 128, 129, 1999, 2000})
    documents = [_random_document(rng, n) for n in lengths]
    features = convert_documents_to_features(documents, tokenizer, LABELS,
                                             max_seq_length=16, doc_stride=5)
    per_document = np.bincount([f.document_index for f in features])
    assert per_document[0] == 1
    assert per_document[-1] > 300  # 2,000 words: far more than 3 windows
    # Every word has weight 1.0 exactly once.
    assert sum(sum(f.label_weights) for f in features) == sum(lengths)
    tags = predicted_tags(features, _noisy_gold_predictions(noise, features),
                          documents, LABELS)
    for document, document_tags in zip(documents, tags):
        assert [len(t) for t in document_tags] == [
            len(s) for s in document.sentences]
        assert document_tags == [s.tags for s in document.sentences]
    assert sum(len(t) for d in tags for t in d) == sum(lengths)


def test_decoding_logits_and_bad_shapes(tokenizer):
    rng = random.Random(1)
    documents = [_random_document(rng, 300), _random_document(rng, 7)]
    features = convert_documents_to_features(documents, tokenizer, LABELS,
                                             max_seq_length=32, doc_stride=8)
    ids = _noisy_gold_predictions(np.random.default_rng(1), features)
    logits = np.eye(len(LABELS))[ids] * 3.0 - 1.0
    assert predicted_label_ids(features, logits, documents) == \
        predicted_label_ids(features, ids, documents)
    with pytest.raises(ValueError, match="expected \\[%d windows, 32"
                       % len(features)):
        predicted_label_ids(features, ids[:-1], documents)
    with pytest.raises(RuntimeError, match="got no prediction"):
        predicted_label_ids(features[:-1], ids[:-1], documents)
    with pytest.raises(ValueError, match="outside the label list"):
        predicted_tags(features, ids + 10, documents, LABELS)


def test_errors(tokenizer):
    document = _document([[("a", "B-MISC")]], path="train.txt")
    with pytest.raises(UserError, match=r"train.txt, line 1: tag 'B-MISC' is "
                       "not in the label list"):
        convert_documents_to_features([document], tokenizer, LABELS, 8, 2)
    with pytest.raises(UserError, match="max_seq_length=2"):
        convert_documents_to_features([document], tokenizer, LABELS, 2, 2)
    with pytest.raises(UserError, match="doc_stride=0"):
        convert_documents_to_features([document], tokenizer, LABELS, 8, 0)
    # Untagged input (prediction): label 0, weights still mark the words.
    untagged = _document([[("a", None), ("b", None)]])
    (feature,) = convert_documents_to_features([untagged], tokenizer, LABELS,
                                               8, 2)
    assert feature.label_ids == [0] * 8
    assert feature.label_weights == [0, 1, 1, 0, 0, 0, 0, 0]


def test_document_pieces_map(tokenizer):
    document = _document([[("bxy", "O")], [("\ufe0f", "O"), ("a", "O")]])
    stream = document_pieces(document, 4, tokenizer)
    # U+FE0F is a combining mark: uncased accent stripping leaves nothing.
    assert stream.pieces == ["b", "##x", "##y", "[UNK]", "a"]
    assert stream.first_pieces == [0, 3, 4]
    assert stream.piece_words == [(4, 0, 0)] * 3 + [(4, 1, 0), (4, 1, 1)]


def test_wnut_dev_one_tag_per_word_with_real_vocab(data_dir):
    real = FullTokenizer(
        str(data_dir / "bert_models/uncased_L-12_H-768_A-12/vocab.txt"),
        do_lower_case=True)
    dev = read_tagged_file(data_dir / "ner/wnut17/emerging.dev.conll")
    labels = ["O"] + sorted({w.tag for d in dev for w in d.words} - {"O"})
    features = convert_documents_to_features(dev, real, labels,
                                             max_seq_length=32, doc_stride=16)
    assert sum(sum(f.label_weights) for f in features) == 15733
    # The U+FE0F-only words (README: dev lines 6573, ...) become [UNK].
    lines = {}
    for feature in features:
        for position, ref in feature.scored:
            word = dev[ref.document].sentences[ref.sentence].words[ref.word]
            lines[word.line] = feature.tokens[position]
    assert lines[6573] == "[UNK]" and lines[16373] == "[UNK]"
    assert lines[16730] == "dub"  # "Dubbz\ufeff": cleaned to "dubbz"
    ids = np.array([f.label_ids for f in features])
    tags = predicted_tags(features, ids, dev, labels)
    assert tags == [[s.tags for s in d.sentences] for d in dev]


def test_chinese_characters_are_one_piece_each(data_dir):
    chinese = FullTokenizer(
        str(data_dir / "bert_models/chinese_L-12_H-768_A-12/vocab.txt"),
        do_lower_case=True)
    fixture = pathlib.Path(__file__).parent / "fixtures"
    documents = read_tagged_file(fixture / "chinese_bio.txt", "chinese_bio")
    labels = ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    features = convert_documents_to_features(documents, chinese, labels,
                                             max_seq_length=16, doc_stride=8)
    assert features[0].tokens == ["[CLS]", "我", "爱", "北", "京", "。",
                                  "[SEP]"]
    assert features[0].label_ids[:7] == [0, 0, 0, 1, 2, 0, 0]
    assert features[2].label_ids[1:5] == [3, 4, 3, 4]
