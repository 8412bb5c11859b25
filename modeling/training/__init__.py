"""Training and inference runs: the loop, its callbacks, checkpoints, devices.

    from modeling.training import run_training, predict
    result = run_training(model, optimizer, dataset, num_train_steps,
                          output_dir, RuntimeOptions(), batch_size)

Modules: `loop` (`run_training` on `model.fit`, `predict`), `strategy_loop`
(the `strategy.run` loop where `fit` cannot run: multi-worker, XLA over
several replicas), `callbacks` (checkpoint saver, throughput), `step_logs`
(`loss = ..., step = N` lines, the per-step loss), `summaries` (TensorBoard
scalars at the global step), `curves` (`training_curves.png`),
`evaluation` (evaluating every N steps while training: `eval_history.jsonl`,
the best checkpoint in `best/`, early stopping),
`checkpoint_state` (`model.ckpt-N` + the `checkpoint` file in output_dir,
adopting a complete unlisted newest one), `resume` (which checkpoint a run
starts from: `CheckpointChoice`), `preemption` (SIGTERM/SIGINT: finish the
step, checkpoint, exit 143), `finite_check` (stop on a NaN/Inf loss),
`runtime` (`RuntimeOptions`, strategies, precision, `--seed`),
`tpu_connection`.
"""
from modeling.training.callbacks import (ExamplesPerSecond, LastStepClock,
                                         TF1CheckpointSaver)
from modeling.training.checkpoint_state import (GOOD_STEPS, LOSS_SCALE,
                                                TRAINING_CHECKPOINT_PREFIX,
                                                latest_training_checkpoint,
                                                remove_unlisted_checkpoints,
                                                restore_loss_scale,
                                                save_training_checkpoint)
from modeling.training.evaluation import (EvaluateDuringTraining,
                                          best_checkpoint, read_history,
                                          stopped_early)
from modeling.training.finite_check import NonFiniteLossError
from modeling.training.loop import needs_strategy_loop, predict, run_training
from modeling.training.preemption import PreemptionGuard, TrainingInterrupted
from modeling.training.resume import (CheckpointChoice, NoCheckpointError,
                                      choose_start,
                                      restore_for_inference,
                                      restore_for_training)
from modeling.training.runtime import RuntimeOptions
from modeling.training.step_logs import StepLogger
from modeling.training.summaries import (TrainingSummaries, read_scalars,
                                         write_eval_summaries)
from modeling.training.curves import write_training_curves

__all__ = ["CheckpointChoice", "EvaluateDuringTraining", "ExamplesPerSecond",
           "GOOD_STEPS", "best_checkpoint", "read_history", "stopped_early",
           "LOSS_SCALE", "LastStepClock", "NoCheckpointError",
           "NonFiniteLossError", "PreemptionGuard", "StepLogger",
           "TF1CheckpointSaver", "TrainingInterrupted",
           "TRAINING_CHECKPOINT_PREFIX", "choose_start",
           "latest_training_checkpoint", "needs_strategy_loop", "predict",
           "remove_unlisted_checkpoints", "restore_for_inference",
           "restore_for_training", "restore_loss_scale", "RuntimeOptions",
           "run_training", "TrainingSummaries",
           "read_scalars", "save_training_checkpoint",
           "write_eval_summaries", "write_training_curves"]
