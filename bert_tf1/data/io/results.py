"""Writing the scripts' result files atomically, in the original's formats
(no TensorFlow for local paths)."""
import numpy as np

from bert_tf1.data.io.atomic import write_text_atomically
from bert_tf1.data.io.errors import UserError, cut_list


class NonFiniteResultError(UserError):
    """A result holds NaN or infinity; the file is not written."""


def check_finite_values(path, results):
    """Raises unless every float in `results` (dict key -> value) is finite.

    Raises:
        NonFiniteResultError: names the file and the keys.
    """
    bad = [f"{key} = {results[key]}" for key in sorted(results)
           if isinstance(results[key], (float, np.floating))
           and not np.isfinite(results[key])]
    if bad:
        raise NonFiniteResultError(
            f"{path} not written: {cut_list(bad)} (not finite). The model's "
            "outputs are not numbers: its weights hold NaN/Inf or its "
            "computation overflowed.")


def check_finite_rows(path, rows, what="row"):
    """Raises unless every value of `rows` (array [N, ...]) is finite.

    Raises:
        NonFiniteResultError: names `path`, how many rows (`what`s) hold
            NaN/Inf and the first few (0-based).
    """
    rows = np.asarray(rows)
    if rows.size == 0 or np.isfinite(rows).all():
        return
    flat = rows.reshape(len(rows), -1) if rows.ndim > 1 else rows[:, None]
    bad = np.flatnonzero(~np.isfinite(flat).all(axis=1))
    raise NonFiniteResultError(
        f"{path} not written: {len(bad)} of {len(rows)} {what}s have NaN/Inf "
        f"outputs ({what} {cut_list(bad.tolist())}). The model's weights "
        "hold NaN/Inf or its computation overflowed.")


def format_value(value):
    """A metric as the original prints it: float32 `str`, ints as ints."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(np.float32(value))


def write_key_value_file(path, results):
    """`key = value` lines with sorted keys, as the original's `eval_results.txt`.

    Raises:
        NonFiniteResultError: a value is NaN or infinite (nothing written).

    Source: the writer loop at the end of `main` in the original
    `run_classifier.py` and `run_pretraining.py`.
    """
    check_finite_values(path, results)
    lines = [f"{key} = {format_value(results[key])}\n" for key in sorted(results)]
    write_text_atomically(path, "".join(lines))


def format_test_results(probabilities):
    """The text of test_results.tsv: one line per example, its values
    tab-separated as `str(np.float32(p))`, no header.

    `probabilities`: float [num_examples, k] (class or choice
    probabilities, or [num_examples, 1] regression scores), in input order.

    Raises:
      ValueError: not 2-D.

    Source: run_classifier.py `main`, the `do_predict` writer
    (`"\\t".join(str(class_probability) ...)` of float32 values).
    """
    rows = np.asarray(probabilities, dtype=np.float32)
    if rows.ndim != 2 or rows.shape[1] < 1:
        raise ValueError("expected probabilities of shape [num_examples, "
                         "num_choices], got %s" % (rows.shape,))
    return "".join("\t".join(str(np.float32(p)) for p in row) + "\n"
                   for row in rows)


def eval_predictions_text(guids, label_list, label_ids, values,
                          is_regression):
    """The text of the classifier's eval_predictions.tsv (each dev example's
    gold and predicted label): a header, then one row per example.

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
