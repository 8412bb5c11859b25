"""Embedding metrics: retrieval on a hand-computed 2-D example, STS
correlations against SciPy's."""
import math

import numpy as np
import pytest

from bert_tf1.data.embeddings.metrics import (retrieval_metrics,
                                              sts_correlations)


def at(degrees, norm=1.0):
    angle = math.radians(degrees)
    return [norm * math.cos(angle), norm * math.sin(angle)]


def test_retrieval_metrics_by_hand():
    # Documents at 0, 30, 60, 90 and 180 degrees; d2 is 5 long and d4 10
    # long, so ranking by dot product instead of cosine would differ.
    documents = np.array([at(0), at(30), at(60, 5.0), at(90), at(180, 10.0)])
    queries = np.array([at(0), at(100), at(200)])
    relevant = [{1, 3}, {3}, {1}]
    # q0 (0 deg) ranks d0 d1 d2 d3 d4: relevant at ranks 2 and 4.
    #   RR 1/2; DCG 1/log2(3) + 1/log2(5), ideal 1 + 1/log2(3);
    #   recall@1 0, @3 1/2, @10 1.
    # q1 (100 deg): cosines d3 cos10, d2 cos40, d1 cos70, d4 cos80,
    #   d0 cos100: relevant d3 first: RR 1, nDCG 1, recalls 1.
    # q2 (200 deg): d4 cos20, d3 cos110, d2 cos140, d0 cos200, d1 cos170
    #   (-0.985, last): relevant at rank 5: RR 1/5, nDCG 1/log2(6),
    #   recall@1 0, @3 0, @10 1.
    ndcg_q0 = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    expected = {
        "mrr@10": (1 / 2 + 1 + 1 / 5) / 3,
        "ndcg@10": (ndcg_q0 + 1 + 1 / math.log2(6)) / 3,
        "recall@1": (0 + 1 + 0) / 3,
        "recall@3": (1 / 2 + 1 + 0) / 3,
        "recall@10": 1.0,
    }
    results = retrieval_metrics(queries, documents, relevant, ks=(1, 3, 10))
    assert set(results) == set(expected)
    for name, value in expected.items():
        assert results[name] == pytest.approx(value, abs=1e-6), name


def test_rank_cutoff_of_mrr_and_ndcg():
    """The only relevant document at rank 12: MRR@10 and nDCG@10 are 0,
    recall@10 0, recall@100 1."""
    documents = np.array([at(10 * i) for i in range(12)])
    results = retrieval_metrics(np.array([at(-1)]), documents, [{11}])
    assert results == {"mrr@10": 0.0, "ndcg@10": 0.0, "recall@1": 0.0,
                       "recall@10": 0.0, "recall@100": 1.0}


def test_retrieval_bad_relevant_sets():
    documents = np.array([at(0), at(90)])
    with pytest.raises(ValueError, match="query 0"):
        retrieval_metrics(np.array([at(0)]), documents, [set()])
    with pytest.raises(ValueError, match="below 2"):
        retrieval_metrics(np.array([at(0)]), documents, [{2}])


def test_sts_correlations_equal_scipy():
    stats = pytest.importorskip(
        "scipy.stats", reason="the reference Spearman/Pearson is scipy's (pip install scipy)")
    rng = np.random.default_rng(0)
    a = rng.normal(size=(40, 6))
    b = a + rng.normal(size=(40, 6))
    scores = np.round(rng.uniform(0, 5, 40))  # ties in the scores
    results = sts_correlations(a, b * 3.0, scores)
    cosines = np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / \
        np.linalg.norm(b, axis=-1)
    assert results["spearman"] == pytest.approx(
        stats.spearmanr(cosines, scores).statistic, abs=1e-9)
    assert results["pearson"] == pytest.approx(
        stats.pearsonr(cosines, scores).statistic, abs=1e-9)


def test_sts_correlations_by_hand():
    # Cosines 1, 0, -1 (at 0, 90 and 180 degrees from the first text)
    # against scores 5, 1, 0: the same order (Spearman 1); Pearson of
    # (1, 0, -1) and (5, 1, 0): centred (1, 0, -1) and (3, -1, -2):
    # 5 / sqrt(2 * 14).
    a = np.array([at(0), at(0), at(0)])
    b = np.array([at(0), at(90), at(180)])
    results = sts_correlations(a, b, [5.0, 1.0, 0.0])
    assert results["spearman"] == pytest.approx(1.0)
    assert results["pearson"] == pytest.approx(5 / math.sqrt(28))
