"""The task configs: the fields every task has (`TaskConfig`), those of
fine-tuning (`FineTuningConfig`, with the LoRA fields `check_lora_flags`
checks) and of fine-tuning with an eval mode (`EvaluatingConfig`).
"""
import dataclasses

from bert_tf1.modeling.layers import lora
from bert_tf1.modeling.training import runtime as runtime_lib
from bert_tf1.tasks.errors import UserError


@dataclasses.dataclass(kw_only=True)
class TaskConfig:
    """Fields every task has: the original's flags, the --allow_* flags
    (`bert_tf1.tasks.cli.define_common_flags`), `dynamic_padding` (cut each batch to
    its longest example, `bert_tf1.data.io.dynamic_padding`; not under a TPU strategy
    or `use_xla`) and `runtime` (`bert_tf1.modeling.training.runtime.RuntimeOptions`).
    """
    bert_config_file: str = None  # or a `bert_tf1.modeling.BertConfig`
    output_dir: str = None
    init_checkpoint: str = None
    max_seq_length: int = 128
    allow_partial_checkpoint: bool = False
    allow_non_finite_checkpoint: bool = False
    allow_random_weights: bool = False
    dynamic_padding: bool = True
    runtime: runtime_lib.RuntimeOptions = dataclasses.field(
        default_factory=runtime_lib.RuntimeOptions)


@dataclasses.dataclass(kw_only=True)
class FineTuningConfig(TaskConfig):
    """The flags run_classifier.py and run_squad.py share (same defaults),
    the LoRA flags (`check_lora_flags`, docs/lora.md) and the export after
    the run (`export_dir`: None, no export; `export_format`: None, one
    raw-text SavedModel, else a list of `bert_tf1.serving.formats.FORMATS`;
    `bert_tf1.tasks.export_after_training`)."""
    vocab_file: str = None
    do_lower_case: bool = True
    do_train: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    lora_rank: int = 0
    lora_alpha: float = None
    lora_targets: str = None  # None: lora.DEFAULT_TARGETS
    export_dir: str = None
    export_format: list = None


@dataclasses.dataclass(kw_only=True)
class EvaluatingConfig(FineTuningConfig):
    """Fine-tuning with an eval mode (run_classifier.py, run_ner.py,
    run_multiple_choice.py): do_eval, eval_batch_size, and the flags of
    `bert_tf1.tasks.script_flags.define_padding_flags` and `define_evaluation_flags`.
    """
    do_eval: bool = False
    eval_batch_size: int = 8
    group_by_length: bool = False
    eval_every_epoch: bool = False
    eval_steps: int = 0
    keep_best_checkpoint: str = None
    early_stopping_patience: int = 0


def check_lora_flags(config):
    """Checks a task config's LoRA fields (no-op without them).

    Raises:
        UserError: one line naming the flag: a bad rank, alpha or target,
            --lora_alpha or --lora_targets given without --lora_rank, or
            --feature_layers (the feature-based tagger's encoder is frozen:
            there is nothing to adapt).
    """
    rank = getattr(config, "lora_rank", 0) or 0
    if not isinstance(rank, int) or rank < 0:
        raise UserError(f"--lora_rank={rank}: expected 0 (off) or an "
                        "integer >= 1")
    if not rank:
        if getattr(config, "lora_alpha", None) is not None:
            raise UserError("--lora_alpha needs --lora_rank >= 1")
        if getattr(config, "lora_targets", None) is not None:
            raise UserError(f"--lora_targets={config.lora_targets} needs "
                            "--lora_rank >= 1")
        return
    if getattr(config, "feature_layers", None):
        raise UserError(
            f"--lora_rank={rank} with --feature_layers: the feature-based "
            "tagger keeps its encoder frozen, so there is nothing to adapt; "
            "drop one of them")
    try:
        lora.check_lora_arguments(rank, config.lora_alpha,
                                  lora_targets(config))
    except ValueError as error:
        flag = "--lora_alpha" if "alpha" in str(error) else "--lora_targets"
        value = config.lora_alpha if flag == "--lora_alpha" else (
            config.lora_targets)
        raise UserError(f"{flag}={value}: {error}") from None


def lora_targets(config):
    """The config's `lora_targets`, `lora.DEFAULT_TARGETS` when not given."""
    return config.lora_targets or ",".join(lora.DEFAULT_TARGETS)
