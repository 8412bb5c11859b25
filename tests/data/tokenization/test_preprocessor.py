"""BertPreprocessor gives the scripts' features: MRPC pairs (bert_tf1/data/glue),
SQuAD question/context pairs that fit one window (bert_tf1/data/squad) and corpus
lines as single texts (FullTokenizer + the original's packing)."""
import time

import numpy as np
import pytest

from bert_tf1.data.glue.features import convert_single_example
from bert_tf1.data.glue.processors import MrpcProcessor
from bert_tf1.data.tokenization import BertPreprocessor, FullTokenizer
from bert_tf1.data.tokenization.packing import pack_tokens

KEYS = ("input_ids", "input_mask", "segment_ids")
# The first lines of corpus.txt (10,000: about 3 s in-graph plus 6 s for
# the Python reference on one core).
CORPUS_LINES = 10000


@pytest.fixture(scope="module")
def folder(fixtures_dir):
    return fixtures_dir / "tf1_vocab_mrpc_classifier"


@pytest.fixture(scope="module")
def tokenizer(folder):
    return FullTokenizer(str(folder / "vocab.txt"), do_lower_case=True)


def as_arrays(features):
    return {key: np.array([getattr(f, key) for f in features], np.int32)
            for key in KEYS}


def assert_same(ours, expected):
    for key in KEYS:
        np.testing.assert_array_equal(np.asarray(ours[key]), expected[key],
                                      err_msg=key)


@pytest.mark.parametrize("sequence_length", [128, 24])
def test_mrpc_pairs_equal_the_scripts_features(data_dir, folder, tokenizer,
                                               sequence_length):
    examples = MrpcProcessor().get_dev_examples(str(data_dir / "glue/MRPC"))
    examples = examples[:300]
    expected = as_arrays([convert_single_example(
        i, example, ["0", "1"], sequence_length, tokenizer)
        for i, example in enumerate(examples)])
    preprocessor = BertPreprocessor.from_checkpoint(
        folder, sequence_length=sequence_length)
    assert preprocessor.do_lower_case is True
    ours = preprocessor(([e.text_a for e in examples],
                         [e.text_b for e in examples]))
    assert all(ours[key].dtype == "int32" for key in KEYS)
    assert_same(ours, expected)
    if sequence_length == 24:  # truncation happened
        assert expected["input_mask"].sum(1).max() == 24


def test_squad_question_context_pairs(fixtures_dir, tokenizer, folder):
    from bert_tf1.data.squad.examples import read_squad_examples
    from bert_tf1.data.squad.features import convert_examples_to_features

    examples = read_squad_examples(str(
        fixtures_dir / "tf1_vocab_squad/squad_v1_sample/input.json"), False)
    features = []
    convert_examples_to_features(examples, tokenizer, 384, 128, 64, False,
                                 features.append)
    windows = {}
    for feature in features:
        windows.setdefault(feature.example_index, []).append(feature)
    single = [index for index, found in sorted(windows.items())
              if len(found) == 1
              and len(tokenizer.tokenize(examples[index].question_text)) <= 64]
    assert len(single) >= 20
    preprocessor = BertPreprocessor.from_checkpoint(folder,
                                                    sequence_length=384)
    ours = preprocessor(([examples[i].question_text for i in single],
                         [" ".join(examples[i].doc_tokens) for i in single]))
    assert_same(ours, as_arrays([windows[i][0] for i in single]))


def test_corpus_lines_as_single_texts(data_dir, folder, tokenizer):
    with open(data_dir / "pretraining/corpus.txt", encoding="utf-8") as f:
        lines = [next(f).rstrip("\n") for _ in range(CORPUS_LINES)]
    expected = [pack_tokens(tokenizer.tokenize(line)[:126], None, 128,
                            tokenizer) for line in lines]
    preprocessor = BertPreprocessor.from_checkpoint(folder)
    start = time.perf_counter()
    ours = {key: np.concatenate([np.asarray(batch[key]) for batch in (
        preprocessor(lines[i:i + 1000]) for i in range(0, len(lines), 1000))])
        for key in KEYS}
    seconds = time.perf_counter() - start
    assert_same(ours, {key: np.array([getattr(p, key) for p in expected])
                       for key in KEYS})
    assert seconds < 60


def test_longest_in_batch_and_config(folder, tokenizer):
    preprocessor = BertPreprocessor.from_checkpoint(folder,
                                                    sequence_length=None)
    texts_a = ["The cat sat.", "A much longer first text, with commas."]
    texts_b = ["On the mat!", ""]
    ours = preprocessor((texts_a, texts_b))
    packed = [pack_tokens(tokenizer.tokenize(a), tokenizer.tokenize(b) or None,
                          64, tokenizer) for a, b in zip(texts_a, texts_b)]
    longest = max(len(p.tokens) for p in packed)
    assert ours["input_ids"].shape == (2, longest)
    assert_same(ours, {key: np.array([getattr(p, key)[:longest]
                                      for p in packed]) for key in KEYS})
    config = preprocessor.get_config()
    assert config["sequence_length"] is None
    assert config["do_lower_case"] is True


def test_lower_case_from_the_folder(tmp_path, folder):
    cased = tmp_path / "cased_L-12_H-768_A-12"
    cased.mkdir()
    (cased / "vocab.txt").write_bytes((folder / "vocab.txt").read_bytes())
    assert BertPreprocessor.from_checkpoint(cased).do_lower_case is False
    (cased / "tokenizer_config.json").write_text('{"do_lower_case": true}')
    assert BertPreprocessor.from_checkpoint(cased).do_lower_case is True
    with pytest.raises(FileNotFoundError, match="No vocab file"):
        BertPreprocessor.from_checkpoint(tmp_path / "nothing")
