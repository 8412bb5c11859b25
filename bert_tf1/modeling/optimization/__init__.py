"""The original BERT optimizer, learning-rate schedule and LAMB, for Keras 3
(usage: docs/python_api.md, "The optimizer"). Keras' `AdamW` bias-corrects
and its `Lamb` keeps weight decay out of the trust ratio, so both are
written here. TensorFlow backend only (`tf.clip_by_global_norm`,
tf.distribute).
"""
from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling.optimization.tf1_optimizer import (AdamWeightDecay,
                                                        LambWeightDecay)
from bert_tf1.modeling.optimization.lr_schedule import WarmupLinearDecay
from bert_tf1.modeling.optimization.weight_decay import (DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY,
                                            matches_exclusion, normalization_variables)

__all__ = ["AdamWeightDecay", "LambWeightDecay", "WarmupLinearDecay",
           "create_optimizer", "matches_exclusion", "normalization_variables"]


def create_optimizer(init_lr, num_train_steps, num_warmup_steps,
                     optimizer_type="adamw", weight_decay_rate=0.01,
                     model=None,
                     exclude_from_weight_decay=DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY,
                     global_clipnorm=1.0, gradient_accumulation_steps=1):
    """The original `create_optimizer`'s optimizer, schedule and clipping.

    Args:
      init_lr: float, peak learning rate.
      num_train_steps: int > 0; the rate reaches 0 there.
      num_warmup_steps: int >= 0 (0: no warmup).
      optimizer_type: "adamw" (the original's `AdamWeightDecayOptimizer`) or
        "lamb".
      weight_decay_rate: float (0.01 as the original).
      model: optional Keras model; if given, the variables of all its
        normalization layers are excluded from decay too, whatever their
        names (`normalization_variables`).
      exclude_from_weight_decay: regex patterns (the original's by default).
      global_clipnorm: float or None (1.0 as the original).
      gradient_accumulation_steps: int >= 1; with k > 1 the gradients of k
        batches are averaged per update (Keras' option); `iterations` and
        the schedule count updates. Call under the strategy's scope.

    Returns:
      `AdamWeightDecay` or `LambWeightDecay` with beta_1 0.9, beta_2 0.999,
      epsilon 1e-6 and a `WarmupLinearDecay` learning rate.

    Raises:
      ValueError: unknown `optimizer_type`, bad schedule arguments, or
        `gradient_accumulation_steps` < 1.

    Source: `create_optimizer` in the original `optimization.py`.
    """
    classes = {"adamw": AdamWeightDecay, "lamb": LambWeightDecay}
    key = str(optimizer_type).lower()
    if key not in classes:
        raise UserError(
            f"optimizer_type must be one of {sorted(classes)}, got "
            f"{optimizer_type!r}.")
    schedule = WarmupLinearDecay(init_lr, num_train_steps, num_warmup_steps)
    optimizer = classes[key](
        learning_rate=schedule, weight_decay_rate=weight_decay_rate,
        beta_1=0.9, beta_2=0.999, epsilon=1e-6,
        exclude_from_weight_decay=exclude_from_weight_decay,
        global_clipnorm=global_clipnorm)
    if model is not None:
        optimizer.exclude_from_weight_decay(
            var_list=normalization_variables(model))
    steps = int(gradient_accumulation_steps or 1)
    if steps < 1:
        raise UserError(f"gradient_accumulation_steps must be >= 1, got "
                        f"{gradient_accumulation_steps}.")
    if steps > 1:
        # Read by Keras' `build` (accumulators) and `apply`; set before build.
        optimizer.gradient_accumulation_steps = steps
    return optimizer
