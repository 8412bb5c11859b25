"""The classifier's eval_predictions.tsv (each dev example's gold and
predicted label); test_results.tsv is bert_tf1.data.io.results's."""
import numpy as np


def eval_predictions_text(guids, label_list, label_ids, values,
                          is_regression):
    """The text of eval_predictions.tsv: a header, then one row per example.

    Columns: `guid`, `gold_label`, `predicted_label`, `probability_<label>`
    per label; regression: `guid`, `gold_score`, `predicted_score`.

    Args:
        guids: the examples' guids, in file order.
        label_list: list of str.
        label_ids: int [num_examples] (float for regression).
        values: float [num_examples, num_labels] probabilities, or
            [num_examples, 1] scores.
        is_regression: bool.
    """
    if is_regression:
        header = ["guid", "gold_score", "predicted_score"]
        rows = [[guid, str(np.float32(gold)), str(np.float32(row[0]))]
                for guid, gold, row in zip(guids, label_ids, values)]
    else:
        header = ["guid", "gold_label", "predicted_label"] + [
            f"probability_{label}" for label in label_list]
        rows = [[guid, label_list[int(gold)],
                 label_list[int(np.argmax(row))]]
                + [str(np.float32(value)) for value in row]
                for guid, gold, row in zip(guids, label_ids, values)]
    return "".join("\t".join(row) + "\n" for row in [header] + rows)
