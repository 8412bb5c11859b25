"""The original BERT optimizer, learning-rate schedule and LAMB, for Keras 3.

`create_optimizer` gives what the original `optimization.create_optimizer`
set up: a linear warmup then linear decay to 0 of the learning rate,
`AdamWeightDecayOptimizer` (Adam without bias correction, decoupled weight
decay that skips LayerNorm weights and biases) and gradients clipped to a
global norm of 1.0. Keras' own `AdamW` bias-corrects and its `Lamb` keeps
weight decay out of the trust ratio, so both are written here; each update
is the original's formula, in the original's order of operations.

Usage:

    optimizer = create_optimizer(2e-5, num_train_steps, num_warmup_steps)
    model.compile(optimizer=optimizer, loss=...)
    optimizer.build(model.trainable_variables)  # slots exist before step 1
    optimizer.slot_variables(variable)  # {"adam_m": ..., "adam_v": ...}
    optimizer.iterations                # the original's `global_step`

The update that takes `iterations` from s to s + 1 uses the schedule's rate
at s + 1, as the original's updates did (see `schedule_step_offset`).
TensorFlow backend only (it uses `tf.clip_by_global_norm` and tf.distribute).
"""
import re

import keras
import tensorflow as tf

from modeling.naming import tf1_name

# The original `create_optimizer`'s exclusion list, matched with `re.search`.
DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY = ("LayerNorm", "layer_norm", "bias")
ADAM_M = "adam_m"
ADAM_V = "adam_v"


@keras.saving.register_keras_serializable(package="bert")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup, then linear decay to 0, as the original computes it.

    For an integer `step` (the global step):
      `step < num_warmup_steps`: `init_lr * step / num_warmup_steps`;
      otherwise: `init_lr * (1 - min(step, num_train_steps) / num_train_steps)`.
    The decay is measured from step 0 (so right after warmup the rate is
    `init_lr * (1 - num_warmup_steps / num_train_steps)`, not `init_lr`), and
    it stays 0 from `num_train_steps` on. With `num_warmup_steps=0` there is
    no warmup. Computed in float32 with the original's operations (the decay
    is Keras' `PolynomialDecay`, power 1, end 0, the same formula as TF1's
    `tf.train.polynomial_decay`).

    Args:
      init_lr: float, peak learning rate.
      num_train_steps: int > 0, steps over which the rate decays to 0.
      num_warmup_steps: int >= 0.
      name: optional name scope.

    Call args:
      step: integer scalar (tensor or Python int).
    Returns:
      float32 scalar tensor.

    Raises:
      ValueError: `num_train_steps <= 0`, `num_warmup_steps < 0` or
        `init_lr < 0`.

    Source: `create_optimizer` in the original `optimization.py`.
    """

    def __init__(self, init_lr, num_train_steps, num_warmup_steps, name=None):
        super().__init__()
        if int(num_train_steps) <= 0:
            raise ValueError(
                f"num_train_steps must be > 0, got {num_train_steps}.")
        if num_warmup_steps is None or int(num_warmup_steps) < 0:
            raise ValueError(
                f"num_warmup_steps must be >= 0, got {num_warmup_steps}.")
        if float(init_lr) < 0:
            raise ValueError(f"init_lr must be >= 0, got {init_lr}.")
        self.init_lr = float(init_lr)
        self.num_train_steps = int(num_train_steps)
        self.num_warmup_steps = int(num_warmup_steps)
        self.name = name
        self._decay = keras.optimizers.schedules.PolynomialDecay(
            initial_learning_rate=self.init_lr,
            decay_steps=self.num_train_steps,
            end_learning_rate=0.0,
            power=1.0)

    def __call__(self, step):
        with tf.name_scope(self.name or "WarmupLinearDecay"):
            decayed = tf.cast(self._decay(step), tf.float32)
            if not self.num_warmup_steps:
                return decayed
            # The original's warmup blend, op for op: an int32 step compared
            # with an int32 warmup, mixed in with a 0/1 float flag.
            step_int = tf.cast(step, tf.int32)
            warmup_int = tf.constant(self.num_warmup_steps, tf.int32)
            warmup_done = (tf.cast(step_int, tf.float32)
                           / tf.cast(warmup_int, tf.float32))
            warmup_lr = tf.constant(self.init_lr, tf.float32) * warmup_done
            is_warmup = tf.cast(step_int < warmup_int, tf.float32)
            return (1.0 - is_warmup) * decayed + is_warmup * warmup_lr

    def get_config(self):
        return {"init_lr": self.init_lr,
                "num_train_steps": self.num_train_steps,
                "num_warmup_steps": self.num_warmup_steps,
                "name": self.name}


def normalization_variables(model):
    """Every variable of every normalization layer inside `model`.

    For `exclude_from_weight_decay(var_list=...)`: excludes LayerNorm (and
    other normalization) weights whatever their layers are called, e.g. a
    `keras.layers.LayerNormalization(name="ln")` that no name pattern
    catches.

    Args:
      model: a built `keras.Model` or `keras.layers.Layer`.
    Returns:
      list of `keras.Variable`.
    """
    norm_types = (keras.layers.LayerNormalization,
                  keras.layers.BatchNormalization,
                  keras.layers.GroupNormalization,
                  keras.layers.UnitNormalization)
    rms_norm = getattr(keras.layers, "RMSNormalization", None)
    if rms_norm is not None:
        norm_types += (rms_norm,)
    found = []
    # `_flatten_layers` walks nested layers and models (Keras has no public
    # recursive walk); it includes `model` itself.
    for layer in model._flatten_layers(include_self=True, recursive=True):
        if isinstance(layer, norm_types):
            found.extend(layer.weights)
    return found


def _name_for_patterns(variable):
    """The TF1 name; for a variable made outside any model, its own path."""
    path = getattr(variable, "path", None)
    if path is None:  # a plain tf.Variable
        return variable.name.split(":")[0]
    return tf1_name(variable) if "/" in path else path


class _TF1StyleOptimizer(keras.optimizers.Optimizer):
    """What AdamWeightDecay and LambWeightDecay share.

    - the `adam_m`/`adam_v` slots, exposed by TF1 name for checkpoints;
    - which variables are decayed (decided once, in `build`);
    - global-norm clipping with `tf.clip_by_global_norm` after the
      cross-replica sum of the gradients;
    - the learning-rate schedule evaluated at `iterations + 1` (see
      `schedule_step_offset`).
    """

    def __init__(self, learning_rate=0.001, weight_decay_rate=0.0,
                 beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 exclude_from_weight_decay=None, global_clipnorm=None,
                 schedule_step_offset=1, name=None, **kwargs):
        name = name or type(self).__name__
        if keras.backend.backend() != "tensorflow":
            raise RuntimeError(
                f"{type(self).__name__} needs the TensorFlow backend, not "
                f"{keras.backend.backend()!r}.")
        # Keras' own `weight_decay` is applied before the update with its
        # own exclusion rule; ours is `weight_decay_rate`.
        if kwargs.pop("weight_decay", None) is not None:
            raise ValueError(
                f"{type(self).__name__} takes `weight_decay_rate`, not "
                "Keras' `weight_decay`.")
        super().__init__(learning_rate=learning_rate, name=name,
                         global_clipnorm=global_clipnorm, **kwargs)
        if weight_decay_rate < 0:
            raise ValueError(
                f"weight_decay_rate must be >= 0, got {weight_decay_rate}.")
        self.weight_decay_rate = float(weight_decay_rate)
        self.beta_1 = float(beta_1)
        self.beta_2 = float(beta_2)
        self.epsilon = float(epsilon)
        self.schedule_step_offset = int(schedule_step_offset)
        if exclude_from_weight_decay is None:
            exclude_from_weight_decay = ()
        elif isinstance(exclude_from_weight_decay, str):
            exclude_from_weight_decay = (exclude_from_weight_decay,)
        self._exclude_patterns = tuple(exclude_from_weight_decay)
        self._excluded_ids = set()

    # ----- which variables are decayed -------------------------------------

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Excludes more variables from weight decay (before `build`).

        Args:
          var_list: `keras.Variable`s to exclude, e.g.
            `normalization_variables(model)`.
          var_names: regex patterns, added to `exclude_from_weight_decay`
            (matched like those, see `uses_weight_decay`).

        Raises:
          ValueError: the optimizer is already built (the choice is fixed
            when the slots are created).
        """
        if self.built:
            raise ValueError(
                "exclude_from_weight_decay() must be called before the "
                "optimizer is built.")
        for variable in var_list or ():
            self._excluded_ids.add(self._var_key(variable))
        if isinstance(var_names, str):
            var_names = (var_names,)
        self._exclude_patterns += tuple(var_names or ())

    def uses_weight_decay(self, variable):
        """True if `variable` gets weight decay.

        As the original: not when `weight_decay_rate` is 0, and not when an
        exclude pattern `re.search`-matches the variable's TF1 name
        (`modeling.naming.tf1_name`). Unlike the original, patterns match
        ignoring case: the default `LayerNorm`/`layer_norm`/`bias` then also
        catch Keras spellings such as `layernorm`, `LayerNormalization`'s
        `layer_normalization` or `Bias`; for the original's own names this
        picks exactly the same variables. Variables passed in
        `exclude_from_weight_decay(var_list=...)` are excluded too.

        Args:
          variable: a `keras.Variable` (a model weight).
        Returns:
          bool.
        """
        if not self.weight_decay_rate:
            return False
        return not self._is_excluded(variable)

    def _is_excluded(self, variable):
        if self._var_key(variable) in self._excluded_ids:
            return True
        if not self._exclude_patterns:
            return False
        name = _name_for_patterns(variable)
        return any(re.search(pattern, name, flags=re.IGNORECASE)
                   for pattern in self._exclude_patterns)

    # ----- slots -------------------------------------------------------------

    def build(self, var_list):
        """Creates the `adam_m`/`adam_v` slots (zeros) for `var_list`.

        Call it with `model.trainable_variables` before the first step to
        restore slots from a checkpoint; `fit` calls it otherwise. Under a
        tf.distribute strategy, call it inside `strategy.scope()`.
        """
        if self.built:
            return
        super().build(var_list)
        self._adam_m, self._adam_v = self.add_optimizer_variables(
            var_list, [ADAM_M, ADAM_V])
        # Python bools, fixed at trace time: one graph branch per variable.
        self._decay_flags = [self.uses_weight_decay(v) for v in var_list]
        self._excluded_flags = [self._is_excluded(v) for v in var_list]

    def slot_variables(self, variable):
        """The slots of a model variable, under the original's slot names.

        Args:
          variable: a `keras.Variable` the optimizer was built with.
        Returns:
          {"adam_m": keras.Variable, "adam_v": keras.Variable}, each the
          variable's shape and dtype. In a checkpoint they are
          `<tf1 name>/adam_m` and `<tf1 name>/adam_v`.
        Raises:
          ValueError: the optimizer is not built, or was not built with
            `variable`.
        """
        if not self.built:
            raise ValueError(
                f"{type(self).__name__} has no slots yet: call "
                "optimizer.build(model.trainable_variables) first.")
        index = self._trainable_variables_indices.get(self._var_key(variable))
        if index is None:
            raise ValueError(
                f"{type(self).__name__} was not built with variable "
                f"{getattr(variable, 'path', variable)!r}.")
        return {ADAM_M: self._adam_m[index], ADAM_V: self._adam_v[index]}

    def tf1_slot_variables(self):
        """`{"<tf1 name>/adam_m": slot, "<tf1 name>/adam_v": slot}` for all.

        Raises:
          ValueError: the optimizer is not built, or two of its variables
            have the same TF1 name.
        """
        if not self.built:
            raise ValueError(
                f"{type(self).__name__} has no slots yet: call "
                "optimizer.build(model.trainable_variables) first.")
        slots = {}
        for variable, m, v in zip(self._trainable_variables, self._adam_m,
                                  self._adam_v):
            name = tf1_name(variable)
            if f"{name}/{ADAM_M}" in slots:
                raise ValueError(
                    f"Two variables of {self.name} have the TF1 name "
                    f"{name!r} (the second is {variable.path!r}).")
            slots[f"{name}/{ADAM_M}"] = m
            slots[f"{name}/{ADAM_V}"] = v
        return slots

    # ----- learning rate -----------------------------------------------------

    def _get_current_learning_rate(self):
        # The original computes the rate from `global_step` in the same
        # graph step that increments it, without ordering the two; in the
        # fixture checkpoints (2 steps, lr 1e-3, warmup 2 of 10) the updates
        # used the rates of steps 1 and 2 (5e-4, 8e-4), i.e. the step after
        # the increment. `schedule_step_offset=1` reproduces that.
        if isinstance(self._learning_rate,
                      keras.optimizers.schedules.LearningRateSchedule):
            return self._learning_rate(
                self.iterations + self.schedule_step_offset)
        return super()._get_current_learning_rate()

    # ----- clipping ----------------------------------------------------------

    def _clip_gradients(self, grads):
        # Global-norm clipping happens in `_backend_update_step`, after the
        # cross-replica sum: Keras would clip each replica's partial sum.
        if self.global_clipnorm:
            return grads
        return super()._clip_gradients(grads)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        # Keras' TF `_backend_update_step` (sum over replicas, then one
        # `update_step` per variable in a merge call), with the original's
        # `tf.clip_by_global_norm` in between. That op takes the norm of an
        # IndexedSlices gradient (a gather's) over its rows as they are,
        # repeated rows included, exactly as the original did.
        variables = [v.value if isinstance(v, keras.Variable) else v
                     for v in trainable_variables]
        grads_and_vars = self._all_reduce_sum_gradients(
            list(zip(grads, variables)))
        if self.global_clipnorm:
            clipped, _ = tf.clip_by_global_norm(
                [g for g, _ in grads_and_vars], self.global_clipnorm)
            grads_and_vars = list(zip(clipped, [v for _, v in grads_and_vars]))
        tf.__internal__.distribute.interim.maybe_merge_call(
            self._distributed_tf_update_step, self._distribution_strategy,
            grads_and_vars, learning_rate)

    # ----- the update --------------------------------------------------------

    def _slots_and_flags(self, variable):
        index = self._get_variable_index(variable)
        return (self._adam_m[index], self._adam_v[index],
                self._decay_flags[index], self._excluded_flags[index])

    def _moments(self, gradient, variable, m, v):
        """The original's `next_m`, `next_v`, op for op (float32)."""
        if isinstance(gradient, tf.IndexedSlices):
            # The original's `tf.multiply(1 - beta_1, grad)` densifies too,
            # summing repeated rows.
            if gradient.dense_shape is None:
                gradient = tf.IndexedSlices(gradient.values, gradient.indices,
                                            tf.shape(variable))
            gradient = tf.convert_to_tensor(gradient)
        gradient = tf.cast(gradient, variable.dtype)
        next_m = (tf.multiply(tf.cast(self.beta_1, variable.dtype), m)
                  + tf.multiply(tf.cast(1.0 - self.beta_1, variable.dtype),
                                gradient))
        next_v = (tf.multiply(tf.cast(self.beta_2, variable.dtype), v)
                  + tf.multiply(tf.cast(1.0 - self.beta_2, variable.dtype),
                                tf.square(gradient)))
        return next_m, next_v

    def get_config(self):
        config = super().get_config()
        config.update({
            "weight_decay_rate": self.weight_decay_rate,
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "exclude_from_weight_decay": list(self._exclude_patterns),
            "schedule_step_offset": self.schedule_step_offset,
        })
        return config


@keras.saving.register_keras_serializable(package="bert")
class AdamWeightDecay(_TF1StyleOptimizer):
    """The original `AdamWeightDecayOptimizer`, as a Keras 3 optimizer.

    Per variable p with gradient g (after global-norm clipping):
      m = beta_1 * m + (1 - beta_1) * g
      v = beta_2 * v + (1 - beta_2) * g^2
      u = m / (sqrt(v) + epsilon)            # no bias correction
      u += weight_decay_rate * p             # if p is decayed
      p -= lr * u
    Slots `adam_m`, `adam_v` have p's shape and dtype (float32); `iterations`
    (int64) is the original's `global_step`, +1 per update.

    Args:
      learning_rate: float, or a `LearningRateSchedule` (e.g.
        `WarmupLinearDecay`) evaluated at `iterations + schedule_step_offset`.
      weight_decay_rate: float >= 0 (original default 0.0;
        `create_optimizer` uses 0.01).
      beta_1, beta_2, epsilon: floats (0.9, 0.999, 1e-6).
      exclude_from_weight_decay: regex patterns matched against TF1 names,
        see `uses_weight_decay`; None for none.
      global_clipnorm: float or None; clips all gradients together like the
        original's `tf.clip_by_global_norm`, after the cross-replica sum.
      schedule_step_offset: int (1): the update that takes `iterations`
        from s to s + 1 uses the schedule's rate at s + offset. 1 is what
        the original did (it reads `global_step` after incrementing it; the
        fixture checkpoints show it), so the first update already has
        `init_lr / num_warmup_steps` and the last one rate 0.
      name: optional name. Other Keras optimizer arguments (`clipnorm`,
        `clipvalue`, `gradient_accumulation_steps`, ...) are passed on.

    Raises:
      ValueError: `weight_decay_rate < 0`, or Keras' `weight_decay` given.
      RuntimeError: the Keras backend is not TensorFlow.

    Works with `model.fit`, `jit_compile=True`, tf.distribute strategies and
    `keras.optimizers.LossScaleOptimizer` (whose `inner_optimizer` this is).

    Source: `AdamWeightDecayOptimizer` in the original `optimization.py`.
    """

    def update_step(self, gradient, variable, learning_rate):
        """Applies one original AdamWeightDecay update to `variable`."""
        m, v, decays, _ = self._slots_and_flags(variable)
        dtype = variable.dtype
        next_m, next_v = self._moments(gradient, variable, m, v)
        update = next_m / (tf.sqrt(next_v) + tf.cast(self.epsilon, dtype))
        if decays:
            update += tf.cast(self.weight_decay_rate, dtype) * variable
        update_with_lr = tf.cast(learning_rate, dtype) * update
        self.assign(variable, variable - update_with_lr)
        self.assign(m, next_m)
        self.assign(v, next_v)


@keras.saving.register_keras_serializable(package="bert")
class LambWeightDecay(_TF1StyleOptimizer):
    """LAMB (You et al. 2019) with the original's decay exclusions.

    Per variable p with gradient g (after global-norm clipping), t the
    number of this update (`iterations + 1`):
      m, v as in `AdamWeightDecay`
      u = (m / (1 - beta_1^t)) / (sqrt(v / (1 - beta_2^t)) + epsilon)
      u += weight_decay_rate * p             # if p is decayed
      r = ||p|| / ||u|| if both > 0 else 1   # 1 for excluded variables
      p -= r * lr * u
    Weight decay is inside the trust ratio and LayerNorm weights and biases
    get neither decay nor layer adaptation, as in `tfa.optimizers.LAMB` (used
    by NVIDIA's BERT); Keras' `Lamb` has neither. Slots are named `adam_m`,
    `adam_v` so checkpoints keep the original's layout.

    Args: as `AdamWeightDecay`.
    Raises: as `AdamWeightDecay`.
    Source: not in the original BERT; the LAMB paper's Algorithm 2 (with
      the Adam update), and `tfa.optimizers.LAMB` for the exclusions.
    """

    def update_step(self, gradient, variable, learning_rate):
        """Applies one LAMB update to `variable`."""
        m, v, decays, excluded = self._slots_and_flags(variable)
        dtype = variable.dtype
        next_m, next_v = self._moments(gradient, variable, m, v)
        t = tf.cast(self.iterations + 1, dtype)
        m_hat = next_m / (1.0 - tf.pow(tf.cast(self.beta_1, dtype), t))
        v_hat = next_v / (1.0 - tf.pow(tf.cast(self.beta_2, dtype), t))
        update = m_hat / (tf.sqrt(v_hat) + tf.cast(self.epsilon, dtype))
        if decays:
            update += tf.cast(self.weight_decay_rate, dtype) * variable
        ratio = tf.constant(1.0, dtype)
        if not excluded:
            w_norm = tf.norm(variable, ord=2)
            u_norm = tf.norm(update, ord=2)
            ratio = tf.where(
                w_norm > 0,
                tf.where(u_norm > 0, w_norm / u_norm, ratio),
                ratio)
        self.assign(variable,
                    variable - ratio * tf.cast(learning_rate, dtype) * update)
        self.assign(m, next_m)
        self.assign(v, next_v)


def create_optimizer(init_lr, num_train_steps, num_warmup_steps,
                     optimizer_type="adamw", weight_decay_rate=0.01,
                     model=None,
                     exclude_from_weight_decay=DEFAULT_EXCLUDE_FROM_WEIGHT_DECAY,
                     global_clipnorm=1.0):
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

    Returns:
      `AdamWeightDecay` or `LambWeightDecay` with beta_1 0.9, beta_2 0.999,
      epsilon 1e-6 and a `WarmupLinearDecay` learning rate.

    Raises:
      ValueError: unknown `optimizer_type`, or bad schedule arguments.

    Source: `create_optimizer` in the original `optimization.py`.
    """
    classes = {"adamw": AdamWeightDecay, "lamb": LambWeightDecay}
    key = str(optimizer_type).lower()
    if key not in classes:
        raise ValueError(
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
    return optimizer
