"""benchmarks/embedding_data.py: the split rules and the batch order both
sides of benchmarks/embeddings.py train on (standard library only, fast)."""
import importlib.util

import pytest

from tests.conftest import REPO_ROOT, SHARED_DIR


@pytest.fixture(scope="module")
def data():
    spec = importlib.util.spec_from_file_location(
        "embedding_data", REPO_ROOT / "benchmarks" / "embedding_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sentence_rule(data):
    text = ('It rained.  "Why?" she asked. It cost 3.5 dollars, e.g. a '
            'coffee! (Then) it stopped')
    assert [text[a:b] for a, b in data.split_sentences(text)] == [
        "It rained.", '"Why?" she asked.',
        "It cost 3.5 dollars, e.g. a coffee!", "(Then) it stopped"]
    assert data.clean(" a\n b\t c ") == "a b c"


def test_batch_order_has_full_batches_of_distinct_texts(data):
    # Rows sharing a positive ("p0" three times) never meet in a batch.
    pairs = [(f"q{i}", f"p{min(i, 2) if i < 3 else i}") for i in range(23)]
    batches = data.batch_order(pairs, batch_size=4, epochs=2, seed=7)
    assert batches == data.batch_order(pairs, 4, 2, seed=7)
    assert batches != data.batch_order(pairs, 4, 2, seed=8)
    assert all(len(batch) == 4 for batch in batches)
    for batch in batches:
        texts = [text for row in batch for text in pairs[row]]
        assert len(texts) == len(set(texts)), batch
    # each epoch uses each row at most once; 23 rows make 5 full batches
    assert len(batches) == 10
    for epoch in (batches[:5], batches[5:]):
        rows = [row for batch in epoch for row in batch]
        assert len(rows) == len(set(rows))
    plain = data.batch_order(pairs, 4, 1, distinct_texts=False)
    assert sorted(row for batch in plain for row in batch) != list(range(23))
    assert len(plain) == 5


@pytest.mark.skipif(not (SHARED_DIR / "data" / "glue").is_dir(),
                    reason="needs ../shared/data")
def test_the_splits(data):
    train, dev = data.sts_b("train"), data.sts_b("dev")
    assert (len(train), len(dev)) == (5749, 1500)
    assert all(0.0 <= score <= 5.0 for _, _, score in train + dev)
    # quotechar=None: a text with an odd number of quotes joins no lines
    assert any(a.count('"') % 2 for a, _, _ in train + dev)
    pairs, evaluation = data.qnli()
    queries = set(evaluation["queries"])
    assert not queries & {question for question, _ in pairs}
    assert all(evaluation["relevant"]) and len(queries) == len(
        evaluation["queries"])
    corpus = evaluation["corpus"]
    assert len(corpus) == len(set(corpus))
    squad_pairs, squad_eval = data.squad()
    assert not set(squad_eval["queries"]) & {q for q, _ in squad_pairs}
    assert all(max(ids) < len(squad_eval["corpus"])
               for ids in squad_eval["relevant"])
