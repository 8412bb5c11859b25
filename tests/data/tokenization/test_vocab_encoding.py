"""A vocab that is not UTF-8 is an error naming the file and line (the
original's strict tf.gfile reader fails on it; bytes were dropped here)."""
import pytest

from bert_tf1.data.tokenization.vocab import VocabEncodingError, load_vocab


def test_non_utf8_vocab_line_is_named(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"[PAD]\n[UNK]\ncaf\xe9\nthe\n")
    with pytest.raises(VocabEncodingError) as error:
        load_vocab(path)
    message = str(error.value)
    assert f"{path}, line 3" in message and "0xe9" in message and "UTF-8" in message


def test_utf8_vocab_still_reads(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("[PAD]\ncafé\n", encoding="utf-8")
    assert load_vocab(path) == {"[PAD]": 0, "café": 1}
