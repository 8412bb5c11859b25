"""Evaluation of sentence embeddings: STS correlations (cosine against a
human score) and retrieval over a corpus (exact nearest neighbours by
cosine, in TensorFlow).

Definitions as sentence-transformers' `EmbeddingSimilarityEvaluator`
(Spearman and Pearson of the cosine) and `InformationRetrievalEvaluator`
(MRR@k, nDCG@k with binary relevance, recall@k = relevant documents in the
top k / relevant documents), written here from those definitions.
"""
import numpy as np
import tensorflow as tf

#: Retrieval metric names for the default `ks`, in eval_results.txt order.
RETRIEVAL_METRICS = ("mrr@10", "ndcg@10", "recall@1", "recall@10",
                     "recall@100")
#: The cutoff of MRR and nDCG.
RANK_CUTOFF = 10
# Queries scored per matrix product (memory: this many x corpus floats).
_QUERY_BLOCK = 1024


def _average_ranks(values):
    """1-based ranks with ties averaged (scipy.stats.rankdata's default).
    Our own: data jobs do not import one another (glue/metrics.py has the
    same rule for its task metrics)."""
    values = np.asarray(values, np.float64)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    # Every member of a run of equal values gets the run's mean rank.
    _, inverse, counts = np.unique(values, return_inverse=True,
                                   return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return sums[inverse] / counts[inverse]


def _pearson(x, y):
    x = x - x.mean()
    y = y - y.mean()
    denominator = np.sqrt((x @ x) * (y @ y))
    if denominator == 0:
        return float("nan")
    return float(np.clip((x @ y) / denominator, -1.0, 1.0))


def _unit_rows(values):
    values = np.asarray(values, np.float64)
    return values / np.maximum(np.linalg.norm(values, axis=-1, keepdims=True),
                               1e-12)


def sts_correlations(embeddings_a, embeddings_b, scores):
    """Spearman and Pearson correlation of cos(a_i, b_i) with scores_i.

    Args:
        embeddings_a, embeddings_b: float arrays [n, hidden] (n >= 2).
        scores: float array [n], the human similarity scores.

    Returns:
        {"spearman": float, "pearson": float} (NaN when the cosines or the
        scores are constant).

    Raises:
        ValueError: shapes that do not line up, or fewer than 2 pairs.
    """
    a, b = _unit_rows(embeddings_a), _unit_rows(embeddings_b)
    scores = np.asarray(scores, np.float64).reshape(-1)
    if a.ndim != 2 or a.shape != b.shape or len(scores) != len(a):
        raise ValueError(
            f"sts_correlations needs embeddings [n, hidden] twice and scores "
            f"[n], got {a.shape}, {b.shape} and {scores.shape}.")
    if len(scores) < 2:
        raise ValueError("sts_correlations needs at least 2 pairs.")
    cosines = np.sum(a * b, axis=-1)
    return {"spearman": _pearson(_average_ranks(cosines),
                                 _average_ranks(scores)),
            "pearson": _pearson(cosines, scores)}


def nearest_documents(query_embeddings, document_embeddings, k):
    """The k documents of highest cosine per query, exact (a matrix product
    and `tf.math.top_k`, in blocks of queries).

    Args:
        query_embeddings: float [num_queries, hidden].
        document_embeddings: float [num_documents, hidden].
        k: int, at most num_documents.

    Returns:
        int32 array [num_queries, k] of document indices, best first (ties:
        the lower index first).
    """
    documents = tf.math.l2_normalize(
        tf.constant(document_embeddings, tf.float32), axis=-1)
    queries = np.asarray(query_embeddings, np.float32)
    blocks = []
    for start in range(0, len(queries), _QUERY_BLOCK):
        block = tf.math.l2_normalize(
            tf.constant(queries[start:start + _QUERY_BLOCK]), axis=-1)
        scores = tf.matmul(block, documents, transpose_b=True)
        blocks.append(tf.math.top_k(scores, k=k, sorted=True).indices.numpy())
    return np.concatenate(blocks).astype(np.int32)


def retrieval_metrics(query_embeddings, document_embeddings, relevant,
                      ks=(1, 10, 100)):
    """MRR@10, nDCG@10 and recall@k of ranking the corpus by cosine, each
    the mean over the queries.

    For a query with relevant set R and ranked documents d_1, d_2, ...:
    MRR@10 = 1 / (rank of the first relevant d_i, i <= 10), else 0;
    nDCG@10 = sum_{i <= 10, d_i in R} 1 / log2(i + 1) divided by the same sum
    for the ideal ranking (min(|R|, 10) relevant documents first);
    recall@k = |R among d_1..d_k| / |R|.

    Args:
        query_embeddings: float [num_queries, hidden].
        document_embeddings: float [num_documents, hidden].
        relevant: list (one per query) of sets of document indices, each
            non-empty.
        ks: the recall cutoffs (a cutoff above num_documents counts the
            whole corpus).

    Returns:
        {"mrr@10": float, "ndcg@10": float, "recall@<k>": float for each k}.

    Raises:
        ValueError: a query without relevant documents, an index outside
            the corpus, or a `relevant` list of another length.
    """
    num_documents = len(document_embeddings)
    if len(relevant) != len(query_embeddings):
        raise ValueError(
            f"retrieval_metrics: {len(query_embeddings)} queries but "
            f"{len(relevant)} relevant sets.")
    for index, documents in enumerate(relevant):
        if not documents or not all(0 <= d < num_documents
                                    for d in documents):
            raise ValueError(
                f"retrieval_metrics: query {index} has relevant documents "
                f"{sorted(documents)}; expected a non-empty set of indices "
                f"below {num_documents}.")
    depth = min(max(max(ks), RANK_CUTOFF), num_documents)
    ranked = nearest_documents(query_embeddings, document_embeddings, depth)
    # hits[q, i]: the document at rank i + 1 is relevant to query q.
    hits = np.array([[d in documents for d in row]
                     for row, documents in zip(ranked, relevant)], bool)
    counts = np.array([len(documents) for documents in relevant], np.float64)
    top = hits[:, :RANK_CUTOFF]
    first = np.where(top.any(axis=1), top.argmax(axis=1) + 1, np.inf)
    discounts = 1.0 / np.log2(np.arange(2, RANK_CUTOFF + 2))
    ideal = np.array([discounts[:int(min(n, RANK_CUTOFF))].sum()
                      for n in counts])
    results = {"mrr@10": float(np.mean(1.0 / first)),
               "ndcg@10": float(np.mean(
                   (top * discounts[:top.shape[1]]).sum(axis=1) / ideal))}
    for k in ks:
        results[f"recall@{k}"] = float(np.mean(
            hits[:, :k].sum(axis=1) / counts))
    return results
