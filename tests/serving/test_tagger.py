"""Serving a tagger (bert_tf1/serving/tagger.py, export_saved_model.py
--model_type=tagger): raw text or words in, tags and entities out.

The served outputs must be those of the Python path `run_ner.py` uses
(`bert_tf1.data.tagging` features of the same words -> the Keras model -> decoding):
the same window ids exactly, the same scored positions, logits within 1e-5,
the same tags; entities follow conlleval's rules and their offsets point at
the right characters (checked by hand on a model whose tags we choose); an
export reloaded in a fresh process gives the same.
"""
import functools
import random

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.tagging import schemes
from bert_tf1.data.tagging.decoding import predicted_label_ids
from bert_tf1.data.tagging.documents import Document, Sentence, Word
from bert_tf1.data.tagging.features import convert_documents_to_features
from bert_tf1.data.tagging.readers import read_tagged_file
from bert_tf1.data.tokenization.windows import max_context_windows, sliding_windows
from bert_tf1.data.tokenization.full_tokenizer import FullTokenizer
from bert_tf1.data.tokenization.in_graph import InGraphFullTokenizer
from bert_tf1.serving import build_serving_module, export_saved_model
from bert_tf1.serving.entity_spans import entity_spans, label_tables
from bert_tf1.serving.tagger import TaggerServing
from bert_tf1.serving.tagger import max_context_positions, window_features
from tests.helpers.script_runner import run_script
from tests.helpers.task_checkpoints import TAGS, write_tagger_checkpoint
from tests.serving.test_export import run_signature

TOLERANCE = 1e-5
FIXTURE = "tf1_vocab_mrpc_classifier"  # uncased vocab, hidden 32
MAX_SEQ_LENGTH, DOC_STRIDE = 16, 5     # long texts get many windows

TEXTS = [
    "John Smith lives in New York, near the U.S. border; he works for "
    "Acme Corp. and visits São Paulo twice a year with Ms. Amélie Poulain.",
    "",
    "Short one.",
    "北京大学 is in Beijing, 中国! Dubbz\ufeff watched\u200bwas \ufe0f ok",
    " ".join(["The quick brown fox jumps over the lazy dog."] * 6),
]


@pytest.fixture(scope="module")
def tagger_dir(fixtures_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tagger_output_dir")
    write_tagger_checkpoint(fixtures_dir / FIXTURE, folder, seed=1, scale=2.0)
    return folder


@pytest.fixture(scope="module")
def module(fixtures_dir, tagger_dir):
    fixture = fixtures_dir / FIXTURE
    return build_serving_module(
        "tagger", bert_config_file=str(fixture / "bert_config.json"),
        vocab_file=str(fixture / "vocab.txt"), init_checkpoint=str(tagger_dir),
        do_lower_case=True, max_seq_length=MAX_SEQ_LENGTH, label_list=TAGS,
        doc_stride=DOC_STRIDE)


@pytest.fixture(scope="module")
def tokenizer(fixtures_dir):
    return FullTokenizer(str(fixtures_dir / FIXTURE / "vocab.txt"), True)


def _document(words):
    return Document((Sentence(tuple(Word(w, None, i + 1)
                                    for i, w in enumerate(words))),), "text")


def _python_path(module, tokenizer, word_lists):
    """What run_ner.py computes for these words: features, logits at the
    scored positions (one row per word, in order), tag ids."""
    documents = [_document(words) for words in word_lists if words]
    features = convert_documents_to_features(
        documents, tokenizer, TAGS, MAX_SEQ_LENGTH, DOC_STRIDE)
    arrays = {key: np.array([getattr(f, key) for f in features], np.int32)
              for key in ("input_ids", "input_mask", "segment_ids")}
    logits = np.asarray(module.model(arrays, training=False))
    scored = sorted((ref, row, position) for row, feature in enumerate(features)
                    for position, ref in feature.scored)
    word_logits = np.array([logits[row, position]
                            for _, row, position in scored])
    ids = predicted_label_ids(features, logits, documents)
    # As predictions.txt: entities read and written back in IOB2.
    ids = [[[TAGS.index(tag) for tag in schemes.convert_tags(
        [TAGS[i] for i in sentence], "iob2", "iob2")] for sentence in document]
        for document in ids]
    return arrays, scored, word_logits, [s for d in ids for s in d]


def _ragged_words(word_lists):
    return tf.ragged.constant(word_lists, dtype=tf.string, ragged_rank=1,
                              inner_shape=()) if any(word_lists) else (
        tf.RaggedTensor.from_row_lengths(tf.constant([], tf.string),
                                         [0] * len(word_lists)))


def _rows(outputs, name, counts):
    values = outputs[name].numpy()
    return [list(values[row, :count]) for row, count in enumerate(counts)]


@pytest.mark.slow
def test_tag_text_equals_the_python_feature_path(module, tokenizer):
    outputs = module.tag_text(tf.constant(TEXTS))
    counts = outputs["num_words"].numpy()
    words = [[w.decode("utf-8") for w in row]
             for row in _rows(outputs, "words", counts)]
    for text, row, starts, ends in zip(TEXTS, words,
                                       _rows(outputs, "word_start", counts),
                                       _rows(outputs, "word_end", counts)):
        assert [text[s:e] for s, e in zip(starts, ends)] == row
    assert counts[1] == 0 and counts[4] == 60

    arrays, scored, word_logits, tag_ids = _python_path(module, tokenizer,
                                                        words)
    assert len(arrays["input_ids"]) >= 20  # the long texts need many windows
    # The same windows, id for id, and the same scored positions.
    features, windows, positions = module.tagging_features(_ragged_words(words))
    for key in ("input_ids", "input_mask", "segment_ids"):
        np.testing.assert_array_equal(features[key].numpy(), arrays[key])
    assert list(zip(windows.numpy(), positions.numpy())) == [
        (row, position) for _, row, position in scored]

    served_logits = np.concatenate([outputs["logits"].numpy()[row, :count]
                                    for row, count in enumerate(counts)])
    np.testing.assert_allclose(served_logits, word_logits, rtol=0,
                               atol=TOLERANCE)
    served_ids = [list(row) for row in _rows(outputs, "tag_id", counts) if row]
    assert served_ids == tag_ids
    assert len({tag for row in served_ids for tag in row}) > 3
    tags = _rows(outputs, "tag", counts)
    assert [[t.decode() for t in row] for row in tags if row] == [
        [TAGS[i] for i in row] for row in tag_ids]
    probabilities = np.concatenate(_rows(outputs, "tag_probability", counts))
    # The probability of the tag given (not always the argmax's: an I-X
    # that starts an entity reads B-X).
    flat_ids = np.concatenate([row for row in tag_ids])
    np.testing.assert_allclose(
        probabilities, tf.nn.softmax(word_logits).numpy()[
            np.arange(len(flat_ids)), flat_ids], rtol=0, atol=TOLERANCE)
    assert (flat_ids != word_logits.argmax(-1)).any()   # a tag was rewritten


@pytest.mark.slow
def test_entities_follow_the_tags_and_point_into_the_text(module):
    outputs = module.tag_text(tf.constant(TEXTS))
    counts = outputs["num_words"].numpy()
    tags = [[t.decode() for t in row] for row in _rows(outputs, "tag", counts)]
    starts = _rows(outputs, "word_start", counts)
    ends = _rows(outputs, "word_end", counts)
    entity_counts = outputs["num_entities"].numpy()
    assert entity_counts.sum() > 5
    for row, text in enumerate(TEXTS):
        expected = [(e.type, starts[row][e.start], ends[row][e.end - 1])
                    for e in schemes.entity_spans(tags[row])]
        got = list(zip(*(_rows(outputs, key, entity_counts)[row] for key in (
            "entity_type", "entity_start", "entity_end"))))
        assert [(t.decode(), s, e) for t, s, e in got] == expected
        texts = _rows(outputs, "entity_text", entity_counts)[row]
        assert [t.decode() for t in texts] == [text[s:e] for _, s, e in expected]


class LookupTagger(keras.Model):
    """A stand-in model whose logits at each position are a row of `table`
    chosen by the token id: its tags are known in advance."""

    def __init__(self, table):
        super().__init__()
        self.num_labels = table.shape[1]
        self.table = self.add_weight(
            shape=table.shape, trainable=False,
            initializer=keras.initializers.Constant(table))

    def call(self, inputs, training=None):
        return tf.gather(self.table, inputs["input_ids"])


@functools.lru_cache(maxsize=None)
def _lookup_module(vocab_file):
    tokenizer = FullTokenizer(vocab_file, True)
    tags = {"john": "B-PER", "smith": "I-PER", "new": "B-LOC", "york": "I-LOC",
            "são": "B-LOC", "paulo": "I-LOC", "amélie": "B-PER",
            "poulain": "I-PER"}
    table = np.zeros((len(tokenizer.vocab), len(TAGS)), np.float32)
    table[:, 0] = 1.0
    for token, index in tokenizer.vocab.items():
        if token.startswith("##"):   # later pieces: must never be read
            table[index] = np.eye(len(TAGS))[TAGS.index("B-ORG")]
    for word, tag in tags.items():
        table[tokenizer.vocab[tokenizer.tokenize(word)[0]]] = np.eye(
            len(TAGS))[TAGS.index(tag)]
    assert len(tokenizer.tokenize("poulain")) == 3   # po ##ula ##in
    vocab = tokenizer.vocab
    return TaggerServing(LookupTagger(table), InGraphFullTokenizer(vocab_file),
                         max_seq_length=8, doc_stride=3, cls_id=vocab["[CLS]"],
                         sep_id=vocab["[SEP]"], unk_id=vocab["[UNK]"],
                         label_list=TAGS)


def test_entity_offsets_by_hand(fixtures_dir):
    module = _lookup_module(str(fixtures_dir / FIXTURE / "vocab.txt"))
    texts = ["John Smith flew from New York to São Paulo, then met Ms. "
             "Amélie Poulain.",
             "Ame\u0301lie Poulain met john smith  in new\tyork"]
    outputs = module.tag_text(tf.constant(texts))
    got = []
    for row in range(2):
        count = outputs["num_entities"].numpy()[row]
        got.append([(outputs["entity_type"][row, k].numpy().decode(),
                     int(outputs["entity_start"][row, k]),
                     int(outputs["entity_end"][row, k]),
                     outputs["entity_text"][row, k].numpy().decode())
                    for k in range(count)])
    assert got[0] == [("PER", 0, 10, "John Smith"), ("LOC", 21, 29, "New York"),
                      ("LOC", 33, 42, "São Paulo"),
                      ("PER", 57, 71, "Amélie Poulain")]
    assert got[1] == [("PER", 0, 15, "Ame\u0301lie Poulain"),
                      ("PER", 20, 30, "john smith"),
                      ("LOC", 35, 43, "new\tyork")]
    # Words are read at their first piece only: no B-ORG anywhere.
    assert b"B-ORG" not in outputs["tag"].numpy()


@pytest.mark.slow
def test_tag_words_equals_the_python_path_on_conll_tokens(module, tokenizer,
                                                          data_dir):
    """Tokens of the WNUT-17 dev file, as `run_ner.py --do_predict` reads
    them (each sentence its own document), including its tokens that BERT's
    cleaning empties (U+FE0F alone: [UNK]) or changes (U+FEFF, U+200B)."""
    documents = read_tagged_file(
        data_dir / "ner" / "wnut17" / "emerging.dev.conll", "conll",
        has_tags=False)
    lines = {6573, 16730, 15556}
    chosen = documents[:12] + [d for d in documents
                               if {w.line for w in d.words} & lines]
    word_lists = [[w.text for w in d.words] for d in chosen]
    assert any(w == "\ufe0f" for words in word_lists for w in words)
    width = max(map(len, word_lists)) + 2
    # "" pads; a gap inside a row is padding too and keeps its column.
    padded = [words[:3] + ["", ""] + words[3:] + [""] * (width - len(words) - 2)
              for words in word_lists]
    outputs = module.tag_words(tf.constant(padded))
    _, _, word_logits, tag_ids = _python_path(module, tokenizer, word_lists)
    served = outputs["tag_id"].numpy()
    tags = outputs["tag"].numpy()
    logits = outputs["logits"].numpy()
    offset = 0
    for row, words in enumerate(padded):
        columns = [c for c, w in enumerate(words) if w]
        assert list(served[row, columns]) == tag_ids[row]
        assert all(tags[row, c] == b"" for c, w in enumerate(words) if not w)
        # Another batch shape sums in another order: float32 rounding on
        # logits near 10 reaches 1.05e-5 (seen once in CI), hence rtol 1e-6
        # on top of the 1e-5 bound, as the export reload test.
        np.testing.assert_allclose(
            logits[row, columns], word_logits[offset:offset + len(columns)],
            rtol=1e-6, atol=TOLERANCE)
        offset += len(columns)
        entities = schemes.entity_spans([TAGS[i] for i in tag_ids[row]])
        count = outputs["num_entities"].numpy()[row]
        got = [(outputs["entity_type"][row, k].numpy().decode(),
                int(outputs["entity_start"][row, k]),
                int(outputs["entity_end"][row, k]),
                outputs["entity_text"][row, k].numpy().decode())
               for k in range(count)]
        real = [w for w in words if w]
        assert got == [(e.type, columns[e.start], columns[e.end - 1] + 1,
                        " ".join(real[e.start:e.end])) for e in entities]


# -- the in-graph rules against bert_tf1/data/tagging, without a model ----------------

LABEL_SETS = [schemes.scheme_labels(["LOC", "PER", "creative-work"], scheme)
              for scheme in ("iob2", "bioes")]


@pytest.mark.parametrize("labels", LABEL_SETS, ids=["iob2", "bioes"])
def test_entity_spans_follow_conlleval(labels):
    prefixes, types, names = label_tables(labels)
    rng = random.Random(len(labels))
    rows = [[rng.randrange(len(labels)) for _ in range(rng.randrange(13))]
            for _ in range(2000)]
    ragged = tf.RaggedTensor.from_row_lengths(
        tf.constant([i for row in rows for i in row], tf.int32),
        [len(row) for row in rows])
    starts, ends, type_ids = entity_spans(ragged, tf.constant(prefixes),
                                          tf.constant(types))
    for row, s, e, t in zip(rows, starts.to_list(), ends.to_list(),
                            type_ids.to_list()):
        expected = schemes.entity_spans([labels[i] for i in row])
        assert [(names[k], a, b) for a, b, k in zip(s, e, t)] == [
            tuple(x) for x in expected]


def test_label_tables_refuse_labels_without_a_scheme():
    assert label_tables(["O", "B-PER", "I-PER"]) == ([0, 1, 2], [0, 1, 1],
                                                     ["", "PER"])
    for bad in ("PER", "X-PER", "B-", "b-PER"):
        with pytest.raises(ValueError, match="not O or <prefix>-<type>"):
            label_tables(["O", bad])


def test_windows_and_max_context_follow_data_tagging():
    rng = random.Random(5)
    for max_seq_length, doc_stride in ((3, 1), (5, 2), (8, 3), (8, 20),
                                       (16, 5), (16, 14)):
        lengths = [rng.randrange(0, 60) for _ in range(12)] + [0, 1, 14, 15]
        pieces = tf.RaggedTensor.from_row_lengths(
            tf.range(1000, 1000 + sum(lengths)), lengths)
        features, spans = window_features(pieces, max_seq_length, doc_stride,
                                          101, 102)
        first_pieces = [sorted(rng.sample(range(n), rng.randrange(1, n + 1)))
                        if n else [] for n in lengths]
        positions = tf.constant([p for row in first_pieces for p in row],
                                tf.int32)
        rows = tf.constant([r for r, row in enumerate(first_pieces)
                            for _ in row], tf.int32)
        windows, where = max_context_positions(positions, rows, spans,
                                               max_seq_length, doc_stride)
        expected_ids, expected_read = [], []
        window_offset = 0
        start = 0
        for row, n in enumerate(lengths):
            python = sliding_windows(n, max_seq_length - 2, doc_stride)
            for span in python:
                ids = ([101] + list(range(1000 + start + span.start,
                                          1000 + start + span.start
                                          + span.length)) + [102])
                expected_ids.append(ids + [0] * (max_seq_length - len(ids)))
            best = max_context_windows(python, n) if n else []
            expected_read += [(window_offset + best[p],
                               p - python[best[p]].start + 1)
                              for p in first_pieces[row]]
            window_offset += len(python)
            start += n
        assert features["input_ids"].numpy().tolist() == expected_ids
        assert list(zip(windows.numpy(), where.numpy())) == expected_read


# -- exports and bad inputs ------------------------------------------------------

@pytest.mark.slow
def test_export_reloaded_in_a_fresh_process_gives_the_same(
        fixtures_dir, tagger_dir, module, tmp_path):
    fixture = fixtures_dir / FIXTURE
    export_dir = tmp_path / "tagger_export"
    # The tags come from the label_list.txt beside the checkpoint.
    run_script("export_saved_model.py", {
        "model_type": "tagger", "vocab_file": fixture / "vocab.txt",
        "bert_config_file": fixture / "bert_config.json",
        "init_checkpoint": tagger_dir, "max_seq_length": MAX_SEQ_LENGTH,
        "doc_stride": DOC_STRIDE, "export_dir": export_dir})
    for signature, inputs in (
            ("tag_text", {"text": TEXTS}),
            ("tag_words", {"words": [["John", "Smith", ""], ["in", "", "Rome"]]}),
            ("tag_ids", {key: np.array([[101, 2198, 3044, 102]] * 2, np.int32)
                         if key == "input_ids" else
                         np.array([[1, 1, 1, 1], [1, 1, 1, 0]], np.int32)
                         if key == "input_mask" else np.zeros((2, 4), np.int32)
                         for key in ("input_ids", "input_mask",
                                     "segment_ids")})):
        served = run_signature(export_dir, signature, tmp_path, **inputs)
        expected = getattr(module, signature)(**{
            k: tf.constant(v) for k, v in inputs.items()})
        assert sorted(served) == sorted(expected)
        for key, value in expected.items():
            value = value.numpy()
            if value.dtype.kind in "OSU":
                np.testing.assert_array_equal(served[key], value.astype(bytes))
            else:
                # Two processes may sum in another order (seen on an AVX-512
                # machine: 1.05e-5 on a logit of 11.6, 9e-7 relative), so
                # large logits also get float32 rounding's relative share.
                np.testing.assert_allclose(served[key], value, rtol=1e-6,
                                           atol=TOLERANCE, err_msg=key)


def _fixture_args(fixtures_dir, **extra):
    fixture = fixtures_dir / FIXTURE
    return dict(bert_config_file=str(fixture / "bert_config.json"),
                vocab_file=str(fixture / "vocab.txt"), **extra)


def test_export_needs_the_tags(fixtures_dir, tagger_dir, tmp_path):
    with pytest.raises(ValueError, match="needs its label list"):
        export_saved_model(tmp_path / "x", model_type="tagger",
                           init_checkpoint=str(tagger_dir),
                           **_fixture_args(fixtures_dir))
    with pytest.raises(ValueError, match="has 3 labels but cls/tagging/"
                       "output_weights .* has 7 rows"):
        build_serving_module("tagger", init_checkpoint=str(tagger_dir),
                             label_list=["O", "B-X", "I-X"],
                             **_fixture_args(fixtures_dir))
    assert not (tmp_path / "x").exists()


def test_export_refuses_a_checkpoint_of_another_model(fixtures_dir):
    with pytest.raises(ValueError, match="cls/tagging/output_weights"):
        build_serving_module("tagger", label_list=TAGS,
                             init_checkpoint=str(fixtures_dir / FIXTURE),
                             **_fixture_args(fixtures_dir))


@pytest.mark.slow
def test_served_tags_equal_run_ner_do_predict(fixtures_dir, tagger_dir,
                                              module, data_dir, tmp_path):
    """The same sentences through `run_ner.py --do_predict` (a subprocess,
    as a user runs it) and through `tag_words`: the same tag for every
    word, long sentences (many windows of 16 pieces) included."""
    fixture = fixtures_dir / FIXTURE
    lines = (data_dir / "ner" / "wnut17" / "emerging.dev.conll").read_text(
        encoding="utf-8").split("\n\n")[:40]
    predict_file = tmp_path / "predict.conll"
    predict_file.write_text("\n\n".join(lines) + "\n\n", encoding="utf-8")
    output_dir = tmp_path / "out"
    output_dir.mkdir()
    (output_dir / "label_list.txt").write_bytes(
        (tagger_dir / "label_list.txt").read_bytes())
    run_script("run_ner.py", {
        "vocab_file": fixture / "vocab.txt",
        "bert_config_file": fixture / "bert_config.json",
        "init_checkpoint": tagger_dir / "bert_model.ckpt",
        "do_lower_case": True, "do_predict": True,
        "predict_file": predict_file, "data_format": "conll",
        "max_seq_length": MAX_SEQ_LENGTH, "doc_stride": DOC_STRIDE,
        "output_dir": output_dir})
    predicted = [[line.split("\t") for line in block.split("\n")]
                 for block in (output_dir / "predictions.txt").read_text(
                     encoding="utf-8").strip("\n").split("\n\n")]
    word_lists = [[line.split("\t")[0] for line in block.split("\n")]
                  for block in lines]
    assert [[token for token, _ in s] for s in predicted] == word_lists
    assert max(map(len, word_lists)) > 3 * MAX_SEQ_LENGTH // 2
    width = max(map(len, word_lists))
    outputs = module.tag_words(tf.constant(
        [words + [""] * (width - len(words)) for words in word_lists]))
    served = outputs["tag"].numpy()
    expected = [[tag for _, tag in s] for s in predicted]
    for row, tags in enumerate(expected):
        assert [t.decode() for t in served[row, :len(tags)]] == tags, row
    assert len({tag for tags in expected for tag in tags}) > 2
