"""Training and inference runs: the loop (`run_training`, `predict`), its
callbacks, checkpoints, devices (module map: docs/architecture.md).
"""
from bert_tf1.modeling.training.callbacks import ExamplesPerSecond, TF1CheckpointSaver
from bert_tf1.modeling.training.checkpoint_state import (GOOD_STEPS, LOSS_SCALE,
                                                         TRAINING_CHECKPOINT_PREFIX,
                                                         latest_training_checkpoint,
                                                         remove_unlisted_checkpoints,
                                                         restore_loss_scale,
                                                         save_training_checkpoint)
from bert_tf1.modeling.training.evaluation import (EvaluateDuringTraining,
                                                   best_checkpoint, read_history,
                                                   stopped_early)
from bert_tf1.modeling.training.finite_check import NonFiniteLossError
from bert_tf1.modeling.training.loop import needs_strategy_loop, predict, run_training
from bert_tf1.modeling.training.preemption import PreemptionGuard, TrainingInterrupted
from bert_tf1.modeling.training.resume import (CheckpointChoice, NoCheckpointError,
                                               choose_start, init_checkpoint_path,
                                               restore_for_inference,
                                               restore_for_training)
from bert_tf1.modeling.training.runtime import RuntimeOptions
from bert_tf1.modeling.training.step_logs import StepLogger
from bert_tf1.modeling.training.summaries import (TrainingSummaries, read_scalars,
                                                  write_eval_summaries)
from bert_tf1.modeling.training.curves import write_training_curves

__all__ = ["CheckpointChoice", "EvaluateDuringTraining", "ExamplesPerSecond",
           "GOOD_STEPS", "best_checkpoint", "init_checkpoint_path", "read_history", "stopped_early",
           "LOSS_SCALE", "NoCheckpointError",
           "NonFiniteLossError", "PreemptionGuard", "StepLogger",
           "TF1CheckpointSaver", "TrainingInterrupted",
           "TRAINING_CHECKPOINT_PREFIX", "choose_start",
           "latest_training_checkpoint", "needs_strategy_loop", "predict",
           "remove_unlisted_checkpoints", "restore_for_inference",
           "restore_for_training", "restore_loss_scale", "RuntimeOptions",
           "run_training", "TrainingSummaries",
           "read_scalars", "save_training_checkpoint",
           "write_eval_summaries", "write_training_curves"]
