"""GLUE metrics against hand-computed values and known identities."""
import math

import numpy as np
import pytest

from bert_tf1.data.glue import metrics as gm


def test_accuracy_and_weights():
    assert gm.accuracy([1, 0, 1, 1], [1, 1, 1, 0]) == 0.5
    # Weight 0 rows (padding examples) are left out: rows 0 and 2 match.
    assert gm.accuracy([1, 0, 1, 1], [1, 1, 1, 0], weights=[1, 0, 1, 0]) == 1.0


def test_f1_hand_case():
    # tp = 2 (rows 0, 4), fp = 1 (row 1), fn = 1 (row 2): F1 = 4 / 6.
    predictions = [1, 1, 0, 0, 1]
    labels = [1, 0, 1, 0, 1]
    assert gm.f1(predictions, labels) == pytest.approx(2 / 3)
    # precision 1/4, recall 1 -> harmonic mean 2 * 0.25 / 1.25 = 0.4.
    assert gm.f1([1, 1, 1, 1], [1, 0, 0, 0]) == pytest.approx(
        2 * 0.25 * 1.0 / 1.25)


def test_f1_no_positives_is_zero():
    assert gm.f1([0, 0], [0, 0]) == 0.0
    assert gm.f1([1, 1], [0, 0]) == 0.0


def test_matthews_hand_case_and_identities():
    # tp = 2, tn = 1, fp = 1, fn = 1: (2*1 - 1*1) / sqrt(3*3*2*2) = 1/6.
    predictions = [1, 1, 0, 0, 1]
    labels = [1, 0, 1, 0, 1]
    assert gm.matthews_corrcoef(predictions, labels) == pytest.approx(1 / 6)
    labels = np.array([0, 1, 1, 0, 1, 0, 0])
    assert gm.matthews_corrcoef(labels, labels) == pytest.approx(1.0)
    assert gm.matthews_corrcoef(1 - labels, labels) == pytest.approx(-1.0)
    # A constant prediction has no correlation (denominator 0 -> 0.0).
    assert gm.matthews_corrcoef(np.ones(7), labels) == 0.0


def test_matthews_multiclass_matches_binary_and_known_value():
    # The well-known example y_true = [+1, +1, +1, -1],
    # y_pred = [+1, -1, +1, +1]: tp=2, fn=1, fp=1, tn=0 -> -1/3.
    assert gm.matthews_corrcoef([1, -1, 1, 1], [1, 1, 1, -1]) == (
        pytest.approx(-1 / 3))
    # Three classes, perfect and permuted.
    labels = [0, 1, 2, 2, 1, 0]
    assert gm.matthews_corrcoef(labels, labels) == pytest.approx(1.0)


def test_pearson_hand_case():
    assert gm.pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert gm.pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # deviations (-1.5, -.5, .5, 1.5) and (-1.5, .5, -.5, 1.5): 4 / 5.
    assert gm.pearson([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert math.isnan(gm.pearson([1, 1, 1], [1, 2, 3]))


def test_rankdata_average_ties():
    np.testing.assert_array_equal(gm.rankdata([10, 20, 20, 5]),
                                  [2.0, 3.5, 3.5, 1.0])
    np.testing.assert_array_equal(gm.rankdata([3, 3, 3]), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(gm.rankdata([0.5]), [1.0])


def test_spearman_hand_case_and_identities():
    # No ties: 1 - 6 * sum(d^2) / (n (n^2 - 1)) = 1 - 6*4/120 = 0.8.
    assert gm.spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)
    # Any strictly increasing transform gives 1.
    x = np.array([0.3, 1.7, 2.2, 4.0, 9.5])
    assert gm.spearman(x, x ** 3) == pytest.approx(1.0)
    # With ties it is the Pearson correlation of the average ranks.
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, size=50).astype(float)
    b = a + rng.normal(size=50)
    expected = gm.pearson(gm.rankdata(a), gm.rankdata(b))
    assert gm.spearman(a, b) == pytest.approx(expected)


def test_pearson_matches_numpy_corrcoef():
    rng = np.random.default_rng(1)
    x = rng.normal(size=200)
    y = 0.5 * x + rng.normal(size=200)
    assert gm.pearson(x, y) == pytest.approx(np.corrcoef(x, y)[0, 1])


def test_task_metrics_keys():
    labels = [1, 0, 1, 0, 1]
    logits = np.array([[0.1, 0.9], [0.2, 0.8], [0.7, 0.3], [0.6, 0.4],
                       [-1.0, 1.0]])  # argmax = [1, 1, 0, 0, 1]
    assert gm.task_metrics("MRPC", logits, labels) == {
        "eval_f1": pytest.approx(2 / 3)}
    assert gm.task_metrics("qqp", [1, 1, 0, 0, 1], labels) == {
        "eval_f1": pytest.approx(2 / 3)}
    assert gm.task_metrics("cola", logits, labels) == {
        "eval_matthews_corr": pytest.approx(1 / 6)}
    for task in ("mnli", "rte", "sst-2", "qnli", "wnli", "xnli"):
        assert gm.task_metrics(task, logits, labels) == {}
    stsb = gm.task_metrics("STS-B", np.array([[1.0], [2.0], [3.0], [4.0]]),
                           [1.0, 3.0, 2.0, 4.0])
    assert stsb == {"eval_pearson": pytest.approx(0.8),
                    "eval_spearman": pytest.approx(0.8)}


def test_task_metrics_drops_padding_rows():
    # Last row is a padding example (weight 0) and would spoil the score.
    result = gm.task_metrics("cola", [1, 0, 1, 0], [1, 0, 1, 1],
                             weights=[1, 1, 1, 0])
    assert result == {"eval_matthews_corr": pytest.approx(1.0)}


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="differ in length"):
        gm.accuracy([1, 0], [1, 0, 1])
    with pytest.raises(ValueError, match="no examples"):
        gm.f1([], [])
    with pytest.raises(ValueError, match="1-D"):
        gm.pearson(np.zeros((2, 2)), np.zeros((2, 2)))
