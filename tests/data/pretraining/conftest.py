"""Fixtures of the pre-training data tests: the tokenizer, documents and
vocab they build on."""
import pytest

from bert_tf1.data.pretraining import instances as instances_lib
from bert_tf1.data.pretraining.corpus import TextRange, iter_lines
from bert_tf1.data.tokenization import FullTokenizer


@pytest.fixture(scope="module")
def uncased_tokenizer(data_dir):
    return FullTokenizer(
        data_dir / "bert_models/uncased_L-12_H-768_A-12/vocab.txt", True)


@pytest.fixture(scope="module")
def sample_documents(data_dir, uncased_tokenizer):
    path = str(data_dir / "pretraining/sample_text.txt")
    return instances_lib.read_documents(iter_lines(TextRange(path)),
                                        uncased_tokenizer)


@pytest.fixture(scope="module")
def corpus_documents(data_dir, uncased_tokenizer):
    path = str(data_dir / "pretraining/corpus.txt")
    return instances_lib.read_documents(iter_lines(TextRange(path)),
                                        uncased_tokenizer)


@pytest.fixture
def tiny_vocab(tmp_path):
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat",
             "sat", "on", "mat", "a", "dog", "ran", ".", "un", "##seen",
             "##s", "big"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def script_vocab(tmp_path):
    """A 15-token vocab for runs of the whole pipeline (str path)."""
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat",
             "sat", "on", "mat", "a", "dog", "ran", ".", "big"]
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return str(path)
