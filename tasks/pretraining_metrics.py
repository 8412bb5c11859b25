"""Evaluation metrics of pre-training, as the original's eval_results.txt:
run_pretraining.py's metric_fn plus the Estimator's `loss`, accumulated in
float64 with the training loss's per-example losses."""
import numpy as np

from bert_tf1.modeling.models.losses import per_example_log_prob_loss


def _per_example_loss(log_probs, labels):
    return np.asarray(per_example_log_prob_loss(log_probs, labels), np.float64)


class PretrainingMetrics:
    """Accumulates the original's pre-training evaluation metrics (`update`
    per batch, then `result()`): masked_lm_accuracy and masked_lm_loss
    weighted by masked_lm_weights, next_sentence_accuracy and
    next_sentence_loss, and loss (the mean of each batch's training loss).

    Source: run_pretraining.py, model_fn (metric_fn) and the Estimator's loss.
    """

    def __init__(self):
        self._mlm_correct = 0.0
        self._mlm_loss = 0.0
        self._mlm_weight = 0.0
        self._nsp_correct = 0.0
        self._nsp_loss = 0.0
        self._nsp_count = 0
        self._batch_losses = []

    def update(self, masked_lm_log_probs, masked_lm_ids, masked_lm_weights,
               next_sentence_log_probs, next_sentence_labels):
        """Adds one batch: log-probs float [B, P, V] (or [B * P, V]), ids
        int and weights float [B, P]; next-sentence log-probs float [B, 2]
        and labels int [B] (or [B, 1])."""
        log_probs = np.asarray(masked_lm_log_probs, np.float64)
        log_probs = log_probs.reshape(-1, log_probs.shape[-1])
        ids = np.asarray(masked_lm_ids).reshape(-1)
        weights = np.asarray(masked_lm_weights, np.float64).reshape(-1)
        mlm_example_loss = _per_example_loss(log_probs, ids)
        self._mlm_correct += float(
            (weights * (log_probs.argmax(-1) == ids)).sum())
        self._mlm_loss += float((weights * mlm_example_loss).sum())
        self._mlm_weight += float(weights.sum())

        nsp = np.asarray(next_sentence_log_probs, np.float64)
        labels = np.asarray(next_sentence_labels).reshape(-1)
        nsp_example_loss = _per_example_loss(nsp, labels)
        self._nsp_correct += float((nsp.argmax(-1) == labels).sum())
        self._nsp_loss += float(nsp_example_loss.sum())
        self._nsp_count += len(labels)

        batch_mlm_loss = ((weights * mlm_example_loss).sum()
                          / (weights.sum() + 1e-5))
        self._batch_losses.append(batch_mlm_loss + nsp_example_loss.mean())

    def result(self):
        """dict of the five metrics (floats); raises ValueError if empty."""
        if not self._batch_losses:
            raise ValueError("no evaluation batch was seen")
        return {
            "loss": float(np.mean(self._batch_losses)),
            "masked_lm_accuracy": self._mlm_correct / self._mlm_weight
            if self._mlm_weight else 0.0,
            "masked_lm_loss": self._mlm_loss / self._mlm_weight
            if self._mlm_weight else 0.0,
            "next_sentence_accuracy": self._nsp_correct / self._nsp_count,
            "next_sentence_loss": self._nsp_loss / self._nsp_count,
        }
