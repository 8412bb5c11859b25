"""Our TF1-style optimizers: the original `AdamWeightDecayOptimizer` and
LAMB with its weight-decay exclusions, on one base (`TF1StyleOptimizer`).

TensorFlow backend only (it uses `tf.clip_by_global_norm` and tf.distribute).
"""
import types

import keras
import tensorflow as tf

from bert_tf1.modeling import keras_internals
from bert_tf1.modeling.layers.serialization import register
from bert_tf1.modeling.optimization.weight_decay import matches_exclusion

ADAM_M = "adam_m"
ADAM_V = "adam_v"


def adam_moments(gradient, m, v, beta_1, one_minus_beta_1, beta_2,
                 one_minus_beta_2):
    """The original's Adam moment update, op for op.

    Args:
        gradient, m, v: dense tensors of one float dtype and the variable's
            shape.
        beta_1, one_minus_beta_1, beta_2, one_minus_beta_2: scalars of that
            dtype (see `TF1StyleOptimizer.moment_constants`).
    Returns:
        (next_m, next_v).

    Source: `AdamWeightDecayOptimizer.apply_gradients` in the original
    `optimization.py`.
    """
    next_m = tf.multiply(beta_1, m) + tf.multiply(one_minus_beta_1, gradient)
    next_v = (tf.multiply(beta_2, v)
              + tf.multiply(one_minus_beta_2, tf.square(gradient)))
    return next_m, next_v


class TF1StyleOptimizer(keras.optimizers.Optimizer):
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
        self._exclude_patterns = ()
        self._excluded_ids = set()
        # A plain object: Keras and TF track no attribute of it (a dict
        # attribute would be wrapped and tracked).
        self._step_constants = types.SimpleNamespace(cache=None)
        self.exclude_from_weight_decay(var_names=exclude_from_weight_decay)


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
            self._excluded_ids.add(keras_internals.variable_key(self, variable))
        if isinstance(var_names, str):
            var_names = (var_names,)
        self._exclude_patterns += tuple(var_names or ())

    def uses_weight_decay(self, variable):
        """True if `variable` gets weight decay.

        Not when `weight_decay_rate` is 0, nor when an exclude pattern matches
        (`bert_tf1.modeling.optimization.weight_decay.matches_exclusion`), nor for
        variables passed in `exclude_from_weight_decay(var_list=...)`.

        Args:
          variable: a `keras.Variable` (a model weight).
        Returns:
          bool.
        """
        if not self.weight_decay_rate:
            return False
        return not self._is_excluded(variable)

    def _is_excluded(self, variable):
        if keras_internals.variable_key(self, variable) in self._excluded_ids:
            return True
        return matches_exclusion(variable, self._exclude_patterns)


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
        index = keras_internals.variable_index(self, variable)
        if index is None:
            raise ValueError(
                f"{type(self).__name__} was not built with variable "
                f"{getattr(variable, 'path', variable)!r}.")
        return {ADAM_M: self._adam_m[index], ADAM_V: self._adam_v[index]}

    def _get_current_learning_rate(self):
        # The original's updates used the rate of the step after the
        # increment (fixture checkpoints); `schedule_step_offset=1` does too.
        schedule = keras_internals.learning_rate_setting(self)
        if isinstance(schedule,
                      keras.optimizers.schedules.LearningRateSchedule):
            return schedule(self.iterations + self.schedule_step_offset)
        return super()._get_current_learning_rate()


    def _clip_gradients(self, grads):
        # Global-norm clipping happens in `_backend_update_step`, after the
        # cross-replica sum: Keras would clip each replica's partial sum.
        if self.global_clipnorm:
            return grads
        return super()._clip_gradients(grads)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        # Keras' TF `_backend_update_step` with the original's
        # `tf.clip_by_global_norm` (repeated IndexedSlices rows included)
        # between the replica sum and the updates.
        variables = [v.value if isinstance(v, keras.Variable) else v
                     for v in trainable_variables]
        grads_and_vars = keras_internals.all_reduce_sum_gradients(
            self, list(zip(grads, variables)))
        if self.global_clipnorm:
            clipped, _ = tf.clip_by_global_norm(
                [g for g, _ in grads_and_vars], self.global_clipnorm)
            grads_and_vars = list(zip(clipped, [v for _, v in grads_and_vars]))
        # The scalar constants of every variable's update, made once per
        # graph and dtype in this step (`step_constants`), not per variable:
        # a first fit of the fixture MRPC classifier (41 variables) traced
        # 2,109 graph ops instead of 2,349; the updates are bit-identical.
        self._step_constants.cache = {}
        try:
            keras_internals.distributed_update(self, grads_and_vars,
                                               learning_rate)
        finally:
            self._step_constants.cache = None


    def _slots_and_flags(self, variable):
        index = keras_internals.variable_index(self, variable)
        return (self._adam_m[index], self._adam_v[index],
                self._decay_flags[index], self._excluded_flags[index])

    def _dense_gradient(self, gradient, variable):
        """`gradient` as a dense tensor of `variable`'s dtype."""
        if isinstance(gradient, tf.IndexedSlices):  # As the original's.
            if gradient.dense_shape is None:
                gradient = tf.IndexedSlices(gradient.values, gradient.indices,
                                            tf.shape(variable))
            gradient = tf.convert_to_tensor(gradient)
        return tf.cast(gradient, variable.dtype)

    def moment_constants(self, dtype):
        """beta_1, 1 - beta_1, beta_2, 1 - beta_2 as tensors of `dtype`.

        The differences are taken in float64, then cast, as the original's.
        """
        return tuple(tf.cast(value, dtype) for value in (
            self.beta_1, 1.0 - self.beta_1, self.beta_2, 1.0 - self.beta_2))

    def step_constants(self, dtype, learning_rate):
        """(learning_rate, beta_1, 1 - beta_1, beta_2, 1 - beta_2, epsilon,
        weight_decay_rate) as tensors of `dtype`: made once per graph, dtype
        and rate within one update step, and shared by its variables."""
        key = (tf.compat.v1.get_default_graph(), dtype, id(learning_rate))
        cache = self._step_constants.cache
        if cache is not None and key in cache:
            return cache[key][1]
        constants = (tf.cast(learning_rate, dtype),
                     *self.moment_constants(dtype),
                     tf.cast(self.epsilon, dtype),
                     tf.cast(self.weight_decay_rate, dtype))
        if cache is not None:  # the rate is kept so that its id stays its own
            cache[key] = (learning_rate, constants)
        return constants

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


@register
class AdamWeightDecay(TF1StyleOptimizer):
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
        from s to s + 1 uses the schedule's rate at s + offset (1: as the
        original, so the first update has `init_lr / num_warmup_steps`).
      name: optional name. Other Keras optimizer arguments (`clipnorm`,
        `clipvalue`, `gradient_accumulation_steps`, ...) are passed on.

    Raises:
      ValueError: `weight_decay_rate < 0`, or Keras' `weight_decay` given.
      RuntimeError: the Keras backend is not TensorFlow.

    Source: `AdamWeightDecayOptimizer` in the original `optimization.py`.
    """

    def update_step(self, gradient, variable, learning_rate):
        """Applies one original AdamWeightDecay update to `variable`."""
        m, v, decays, _ = self._slots_and_flags(variable)
        next_variable, next_m, next_v = _adamw_arithmetic(
            tf.convert_to_tensor(variable),
            self._dense_gradient(gradient, variable),
            tf.convert_to_tensor(m), tf.convert_to_tensor(v),
            *self.step_constants(variable.dtype, learning_rate), decays)
        self.assign(variable, next_variable)
        self.assign(m, next_m)
        self.assign(v, next_v)


def _adamw_ops(variable, gradient, m, v, learning_rate, beta_1,
               one_minus_beta_1, beta_2, one_minus_beta_2, epsilon,
               weight_decay_rate, decays):
    """The original's update ops; returns (next variable, next_m, next_v)."""
    next_m, next_v = adam_moments(gradient, m, v, beta_1, one_minus_beta_1,
                                  beta_2, one_minus_beta_2)
    update = next_m / (tf.sqrt(next_v) + epsilon)
    if decays:  # a Python bool: one compiled function for each value
        update += weight_decay_rate * variable
    return variable - learning_rate * update, next_m, next_v


# XLA fuses the element-wise ops into one pass over memory (measured need),
# which pays for its compilation (~0.2 CPU s per variable shape, in every
# process) on large variables only: smaller ones (biases, LayerNorm, small
# models' matrices) run the same ops unfused. The two agree to float32
# rounding. The unfused ops are a tf.function too: traced once per shape and
# `decays` in a process rather than once per variable (the same ops once
# inlined). No AutoGraph: `decays` is a Python bool, fixed at tracing.
_fused_adamw_ops = tf.function(_adamw_ops, jit_compile=True, autograph=False)
_plain_adamw_ops = tf.function(_adamw_ops, autograph=False)
FUSED_MIN_ELEMENTS = 1 << 14


def _adamw_arithmetic(variable, *args):
    """`_adamw_ops`, XLA-fused for variables of FUSED_MIN_ELEMENTS or more."""
    size = variable.shape.num_elements()
    if size is not None and size >= FUSED_MIN_ELEMENTS:
        return _fused_adamw_ops(variable, *args)
    return _plain_adamw_ops(variable, *args)


@register
class LambWeightDecay(TF1StyleOptimizer):
    """LAMB (You et al. 2019) with the original's decay exclusions.

    Per variable p with gradient g (after global-norm clipping), t the
    number of this update (`iterations + 1`):
      m, v as in `AdamWeightDecay`
      u = (m / (1 - beta_1^t)) / (sqrt(v / (1 - beta_2^t)) + epsilon)
      u += weight_decay_rate * p             # if p is decayed
      r = ||p|| / ||u|| if both > 0 else 1   # 1 for excluded variables
      p -= r * lr * u
    Weight decay is inside the trust ratio and LayerNorm weights and biases
    get neither decay nor layer adaptation, as in `tfa.optimizers.LAMB`.
    Slots are named `adam_m`, `adam_v` as the original's.

    Args: as `AdamWeightDecay`.
    Raises: as `AdamWeightDecay`.
    Source: not in the original BERT; the LAMB paper's Algorithm 2 (with
      the Adam update), and `tfa.optimizers.LAMB` for the exclusions.
    """

    def update_step(self, gradient, variable, learning_rate):
        """Applies one LAMB update to `variable`."""
        m, v, decays, excluded = self._slots_and_flags(variable)
        dtype = variable.dtype
        (rate, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2, epsilon,
         weight_decay_rate) = self.step_constants(dtype, learning_rate)
        next_m, next_v = adam_moments(
            self._dense_gradient(gradient, variable), m, v, beta_1,
            one_minus_beta_1, beta_2, one_minus_beta_2)
        t = tf.cast(self.iterations + 1, dtype)
        m_hat = next_m / (1.0 - tf.pow(beta_1, t))
        v_hat = next_v / (1.0 - tf.pow(beta_2, t))
        update = m_hat / (tf.sqrt(v_hat) + epsilon)
        if decays:
            update += weight_decay_rate * variable
        ratio = tf.constant(1.0, dtype)
        if not excluded:
            w_norm = tf.norm(variable, ord=2)
            u_norm = tf.norm(update, ord=2)
            ratio = tf.where(
                w_norm > 0,
                tf.where(u_norm > 0, w_norm / u_norm, ratio),
                ratio)
        self.assign(variable,
                    variable - ratio * rate * update)
        self.assign(m, next_m)
        self.assign(v, next_v)
