"""--lora_rank, --lora_alpha, --lora_targets: LoRA on a fine-tuning task's
model (`bert_tf1.modeling.layers.lora`), checked before any work."""
from bert_tf1.modeling.layers import lora
from bert_tf1.tasks.errors import UserError


def check_lora_flags(config):
    """Checks a task config's LoRA fields (no-op without them).

    Raises:
        UserError: one line naming the flag: a bad rank, alpha or target,
            --lora_alpha/--lora_targets without --lora_rank, or
            --feature_layers (the feature-based tagger's encoder is frozen:
            there is nothing to adapt).
    """
    rank = getattr(config, "lora_rank", 0) or 0
    if isinstance(rank, int) and rank < 0 or not isinstance(rank, int):
        raise UserError(f"--lora_rank={rank}: expected 0 (off) or an "
                        "integer >= 1")
    if not rank:
        if getattr(config, "lora_alpha", None) is not None:
            raise UserError("--lora_alpha needs --lora_rank >= 1")
        return
    if getattr(config, "feature_layers", None):
        raise UserError(
            f"--lora_rank={rank} with --feature_layers: the feature-based "
            "tagger keeps its encoder frozen, so there is nothing to adapt; "
            "drop one of them")
    try:
        lora.check_lora_arguments(rank, config.lora_alpha,
                                  config.lora_targets)
    except ValueError as error:
        flag = "--lora_alpha" if "alpha" in str(error) else "--lora_targets"
        value = config.lora_alpha if flag == "--lora_alpha" else (
            config.lora_targets)
        raise UserError(f"{flag}={value}: {error}") from None


def apply_lora(model, config):
    """`model.enable_lora(...)` when `config.lora_rank` > 0; returns model."""
    rank = getattr(config, "lora_rank", 0)
    if rank:
        model.enable_lora(rank, config.lora_alpha, config.lora_targets)
    return model
