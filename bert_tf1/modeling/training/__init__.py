"""Training and inference runs: the loop (`run_training`, `predict`), its
callbacks, checkpoints, devices (module map: docs/architecture.md).
"""
from bert_tf1.modeling.training.checkpoint_state import (GOOD_STEPS, LOSS_SCALE,
                                                         TRAINING_CHECKPOINT_PREFIX,
                                                         latest_training_checkpoint,
                                                         remove_unlisted_checkpoints,
                                                         save_training_checkpoint)
from bert_tf1.modeling.training.evaluation import (EvaluateDuringTraining,
                                                   best_checkpoint, read_history,
                                                   stopped_early)
from bert_tf1.modeling.training.loop import predict, run_training
from bert_tf1.modeling.training.resume import (CheckpointChoice, choose_start,
                                               init_checkpoint_path,
                                               restore_for_inference,
                                               restore_for_training)
from bert_tf1.modeling.training.runtime import RuntimeOptions
from bert_tf1.modeling.training.summaries import (read_scalars,
                                                  write_eval_summaries)
from bert_tf1.modeling.training.curves import write_training_curves

__all__ = ["CheckpointChoice", "EvaluateDuringTraining", "GOOD_STEPS",
           "LOSS_SCALE", "RuntimeOptions", "TRAINING_CHECKPOINT_PREFIX",
           "best_checkpoint", "choose_start", "init_checkpoint_path",
           "latest_training_checkpoint", "predict", "read_history",
           "read_scalars", "remove_unlisted_checkpoints",
           "restore_for_inference", "restore_for_training", "run_training",
           "save_training_checkpoint", "stopped_early",
           "write_eval_summaries", "write_training_curves"]
