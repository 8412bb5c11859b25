"""Evaluation during training of a `bert_tf1.tasks.fine_tuning.FineTuningTask`:
--eval_every_epoch or --eval_steps, and what rests on them,
--keep_best_checkpoint and --early_stopping_patience (the flags:
`bert_tf1.tasks.script_flags.define_evaluation_flags`).
"""
import math

from bert_tf1.modeling.training import evaluation
from bert_tf1.tasks import checks
from bert_tf1.tasks.errors import UserError


def requested(config):
    """True when `config` asks for evaluations during training."""
    return bool(getattr(config, "eval_every_epoch", False)
                or getattr(config, "eval_steps", 0))


def check_flags(task):
    """Evaluation during training needs eval data (`task` reads it); best
    and patience need evaluations."""
    config = task.config
    if config.eval_steps and config.eval_steps < 0:
        raise UserError(f"--eval_steps={config.eval_steps}: expected a "
                        "number of steps > 0 (or 0: no evaluation)")
    if not requested(config):
        if config.keep_best_checkpoint or config.early_stopping_patience:
            raise UserError("--keep_best_checkpoint and "
                            "--early_stopping_patience need "
                            "--eval_every_epoch or --eval_steps")
        return
    task.examples_of("eval")
    if config.early_stopping_patience and not config.keep_best_checkpoint:
        raise UserError("--early_stopping_patience needs "
                        "--keep_best_checkpoint=<metric> to compare")
    if config.keep_best_checkpoint:
        checks.check_metric_name(config.keep_best_checkpoint,
                                 task.metric_names())


def callbacks(task, num_examples):
    """`task`'s evaluation-during-training callback, when asked for: every
    eval_steps steps, else every ceil(examples / train_batch_size)."""
    config = task.config
    if not requested(config):
        return []

    def evaluate_fn():
        task.global_step = int(task.model.optimizer.iterations.numpy())
        return task.evaluate(write=False)

    every = int(config.eval_steps) if config.eval_steps else math.ceil(
        num_examples / config.train_batch_size)
    return [evaluation.EvaluateDuringTraining(
        evaluate_fn, every, config.output_dir,
        keep_best_metric=config.keep_best_checkpoint or None,
        early_stopping_patience=config.early_stopping_patience or None,
        model=task.model)]
