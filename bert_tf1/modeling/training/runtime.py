"""Where and how a run executes: devices, strategy, precision, workers.

`RuntimeOptions` holds what the runtime flags set (`bert_tf1/tasks/runtime_flags.py`);
`setup` makes the `tf.distribute` strategy and sets the Keras precision
policy before any other TensorFlow work. Hardware-dependent decisions
follow the strategy `setup` returned, not `--use_tpu`.

A Cloud TPU is connected with a bounded wait and a one-line error
(`connect_tpu`): TensorFlow's own path ends in a `URLError` traceback for a
TPU name it cannot resolve, and waits forever in `initialize_tpu_system`
when nothing listens at a `grpc://` address. Here the address is checked
first (TCP connect, retried until `timeout_s`) and the initialisation runs
in a daemon thread.
"""
import contextlib
import dataclasses
import socket
import tempfile
import threading
import time
import urllib.parse

import keras
import tensorflow as tf
from absl import logging

from bert_tf1.data.io.errors import UserError
from bert_tf1.modeling import keras_internals

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
        resolver = connect_tpu(
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


class TPUConnectionError(UserError, ConnectionError):
    """No TPU answered at the address given (a `ConnectionError`, reported
    by the scripts as a one-line user error).
    """


def _grpc_host_port(address):
    """(host, port) of a `grpc://host:port` address, else None."""
    if not address or not address.startswith("grpc://"):
        return None
    parsed = urllib.parse.urlparse(address)
    if not parsed.hostname or not parsed.port:
        raise TPUConnectionError(
            f"--tpu_name {address!r} is not a grpc://host:port address.")
    return parsed.hostname, parsed.port


def wait_for_port(host, port, timeout_s, address):
    """Retries a TCP connect to host:port until it succeeds or time runs out.

    Raises:
        TPUConnectionError: nothing accepted a connection within `timeout_s`.
    """
    deadline = time.monotonic() + timeout_s
    last_error = None
    while True:
        left = deadline - time.monotonic()
        try:
            with socket.create_connection((host, port),
                                          timeout=max(0.1, min(5.0, left))):
                return
        except OSError as error:
            last_error = error
        if time.monotonic() >= deadline:
            raise TPUConnectionError(
                f"No TPU answered at {address} within {timeout_s:g} s "
                f"({last_error.strerror or last_error}). Check --tpu_name and "
                "that the TPU is up, or raise --tpu_timeout_s.")
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def _run_with_timeout(function, timeout_s, what):
    """Runs `function()` in a daemon thread; raises if it takes too long."""
    outcome = {}

    def target():
        try:
            outcome["value"] = function()
        except BaseException as error:  # re-raised in the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name="tpu-connect", daemon=True)
    thread.start()
    thread.join(max(0.0, timeout_s))
    if thread.is_alive():
        raise TPUConnectionError(
            f"{what} did not finish within {timeout_s:g} s; no TPU answered. "
            "Check --tpu_name and that the TPU is up, or raise --tpu_timeout_s.")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def connect_tpu(tpu_name, zone=None, project=None, timeout_s=120.0):
    """Resolves, connects to and initialises a Cloud TPU (a name or
    `grpc://host:port`) within `timeout_s`; returns the connected
    `TPUClusterResolver`.

    Raises:
        TPUConnectionError: the name cannot be resolved, or nothing answers
            within `timeout_s`.
    """
    start = time.monotonic()
    host_port = _grpc_host_port(tpu_name)
    if host_port:
        wait_for_port(*host_port, timeout_s, tpu_name)
    try:
        resolver = _run_with_timeout(
            lambda: tf.distribute.cluster_resolver.TPUClusterResolver(
                tpu=tpu_name, zone=zone, project=project),
            timeout_s - (time.monotonic() - start),
            f"Resolving the TPU {tpu_name!r}")
    except TPUConnectionError:  # the timeout: its message says it all
        raise
    except (OSError, ValueError) as error:  # URLError is an OSError
        reason = getattr(error, "reason", None) or error
        raise TPUConnectionError(
            f"Could not find the TPU {tpu_name!r}: {reason}. --tpu_name needs "
            "a Cloud TPU name (run on a GCE VM that can see it) or a "
            "grpc://host:port address.") from None

    def initialise():
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)

    _run_with_timeout(initialise, timeout_s - (time.monotonic() - start),
                      f"Initialising the TPU at {tpu_name}")
    logging.info("Connected to the TPU %s in %.1f s.", tpu_name,
                 time.monotonic() - start)
    return resolver
