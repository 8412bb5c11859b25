"""LoRA (Hu et al. 2021) on the encoder's Dense layers, with Keras's own
`Dense.enable_lora`, and the one merge rule every consumer uses
(`merged_weights`: checkpoints, int8 and bfloat16 copies and export read the
model through it). What trains, what is frozen and why: docs/lora.md.
"""
import keras
from keras import ops

from bert_tf1.modeling import keras_internals
from bert_tf1.modeling.naming import tf1_name

#: The TF1 sub-layers LoRA can adapt, by the last scope before `kernel`.
TARGETS = ("query", "key", "value", "attention_output", "intermediate",
           "layer_output")
DEFAULT_TARGETS = ("query", "value")
#: Checkpoint scope of the unmerged LoRA state (base kernels, adapters and
#: their Adam slots): a loader without LoRA never meets it by its names.
RESUME_SCOPE = "lora/"
ADAPTER_NAMES = ("lora_kernel_a", "lora_kernel_b")
#: The scale numerator the adapters were trained with (float32 scalar),
#: saved beside them: read with another alpha they would be scaled wrongly.
ALPHA_NAME = RESUME_SCOPE + "lora_alpha"


def _target_layer(transformer_layer, target):
    attention = transformer_layer.attention
    return {
        "query": lambda: attention.self_attention.query,
        "key": lambda: attention.self_attention.key,
        "value": lambda: attention.self_attention.value,
        "attention_output": lambda: attention.output_projection.dense,
        "intermediate": lambda: transformer_layer.intermediate.dense,
        "layer_output": lambda: transformer_layer.output_projection.dense,
    }[target]()


def check_lora_arguments(rank, alpha=None, targets=DEFAULT_TARGETS):
    """The checked (rank, alpha, targets): rank an int >= 1, alpha a
    positive number or None (= rank), targets a non-empty subset of
    `TARGETS` (a comma-separated string is split).

    Raises:
        ValueError: one line naming the bad argument and what is allowed.
    """
    if isinstance(targets, str):
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    targets = tuple(targets)
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        raise ValueError(f"LoRA rank must be an integer >= 1, got {rank!r}.")
    if alpha is not None and not alpha > 0:
        raise ValueError(f"LoRA alpha must be > 0 (or None: the rank), got "
                         f"{alpha!r}.")
    unknown = [t for t in targets if t not in TARGETS]
    if unknown or not targets:
        raise ValueError(
            f"Unknown LoRA target(s) {unknown or list(targets)}; choose from "
            f"{', '.join(TARGETS)}.")
    return rank, alpha, tuple(dict.fromkeys(targets))


def _is_adapter(variable):
    return variable.path.rsplit("/", 1)[-1] in ADAPTER_NAMES


def lora_layers(model):
    """The Dense layers of `model` with LoRA enabled."""
    return [layer for layer in keras_internals.all_layers(model)
            if isinstance(layer, keras.layers.Dense)
            and getattr(layer, "lora_enabled", False)]


def merged_kernel(dense):
    """W + (alpha / rank) A B of a LoRA-enabled Dense, in the kernel's
    dtype (as `Dense.kernel` computes it, before its cast to the compute
    dtype). [input_dim, units]."""
    kernel = keras_internals.lora_base_kernel(dense)
    return ops.cast(ops.add(kernel, (dense.lora_alpha / dense.lora_rank)
                            * ops.matmul(dense.lora_kernel_a,
                                         dense.lora_kernel_b)), kernel.dtype)


def resume_names(model):
    """`{TF1 name: checkpoint name under RESUME_SCOPE}` of the unmerged LoRA
    state (each adapted base kernel and its two adapters); {} without LoRA."""
    names = {}
    for dense in lora_layers(model):
        for variable in (keras_internals.lora_base_kernel(dense),
                         dense.lora_kernel_a,
                         dense.lora_kernel_b):
            name = tf1_name(variable, model)
            names[name] = RESUME_SCOPE + name
    return names


def merged_weights(model):
    """`{TF1 name: tensor}` of `model` as the same model without LoRA: the
    adapted kernels merged (`merged_kernel`), adapters left out."""
    merged = {id(keras_internals.lora_base_kernel(dense)): dense
              for dense in lora_layers(model)}
    return {tf1_name(v, model): (merged_kernel(merged[id(v)]) if id(v) in merged
                          else v.value)
            for v in model.weights if not _is_adapter(v)}


def lora_alpha(model):
    """The alpha of `model`'s adapted layers (Keras's `lora_alpha`: the
    rank when enable_lora got none); None without LoRA."""
    layers = lora_layers(model)
    return float(layers[0].lora_alpha) if layers else None


def alpha_tensors(model):
    """`{ALPHA_NAME: float32 scalar}` of a LoRA model, {} without LoRA:
    saved with the adapters (checkpoints and the adapters file)."""
    alpha = lora_alpha(model)
    return {} if alpha is None else {
        ALPHA_NAME: ops.convert_to_tensor(alpha, "float32")}


class LoraMixin:
    """`enable_lora` for `BertModel` and the task models (their encoder is
    `self.bert`), kept by `get_config` / `from_config` (`.keras` files)."""

    def enable_lora(self, rank, alpha=None, targets=DEFAULT_TARGETS):
        """Keras's `Dense.enable_lora` on `targets` (TF1 sub-layer names,
        `TARGETS`) of every transformer layer; every other encoder weight
        but the pooler is frozen, a task model's head stays trainable.
        alpha: the scale numerator (None: rank). Raises ValueError (one
        line): a bad argument, or LoRA already enabled."""
        bert = getattr(self, "bert", self)
        rank, alpha, targets = check_lora_arguments(rank, alpha, targets)
        if lora_layers(bert):
            raise ValueError(f"LoRA is already enabled on {bert.name}.")
        for layer in bert.encoder.transformer_layers:
            for target in targets:
                _target_layer(layer, target).enable_lora(rank,
                                                         lora_alpha=alpha)
        pooler = {id(v) for v in bert.pooler.weights}
        for variable in bert.weights:
            if id(variable) not in pooler and not _is_adapter(variable):
                variable.trainable = False
        bert.lora_config = {"rank": rank, "alpha": alpha,
                            "targets": list(targets)}

    def get_config(self):
        config = super().get_config()
        lora = getattr(getattr(self, "bert", self), "lora_config", None)
        if lora:
            config["lora"] = dict(lora)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        lora = config.pop("lora", None)
        model = super().from_config(config)
        if lora:
            model.enable_lora(**lora)
        return model
