"""Evaluation during training: the history, the best checkpoint in best/,
early stopping and its record, and a resume that carries them on."""
import json

import numpy as np
import pytest
import tensorflow as tf

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling import BertClassifier, BertConfig, checkpoints
from bert_tf1.modeling.naming import tf1_name
from bert_tf1.modeling.optimization import create_optimizer
from bert_tf1.modeling.training import (EvaluateDuringTraining, best_checkpoint,
                                        latest_training_checkpoint, read_history,
                                        read_scalars, run_training, stopped_early)
from bert_tf1.modeling.training.evaluation import lower_is_better
from bert_tf1.modeling.training.runtime import RuntimeOptions
from tests.helpers.fixture_models import random_classifier_batches


class Scripted:
    """An evaluate_fn returning scripted numbers, one dict per call; keeps
    the model's trainable weights at each call, by global step."""

    def __init__(self, model, accuracies, losses=None):
        self.model = model
        self.accuracies = list(accuracies)
        self.losses = list(losses) if losses else [1.0 - a for a in accuracies]
        self.steps = []
        self.weights = {}

    def __call__(self):
        step = int(self.model.optimizer.iterations.numpy())
        self.weights[step] = {tf1_name(v): v.numpy()
                              for v in self.model.trainable_weights}
        index = len(self.steps)
        self.steps.append(step)
        return {"eval_accuracy": np.float32(self.accuracies[index]),
                "eval_loss": self.losses[index]}


def _model(fixtures_dir):
    config = BertConfig.from_json_file(
        fixtures_dir / "tf1_tiny_classifier/bert_config.json")
    return BertClassifier(config, num_labels=3)


def _train(model, output_dir, steps, evaluate, save_every=100):
    options = RuntimeOptions(save_checkpoints_steps=save_every,
                             keep_checkpoint_max=0)
    # The schedule's end is past the last step: every step moves the weights.
    return run_training(model, create_optimizer(1e-3, 100, 0),
                        random_classifier_batches(model.config), steps,
                        str(output_dir), options, batch_size=4, verbose=0,
                        callbacks=[evaluate] if evaluate else None)


def _compiled(fixtures_dir):
    """A built, compiled model with a built optimizer at step 0 (no fit)."""
    model = _model(fixtures_dir)
    model(random_classifier_batches(model.config).take(1).get_single_element()[0])
    optimizer = create_optimizer(1e-3, 100, 0)
    model.compile(optimizer=optimizer)
    optimizer.build(model.trainable_variables)
    return model


def _drive(callback, model, start, steps):
    """Calls `callback`'s hooks as `fit` does, from global step `start`
    through `steps` (the optimizer's step is set; no training), until it
    stops training."""
    model.optimizer.iterations.assign(start)
    model.stop_training = False
    callback.set_model(model)
    callback.on_train_begin()
    for step in steps:
        model.optimizer.iterations.assign(step)
        callback.on_train_batch_end(0)
        if model.stop_training:
            break
    callback.on_train_end()


def test_the_best_of_three_evaluations_is_kept(fixtures_dir, tmp_path):
    model = _model(fixtures_dir)
    scripted = Scripted(model, [0.5, 0.8, 0.6], losses=[0.3, 0.6, 0.2])
    evaluate = EvaluateDuringTraining(scripted, 2, tmp_path,
                                      keep_best_metric="eval_accuracy")
    result = _train(model, tmp_path, 5, evaluate)
    assert result["global_step"] == 5
    # Every 2 steps, and at the end of training (step 5).
    assert scripted.steps == [2, 4, 5]
    history = read_history(tmp_path)
    assert [r["global_step"] for r in history] == [2, 4, 5]
    assert [r["eval_accuracy"] for r in history] == [0.5, 0.8, 0.6]
    assert [r["eval_loss"] for r in history] == [0.3, 0.6, 0.2]
    assert not stopped_early(tmp_path)

    best = best_checkpoint(tmp_path)
    assert best == str(tmp_path / "best" / "model.ckpt-4")
    assert sorted(p.name for p in (tmp_path / "best").glob("*.index")) == [
        "model.ckpt-4.index"]
    # The folder is a checkpoint for --init_checkpoint and the loaders.
    assert checkpoints.resolve_checkpoint(str(tmp_path / "best")) == best
    reader = tf.train.load_checkpoint(best)
    assert int(reader.get_tensor("global_step")) == 4
    assert not any(name.endswith("/adam_m")
                   for name in reader.get_variable_to_shape_map())
    moved = False
    for name, value in scripted.weights[4].items():
        np.testing.assert_array_equal(reader.get_tensor(name), value)
        moved |= not np.array_equal(value, scripted.weights[5][name])
    assert moved  # the weights of step 4 are not those of step 5
    fresh = _model(fixtures_dir)
    checkpoints.load_tf1_checkpoint(fresh, str(tmp_path / "best"), verbose=False)
    for variable in fresh.trainable_weights:
        np.testing.assert_array_equal(variable.numpy(),
                                      scripted.weights[4][tf1_name(variable)])

    lines = (tmp_path / "best" / "eval_results.txt").read_text().splitlines()
    assert lines == ["eval_accuracy = 0.8", "eval_loss = 0.6", "global_step = 4"]
    scalars = read_scalars(str(tmp_path / "eval"))
    assert [(s, round(v, 6)) for s, v in scalars["eval_accuracy"]] == [
        (2, 0.5), (4, 0.8), (5, 0.6)]
    # The training's own final checkpoint is still written.
    assert latest_training_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-5")


def test_eval_loss_is_better_lower(fixtures_dir, tmp_path):
    assert lower_is_better("eval_loss") and lower_is_better("masked_lm_loss")
    assert not lower_is_better("eval_accuracy") and not lower_is_better("f1")
    model = _compiled(fixtures_dir)
    scripted = Scripted(model, [0.5, 0.8, 0.6, 0.9], losses=[0.3, 0.6, 0.2, 0.25])
    evaluate = EvaluateDuringTraining(scripted, 1, tmp_path,
                                      keep_best_metric="eval_loss")
    _drive(evaluate, model, 0, [1, 2, 3, 4])
    assert scripted.steps == [1, 2, 3, 4]
    assert (evaluate.best_step, evaluate.best_value) == (3, 0.2)
    assert evaluate.evaluations_without_improvement == 1
    assert best_checkpoint(tmp_path) == str(tmp_path / "best" / "model.ckpt-3")
    # One best checkpoint kept: step 1's was replaced.
    assert sorted(p.name for p in (tmp_path / "best").iterdir()) == [
        "checkpoint", "eval_results.txt", "model.ckpt-3.data-00000-of-00001",
        "model.ckpt-3.index"]
    assert "eval_loss = 0.2" in (tmp_path / "best" / "eval_results.txt").read_text()


def test_a_tie_is_no_improvement_and_keeps_the_earlier_best(fixtures_dir, tmp_path):
    model = _compiled(fixtures_dir)
    scripted = Scripted(model, [0.5, 0.8, 0.8, 0.8])
    evaluate = EvaluateDuringTraining(scripted, 1, tmp_path,
                                      keep_best_metric="eval_accuracy",
                                      early_stopping_patience=2)
    _drive(evaluate, model, 0, [1, 2, 3, 4, 5])
    # Steps 3 and 4 tie step 2: two evaluations without improvement stop.
    assert scripted.steps == [1, 2, 3, 4]
    assert (evaluate.best_step, evaluate.evaluations_without_improvement) == (2, 2)
    assert evaluate.stopped_at == 4
    assert best_checkpoint(tmp_path) == str(tmp_path / "best" / "model.ckpt-2")


def test_early_stopping_stops_and_a_rerun_trains_no_further(fixtures_dir, tmp_path):
    model = _model(fixtures_dir)
    scripted = Scripted(model, [0.5, 0.7, 0.6, 0.65, 0.9, 0.9])
    evaluate = EvaluateDuringTraining(scripted, 1, tmp_path,
                                      keep_best_metric="eval_accuracy",
                                      early_stopping_patience=2)
    result = _train(model, tmp_path, 10, evaluate)
    # Best at step 2; steps 3 and 4 do not improve: stop after step 4.
    assert result["global_step"] == 4
    assert scripted.steps == [1, 2, 3, 4]
    assert latest_training_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-4")
    assert best_checkpoint(tmp_path) == str(tmp_path / "best" / "model.ckpt-2")
    assert stopped_early(tmp_path)
    history = read_history(tmp_path)
    assert [r.get("early_stopped", False) for r in history] == [
        False, False, False, True]

    files = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    again = _model(fixtures_dir)
    rerun = Scripted(again, [0.99] * 6)
    result = _train(again, tmp_path, 10, EvaluateDuringTraining(
        rerun, 1, tmp_path, keep_best_metric="eval_accuracy",
        early_stopping_patience=2))
    assert result == {"loss": None, "global_step": 4}
    assert rerun.steps == []
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")
            if p.is_file()} == files
    # The model holds the stopped run's final weights (model.ckpt-4).
    reader = tf.train.load_checkpoint(str(tmp_path / "model.ckpt-4"))
    for variable in again.trainable_weights:
        np.testing.assert_array_equal(variable.numpy(),
                                      reader.get_tensor(tf1_name(variable)))


def test_a_metric_it_does_not_return_is_named_with_those_it_does(fixtures_dir,
                                                                 tmp_path):
    model = _compiled(fixtures_dir)
    evaluate = EvaluateDuringTraining(Scripted(model, [0.5]), 1, tmp_path,
                                      keep_best_metric="eval_f1")
    with pytest.raises(UserError) as error:
        _drive(evaluate, model, 0, [1])
    message = str(error.value)
    assert "\n" not in message
    assert "'eval_f1'" in message and "eval_accuracy, eval_loss" in message
    assert read_history(tmp_path) == []
    assert best_checkpoint(tmp_path) is None

    with pytest.raises(UserError, match="needs keep_best_metric"):
        EvaluateDuringTraining(dict, 1, tmp_path, early_stopping_patience=2)
    with pytest.raises(UserError, match="every_steps"):
        EvaluateDuringTraining(dict, 0, tmp_path)


def test_history_best_and_patience_survive_a_resume(fixtures_dir, tmp_path):
    model = _compiled(fixtures_dir)
    first = Scripted(model, [0.5, 0.8])
    _drive(EvaluateDuringTraining(first, 2, tmp_path,
                                  keep_best_metric="eval_accuracy",
                                  early_stopping_patience=2),
           model, 0, [1, 2, 3, 4])
    assert [r["global_step"] for r in read_history(tmp_path)] == [2, 4]
    # The run got further than the checkpoint the rerun resumes from (4)
    # before it was killed: its evaluation of step 6, and a line cut short.
    with open(tmp_path / "eval_history.jsonl", "a") as history:
        history.write(json.dumps({"global_step": 6, "eval_accuracy": 0.99,
                                  "eval_loss": 0.01}) + "\n")
        history.write('{"global_step": 7, "eval_ac')

    model = _compiled(fixtures_dir)
    second = Scripted(model, [0.7, 0.6, 0.9])
    evaluate = EvaluateDuringTraining(second, 2, tmp_path,
                                      keep_best_metric="eval_accuracy",
                                      early_stopping_patience=2)
    _drive(evaluate, model, 4, range(5, 11))
    # 0.8 of step 4 stays the best to beat: steps 6 and 8 make two
    # evaluations without improvement, and training stops at step 8.
    assert second.steps == [6, 8]
    assert model.stop_training
    history = read_history(tmp_path)
    assert [r["global_step"] for r in history] == [2, 4, 6, 8]
    assert [r["eval_accuracy"] for r in history] == [0.5, 0.8, 0.7, 0.6]
    assert history[-1]["early_stopped"] is True and stopped_early(tmp_path)
    assert (evaluate.best_step, evaluate.evaluations_without_improvement) == (4, 2)
    assert best_checkpoint(tmp_path) == str(tmp_path / "best" / "model.ckpt-4")
    text = (tmp_path / "eval_history.jsonl").read_text()
    assert text.endswith("\n") and len(text.splitlines()) == 4


def test_a_best_replacement_cut_by_a_kill_is_finished_on_resume(fixtures_dir,
                                                               tmp_path):
    model = _compiled(fixtures_dir)
    _drive(EvaluateDuringTraining(Scripted(model, [0.5, 0.8]), 2, tmp_path,
                                  keep_best_metric="eval_accuracy"),
           model, 0, [1, 2, 3, 4])
    best = tmp_path / "best"
    # Killed after best/model.ckpt-4 and its eval_results.txt were written,
    # before the state file named it and before its history line.
    (best / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-2"\n'
                                     'all_model_checkpoint_paths: "model.ckpt-2"\n')
    (tmp_path / "eval_history.jsonl").write_text(
        json.dumps({"global_step": 2, "eval_accuracy": 0.5, "eval_loss": 0.5}) + "\n")
    checkpoints.save_tf1_checkpoint(model, str(best / "model.ckpt-2"),
                                    global_step=2)
    assert best_checkpoint(tmp_path) == str(best / "model.ckpt-2")

    model.optimizer.iterations.assign(4)
    evaluate = EvaluateDuringTraining(Scripted(model, [0.7]), 2, tmp_path,
                                      keep_best_metric="eval_accuracy")
    _drive(evaluate, model, 4, [5, 6])
    assert best_checkpoint(tmp_path) == str(best / "model.ckpt-4")
    assert sorted(p.name for p in best.glob("*.index")) == ["model.ckpt-4.index"]
    history = read_history(tmp_path)
    assert [(r["global_step"], r["eval_accuracy"]) for r in history] == [
        (2, 0.5), (4, 0.8), (6, 0.7)]
    assert (evaluate.best_step, evaluate.evaluations_without_improvement) == (4, 1)


def test_other_workers_evaluate_but_write_nothing(fixtures_dir, tmp_path):
    model = _compiled(fixtures_dir)
    scripted = Scripted(model, [0.5, 0.4, 0.3])
    evaluate = EvaluateDuringTraining(scripted, 1, tmp_path,
                                      keep_best_metric="eval_accuracy",
                                      early_stopping_patience=2, chief=False)
    _drive(evaluate, model, 0, [1, 2, 3, 4])
    assert scripted.steps == [1, 2, 3]
    assert model.stop_training  # stops with the chief
    assert list(tmp_path.iterdir()) == []


def test_non_finite_numbers_are_null_and_never_the_best(fixtures_dir, tmp_path):
    model = _compiled(fixtures_dir)
    scripted = Scripted(model, [0.5, 0.9, 0.6], losses=[0.5, float("nan"), 0.4])
    evaluate = EvaluateDuringTraining(scripted, 1, tmp_path,
                                      keep_best_metric="eval_accuracy")
    _drive(evaluate, model, 0, [1, 2, 3])
    history = read_history(tmp_path)
    assert history[1] == {"global_step": 2, "eval_accuracy": 0.9, "eval_loss": None}
    assert "NaN" not in (tmp_path / "eval_history.jsonl").read_text()
    assert best_checkpoint(tmp_path) == str(tmp_path / "best" / "model.ckpt-3")
    assert [s for s, _ in read_scalars(str(tmp_path / "eval"))["eval_loss"]] == [1, 3]


def test_no_evaluation_at_the_end_of_a_preempted_run(fixtures_dir, tmp_path):
    model = _compiled(fixtures_dir)
    scripted = Scripted(model, [0.5, 0.6])
    evaluate = EvaluateDuringTraining(scripted, 2, tmp_path)
    model.optimizer.iterations.assign(0)
    model.stop_training = False
    evaluate.set_model(model)
    evaluate.on_train_begin()
    for step in (1, 2, 3):
        model.optimizer.iterations.assign(step)
        evaluate.on_train_batch_end(0)
    model.stop_training = True  # as preemption.StopOnRequest sets it
    evaluate.on_train_end()
    assert scripted.steps == [2]
    # Without keep_best_metric: history and TensorBoard only.
    assert not (tmp_path / "best").exists()
    assert [r["global_step"] for r in read_history(tmp_path)] == [2]
