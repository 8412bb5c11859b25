"""Where and how a run executes: devices, strategy, precision, workers.

`RuntimeOptions` holds what the runtime flags set (`tasks/runtime_flags.py`);
`setup` makes the `tf.distribute` strategy and sets the Keras precision
policy before any other TensorFlow work. Hardware-dependent decisions
follow the strategy `setup` returned, not `--use_tpu`.
"""
import contextlib
import dataclasses
import tempfile

import keras
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling import keras_internals
from bert_tf1.modeling.training import tpu_connection

STRATEGIES = ("auto", "one_device", "mirrored", "multi_worker_mirrored", "tpu")
PRECISIONS = ("float32", "bfloat16", "float16")
OPTIMIZERS = ("adamw", "lamb")
# The shuffle seed every worker uses when none was set: with DATA sharding each
# worker reads the whole input and keeps its part of every global batch, so
# all workers must shuffle alike.
MULTI_WORKER_SEED = 12345


@dataclasses.dataclass
class RuntimeOptions:
    """Where and how a script runs.

    Attributes mirror the flags of `define_runtime_flags`. `mixed_precision`
    None means "as `use_mixed_precision` says"; `steps_per_execution` None
    means `iterations_per_loop` on TPU, else 1; `seed` None (the original's
    behaviour) leaves every random choice unseeded (see `apply_seed`).
    """
    use_tpu: bool = False
    tpu_name: str = None
    tpu_zone: str = None
    gcp_project: str = None
    master: str = None
    num_tpu_cores: int = 8
    save_checkpoints_steps: int = 1000
    iterations_per_loop: int = 1000
    distribution_strategy: str = "auto"
    use_mixed_precision: bool = False
    mixed_precision: str = None
    use_xla: bool = False
    keep_checkpoint_max: int = 5
    gradient_accumulation_steps: int = 1
    steps_per_execution: int = None
    optimizer: str = "adamw"
    tpu_timeout_s: float = 120.0
    # Global steps between step logs and TensorBoard training scalars (the
    # Estimator's log_step_count_steps).
    log_steps: int = 100
    seed: int = None


def is_tpu_strategy(strategy):
    """True for a TPU strategy (every batch must then be full)."""
    return isinstance(strategy, (tf.distribute.TPUStrategy,
                                 tf.distribute.experimental.TPUStrategy))


def is_multi_worker(strategy):
    """True when the strategy spans more than one worker process."""
    return keras_internals.in_multi_worker_mode(strategy)


def _strategy_name(options):
    name = options.distribution_strategy
    if name != "auto":
        return name
    if options.use_tpu:
        return "tpu"
    if len(tf.config.list_logical_devices("GPU")) > 1:
        return "mirrored"
    return "one_device"


def apply_seed(seed):
    """Makes a run repeatable: seeds Python, NumPy, TensorFlow and Keras
    (`keras.utils.set_random_seed`) and turns on
    `tf.config.experimental.enable_op_determinism`.

    Args:
        seed: int.
    """
    keras.utils.set_random_seed(int(seed))
    tf.config.experimental.enable_op_determinism()
    logging.info("Seeded with --seed=%d; TensorFlow op determinism is on.",
                 int(seed))


def get_strategy(options):
    """The `tf.distribute.Strategy` the options ask for.

    Raises:
        ValueError: TPU asked for without a TPU address.
        TPUConnectionError: no TPU answered within `options.tpu_timeout_s`.
    """
    name = _strategy_name(options)
    if name == "tpu":
        if not (options.tpu_name or options.master):
            raise UserError("--use_tpu needs --tpu_name (or --master).")
        resolver = tpu_connection.connect_tpu(
            options.tpu_name or options.master, zone=options.tpu_zone,
            project=options.gcp_project, timeout_s=options.tpu_timeout_s)
        strategy = tf.distribute.TPUStrategy(resolver)
    elif name == "mirrored":
        # All GPUs; without GPUs, the logical CPU devices if several were
        # configured (tf.config.set_logical_device_configuration), else one.
        devices = [d.name for d in tf.config.list_logical_devices("GPU")]
        if not devices:
            cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
            devices = cpus if len(cpus) > 1 else None
        strategy = tf.distribute.MirroredStrategy(devices)
    elif name == "multi_worker_mirrored":
        try:
            strategy = tf.distribute.MultiWorkerMirroredStrategy()
        except RuntimeError as error:
            if "program startup" not in str(error):
                raise
            raise RuntimeError(
                "multi_worker_mirrored: the strategy must be created before "
                "any other TensorFlow work in the process (call "
                "bert_tf1.modeling.training.runtime.setup first).") from error
        if is_multi_worker(strategy):
            resolver = strategy.cluster_resolver
            seed = MULTI_WORKER_SEED if options.seed is None else options.seed
            logging.info("Worker %s:%s of %d; shuffles seeded with %d.",
                         resolver.task_type, resolver.task_id,
                         keras_internals.num_workers(strategy), seed)
            tf.random.set_seed(seed)
    else:
        strategy = tf.distribute.get_strategy()
    logging.info("Distribution strategy: %s with %d replica(s).", name,
                 strategy.num_replicas_in_sync)
    return strategy


def resolve_precision(options, strategy=None):
    """"float32", "bfloat16" or "float16" for these options on `strategy`.

    `--use_mixed_precision` means bfloat16 under a TPU strategy and float16
    elsewhere (what it meant before `--mixed_precision` existed).

    Raises:
        ValueError: float16 asked for under a TPU strategy.
    """
    on_tpu = is_tpu_strategy(strategy) if strategy is not None else options.use_tpu
    precision = options.mixed_precision
    if precision is None:
        if not options.use_mixed_precision:
            return "float32"
        precision = "bfloat16" if on_tpu else "float16"
    if precision == "float16" and on_tpu:
        raise UserError("TPUs compute in bfloat16, not float16: use "
                        "--mixed_precision=bfloat16.")
    return precision


def is_chief(strategy):
    """True on the worker that writes checkpoints and result files."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.task_type:
        return True
    return resolver.task_type == "chief" or (
        resolver.task_type == "worker" and resolver.task_id == 0)


def steps_per_execution(options, strategy=None):
    """Train steps per compiled call.

    `--steps_per_execution` if given; else `iterations_per_loop` under a TPU
    strategy (or, with no strategy given, with `--use_tpu`); else 1.
    """
    if options.steps_per_execution:
        return int(options.steps_per_execution)
    on_tpu = is_tpu_strategy(strategy) if strategy is not None else options.use_tpu
    return int(options.iterations_per_loop) if on_tpu else 1


def setup(options):
    """Makes the distribution strategy and sets the precision policy for it.

    Call before any other TensorFlow work (a multi-worker strategy must be
    created first), then build models under `strategy.scope()`.

    Returns:
        the `tf.distribute.Strategy`.
    Raises:
        see `get_strategy` and `resolve_precision`.
    """
    strategy = get_strategy(options)
    if options.seed is not None:
        apply_seed(options.seed)
    precision = resolve_precision(options, strategy)
    keras.mixed_precision.set_global_policy(
        "float32" if precision == "float32" else f"mixed_{precision}")
    if precision != "float32":
        logging.info("Mixed precision: %s compute, float32 weights.", precision)
    return strategy


@contextlib.contextmanager
def worker_output_dir(strategy, output_dir):
    """Where this worker writes: `output_dir` on the chief, else a private
    temporary folder removed when the block ends.
    """
    if is_chief(strategy):
        yield output_dir
        return
    with tempfile.TemporaryDirectory(prefix="bert_worker_",
                                     ignore_cleanup_errors=True) as scratch:
        yield scratch


def shard_for_workers(dataset):
    """`dataset` with DATA auto-sharding unless its options chose a policy
    (every worker reads the same shuffled stream, see `MULTI_WORKER_SEED`,
    and keeps its slice of each global batch).
    """
    policy = dataset.options().experimental_distribute.auto_shard_policy
    if policy != tf.data.experimental.AutoShardPolicy.AUTO:
        return dataset
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = (
        tf.data.experimental.AutoShardPolicy.DATA)
    return dataset.with_options(options)
