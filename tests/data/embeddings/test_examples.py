"""run_embeddings.py's data files: row kinds by --loss, scores, the
retrieval set, and each text packed alone."""
import pytest

from bert_tf1.data.embeddings.examples import (
    EmbeddingExample, parse_score_range, read_retrieval_file, read_sts_file,
    read_training_file)
from bert_tf1.data.embeddings.records import example_values
from bert_tf1.data.io.errors import UserError
from tests.helpers.vocab import tokenizer_for


def write(tmp_path, text, name="data.tsv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_mnrl_rows_of_two_or_three_texts(tmp_path):
    path = write(tmp_path, "a1\tp1\tn1\n\na2\tp2\tn2\n")
    examples = read_training_file(path, "mnrl", (0, 5))
    assert [e.texts for e in examples] == [("a1", "p1", "n1"),
                                           ("a2", "p2", "n2")]
    assert [e.line for e in examples] == [f"{path}:1", f"{path}:3"]
    mixed = write(tmp_path, "a1\tp1\na2\tp2\tn2\n")
    with pytest.raises(UserError, match=f"{mixed}:2: 3 columns, but "
                       f"{mixed}:1 has 2"):
        read_training_file(mixed, "mnrl", (0, 5))
    four = write(tmp_path, "a\tb\tc\td\n")
    with pytest.raises(UserError, match=":1: 4 columns; --loss=mnrl "
                       "expects 2 or 3"):
        read_training_file(four, "mnrl", (0, 5))


def test_scored_pairs_by_loss(tmp_path):
    path = write(tmp_path, "a\tb\t5\nc\td\t1.5\ne\tf\t-1\n")
    cosent = read_training_file(path, "cosent", (-1, 5))
    assert [e.score for e in cosent] == [5.0, 1.5, -1.0]
    # cosine: mapped linearly from --score_range to [0, 1]
    cosine = read_training_file(path, "cosine", (-1, 5))
    assert [e.score for e in cosine] == pytest.approx([1.0, 2.5 / 6, 0.0])
    with pytest.raises(UserError, match=r":3: score -1 is outside "
                       r"--score_range=0,5"):
        read_training_file(path, "cosine", (0, 5))
    header = write(tmp_path, "sentence1\tsentence2\tscore\na\tb\t1\n")
    with pytest.raises(UserError, match=":1: score 'score' is not a number"):
        read_sts_file(header, (0, 5))


def test_score_range_flag():
    assert parse_score_range("0,5") == (0.0, 5.0)
    assert parse_score_range("-1,1") == (-1.0, 1.0)
    for bad in ("5", "a,b", "5,0", "1,1"):
        with pytest.raises(UserError, match=f"--score_range={bad}"):
            parse_score_range(bad)


def test_retrieval_rows(tmp_path):
    path = write(tmp_path, "q1\td1\nq2\td2\nq1\td3\nq3\td1\n")
    queries, documents, relevant = read_retrieval_file(path)
    assert queries == ["q1", "q2", "q3"]
    assert documents == ["d1", "d2", "d3"]
    assert relevant == [{0, 2}, {1}, {0}]
    with pytest.raises(UserError, match=":1: 3 columns; --eval_kind="
                       "retrieval expects 2"):
        read_retrieval_file(write(tmp_path, "q\td\textra\n"))


def test_each_text_packed_alone(tmp_path_factory):
    tokenizer = tokenizer_for(tmp_path_factory, [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "dog", "runs"])
    values = example_values(
        EmbeddingExample(("The cat", "dog runs the dog"), 2.5), 2, 5,
        tokenizer)
    # [CLS] the cat [SEP] [PAD]; [CLS] dog runs the [SEP] (cut to 5)
    assert values["input_ids"] == [[2, 4, 5, 3, 0], [2, 6, 7, 4, 3]]
    assert values["input_mask"] == [[1, 1, 1, 1, 0], [1] * 5]
    assert values["segment_ids"] == [[0] * 5, [0] * 5]
    assert values["label_ids"] == [2.5]
