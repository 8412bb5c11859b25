"""The original's TF1 name-based checkpoints, read and written by our models.

    from bert_tf1.modeling import checkpoints
    checkpoints.load_tf1_checkpoint(model, "uncased_L-12_H-768_A-12/")
    checkpoints.save_tf1_checkpoint(model, "out/bert_model.ckpt")
"""
from bert_tf1.modeling.checkpoints.files import (GLOBAL_STEP,
                                                 RELEASED_CHECKPOINT_NAME, SLOT_NAMES,
                                                 CheckpointCorruptError,
                                                 CheckpointNotFoundError,
                                                 is_optimizer_state, list_checkpoint,
                                                 resolve_checkpoint)
from bert_tf1.modeling.checkpoints.finiteness import (CheckpointNonFiniteError,
                                                      check_finite_checkpoint)
from bert_tf1.modeling.checkpoints.loading import (CheckpointMismatchError, LoadStatus,
                                                   check_compatible, check_shapes,
                                                   load_tf1_checkpoint,
                                                   model_weights_by_name)
from bert_tf1.modeling.checkpoints.saving import (CheckpointExistsError,
                                                  save_lora_adapters,
                                                  save_tf1_checkpoint)
from bert_tf1.modeling.checkpoints.state_file import (CheckpointStateError,
                                                      newest_listed, read_state)

__all__ = ["GLOBAL_STEP", "RELEASED_CHECKPOINT_NAME", "SLOT_NAMES",
           "CheckpointCorruptError", "CheckpointExistsError",
           "CheckpointMismatchError", "CheckpointNonFiniteError",
           "CheckpointNotFoundError", "CheckpointStateError", "LoadStatus",
           "check_compatible", "check_finite_checkpoint", "check_shapes",
           "newest_listed", "read_state", "is_optimizer_state",
           "list_checkpoint",
           "load_tf1_checkpoint", "model_weights_by_name",
           "resolve_checkpoint", "save_lora_adapters", "save_tf1_checkpoint"]
