"""GLUE metrics beyond the original's `eval_accuracy`, in NumPy.

Own code (scikit-learn and SciPy are not dependencies), with their
definitions: F1 (MRPC, QQP), Matthews correlation (CoLA), Pearson and
Spearman (STS-B). `task_metrics` gives a task's extra `eval_results.txt` keys.
"""
import numpy as np


def _as_pair(predictions, labels, weights=None):
    """1-D float64/int arrays of equal, non-zero length; rows of weight 0
    (padding examples) dropped."""
    predictions = np.asarray(predictions)
    labels = np.asarray(labels)
    if predictions.ndim != 1 or labels.ndim != 1:
        raise ValueError("predictions and labels must be 1-D, got shapes %s "
                         "and %s" % (predictions.shape, labels.shape))
    if predictions.shape != labels.shape:
        raise ValueError("predictions and labels differ in length: %d vs %d"
                         % (predictions.shape[0], labels.shape[0]))
    if weights is not None:
        weights = np.asarray(weights).reshape(-1)
        if weights.shape != labels.shape:
            raise ValueError("weights and labels differ in length: %d vs %d"
                             % (weights.shape[0], labels.shape[0]))
        keep = weights != 0
        predictions, labels = predictions[keep], labels[keep]
    if labels.size == 0:
        raise ValueError("no examples to score")
    return predictions, labels


def accuracy(predictions, labels, weights=None):
    """Fraction of `predictions` equal to `labels` (1-D, same length).

    Same as the original's `tf.metrics.accuracy(labels, predictions,
    weights=is_real_example)` for 0/1 weights: rows with weight 0 are left
    out.
    """
    predictions, labels = _as_pair(predictions, labels, weights)
    return float(np.mean(predictions == labels))


def f1(predictions, labels, weights=None, positive_label=1):
    """F1 score of the positive class (label id `positive_label`, i.e. "1").

    f1 = 2 tp / (2 tp + fp + fn); 0.0 when there are no positive labels
    and no positive predictions (scikit-learn's convention).
    """
    predictions, labels = _as_pair(predictions, labels, weights)
    predicted = predictions == positive_label
    actual = labels == positive_label
    tp = np.sum(predicted & actual)
    fp = np.sum(predicted & ~actual)
    fn = np.sum(~predicted & actual)
    denominator = 2 * tp + fp + fn
    return float(2 * tp / denominator) if denominator else 0.0


def matthews_corrcoef(predictions, labels, weights=None):
    """Matthews correlation coefficient, multi-class form (scikit-learn's;
    0.0 for a constant prediction or label)."""
    predictions, labels = _as_pair(predictions, labels, weights)
    classes, both = np.unique(np.concatenate([predictions, labels]),
                              return_inverse=True)
    pred_idx, label_idx = both[:len(predictions)], both[len(predictions):]
    p = np.bincount(pred_idx, minlength=len(classes)).astype(np.float64)
    t = np.bincount(label_idx, minlength=len(classes)).astype(np.float64)
    c = float(np.sum(pred_idx == label_idx))
    s = float(len(labels))
    denominator = np.sqrt((s * s - p @ p) * (s * s - t @ t))
    if denominator == 0:
        return 0.0
    return float((c * s - p @ t) / denominator)


def pearson(predictions, labels, weights=None):
    """Pearson correlation of two 1-D real arrays (NaN if one is constant)."""
    x, y = _as_pair(predictions, labels, weights)
    x = x.astype(np.float64) - np.mean(x, dtype=np.float64)
    y = y.astype(np.float64) - np.mean(y, dtype=np.float64)
    denominator = np.sqrt((x @ x) * (y @ y))
    if denominator == 0:
        return float("nan")
    # Clip rounding noise so that |r| <= 1 as a correlation must be.
    return float(np.clip((x @ y) / denominator, -1.0, 1.0))


def rankdata(values):
    """1-based ranks, ties averaged (SciPy's `rankdata(method="average")`)."""
    values = np.asarray(values)
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    # Start of each run of equal values in sorted order.
    new_run = sorted_values[1:] != sorted_values[:-1]
    starts = np.flatnonzero(np.r_[True, new_run])
    ends = np.r_[starts[1:], len(values)]
    # Positions start..end-1 (0-based) share rank (start + end + 1) / 2.
    run_ranks = (starts + ends + 1) / 2.0
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.repeat(run_ranks, ends - starts)
    return ranks


def spearman(predictions, labels, weights=None):
    """Spearman rank correlation: Pearson of the average-tie ranks."""
    x, y = _as_pair(predictions, labels, weights)
    return pearson(rankdata(x), rankdata(y))


#: The names `task_metrics` returns, per normalized task name.
_TASK_METRIC_NAMES = {"stsb": ("eval_pearson", "eval_spearman"),
                      "cola": ("eval_matthews_corr",),
                      "mrpc": ("eval_f1",), "qqp": ("eval_f1",)}


def task_metric_names(task_name):
    """The keys `task_metrics(task_name, ...)` returns (tuple of str), known
    before any evaluation (a flag naming one is checked against them)."""
    task = task_name.lower().replace("-", "").replace("_", "")
    return _TASK_METRIC_NAMES.get(task, ())


def task_metrics(task_name, predictions, labels, weights=None):
    """The extra GLUE metrics of a task, keyed as in `eval_results.txt`.

    Args:
      task_name: GLUE task name (case and "-"/"_" ignored: "STS-B" = "stsb").
      predictions: class ids [N], or logits/probabilities [N, num_labels]
        (argmax taken); for STS-B the predicted scores [N] or [N, 1].
      labels: label ids [N] (STS-B: gold scores [N]).
      weights: optional [N] `is_real_example`; rows with weight 0 are left
        out.

    Returns:
      dict str -> float: "eval_f1" (MRPC, QQP), "eval_matthews_corr" (CoLA),
      "eval_pearson" and "eval_spearman" (STS-B); {} for other tasks.

    Raises:
      ValueError: bad shapes, or no example with a non-zero weight.
    """
    task = task_name.lower().replace("-", "").replace("_", "")
    predictions = np.asarray(predictions)
    if task == "stsb":
        scores = predictions.astype(np.float64)
        if scores.ndim == 2 and scores.shape[1] == 1:
            scores = scores[:, 0]
        labels = np.asarray(labels, dtype=np.float64)
        return {"eval_pearson": pearson(scores, labels, weights),
                "eval_spearman": spearman(scores, labels, weights)}
    # Logits or probabilities [N, num_labels]: their argmax.
    class_ids = (np.argmax(predictions, axis=-1) if predictions.ndim == 2
                 else predictions)
    metric = {"cola": matthews_corrcoef, "mrpc": f1, "qqp": f1}.get(task)
    # The key comes from _TASK_METRIC_NAMES; other tasks have none.
    return {name: metric(class_ids, labels, weights)
            for name in task_metric_names(task)}
