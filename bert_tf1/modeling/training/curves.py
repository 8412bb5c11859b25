"""`output_dir/training_curves.png`, drawn from the TensorBoard events
(`summaries`, so across resumes): training loss, learning rate and the
evaluations' numbers against the global step. Needs matplotlib (the
`plots` extra); without it, one log line and no file.
"""
import io
import os

from absl import logging

from bert_tf1.data.io.atomic import write_bytes_atomically
from bert_tf1.modeling.training import summaries

CURVES_FILE = "training_curves.png"
# Counts rather than metrics (SQuAD's `total`, `HasAns_total`, ...).
_NOT_PLOTTED = ("total",)


def _matplotlib_figure():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return None
    # No pyplot: the process-wide backend and figure list stay untouched.
    figure = Figure(figsize=(7.0, 8.0), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def _draw(axes, points, label, style="-"):
    steps = [step for step, _ in points]
    values = [value for _, value in points]
    axes.plot(steps, values, style, label=label)


def _split_eval(eval_scalars):
    losses, metrics = {}, {}
    for tag, points in sorted(eval_scalars.items()):
        if tag.endswith(_NOT_PLOTTED) or (tag == "loss"
                                          and "eval_loss" in eval_scalars):
            continue  # a count; or the Estimator's batch-mean twin of eval_loss
        (losses if "loss" in tag else metrics)[tag] = points
    return losses, metrics


def write_training_curves(output_dir):
    """Draws `output_dir/training_curves.png` from the run's events.

    Returns:
        the path written, or None (no matplotlib, or no training events).
    """
    train = summaries.read_scalars(output_dir)
    if "loss" not in train:
        return None
    figure = _matplotlib_figure()
    if figure is None:
        logging.info("matplotlib is not installed: no %s (pip install -e "
                     "'.[plots]' to get it).", CURVES_FILE)
        return None
    eval_losses, eval_metrics = _split_eval(summaries.read_scalars(
        os.path.join(output_dir, summaries.EVAL_SUBDIR)))
    panels = 3 if eval_metrics else 2
    loss_axes = figure.add_subplot(panels, 1, 1)
    _draw(loss_axes, train["loss"], "training loss (that step)")
    for tag, points in eval_losses.items():
        _draw(loss_axes, points, f"evaluation: {tag}", "o--")
    loss_axes.set_ylabel("loss")
    loss_axes.legend(fontsize="small")
    rate_axes = figure.add_subplot(panels, 1, 2, sharex=loss_axes)
    if "learning_rate" in train:
        _draw(rate_axes, train["learning_rate"], "learning rate")
    rate_axes.set_ylabel("learning rate")
    if eval_metrics:
        metric_axes = figure.add_subplot(panels, 1, 3, sharex=loss_axes)
        for tag, points in eval_metrics.items():
            _draw(metric_axes, points, tag, "o-")
        metric_axes.set_ylabel("evaluation")
        metric_axes.legend(fontsize="small")
    figure.axes[-1].set_xlabel("global step")
    figure.suptitle(os.path.basename(os.path.normpath(output_dir)))
    # Fixed margins, not `tight_layout()`: that measures every tick label
    # once more before the drawing does (40% of the drawing's CPU, measured).
    figure.subplots_adjust(left=0.12, right=0.97, bottom=0.06, top=0.94,
                           hspace=0.18)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    path = os.path.join(output_dir, CURVES_FILE)
    write_bytes_atomically(path, buffer.getvalue())
    logging.info("Wrote %s.", path)
    return path
