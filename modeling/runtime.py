"""Runtime switches shared by the scripts: devices, precision, XLA.

The original scripts share a block of TPU flags (`use_tpu`, `tpu_name`, ...,
`save_checkpoints_steps`, `iterations_per_loop`); `define_runtime_flags` defines
them with the same names and defaults, plus this project's switches
(`distribution_strategy`, `use_mixed_precision`, `use_xla`,
`keep_checkpoint_max`). Every script builds its `RuntimeOptions` from the flags
and passes them here, so adding a switch touches only this file.
"""
import dataclasses

import keras
import tensorflow as tf
from absl import flags, logging

STRATEGIES = ("auto", "one_device", "mirrored", "multi_worker_mirrored", "tpu")


@dataclasses.dataclass
class RuntimeOptions:
    """Where and how a script runs.

    Attributes mirror the flags of `define_runtime_flags`.
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
    use_xla: bool = False
    keep_checkpoint_max: int = 5


def define_runtime_flags():
    """Defines the original's shared TPU flags plus this project's switches."""
    flags.DEFINE_bool("use_tpu", False, "Whether to use TPU or GPU/CPU.")
    flags.DEFINE_string(
        "tpu_name", None,
        "The Cloud TPU to use for training. This should be either the name "
        "used when creating the Cloud TPU, or a grpc://ip.address.of.tpu:8470 "
        "url.")
    flags.DEFINE_string(
        "tpu_zone", None,
        "[Optional] GCE zone where the Cloud TPU is located in. If not "
        "specified, we will attempt to automatically detect it from metadata.")
    flags.DEFINE_string(
        "gcp_project", None,
        "[Optional] Project name for the Cloud TPU-enabled project. If not "
        "specified, we will attempt to automatically detect it from metadata.")
    flags.DEFINE_string("master", None, "[Optional] TensorFlow master URL.")
    flags.DEFINE_integer(
        "num_tpu_cores", 8,
        "Only used if `use_tpu` is True. Total number of TPU cores to use.")
    flags.DEFINE_integer("save_checkpoints_steps", 1000,
                         "How often to save the model checkpoint.")
    flags.DEFINE_integer(
        "iterations_per_loop", 1000,
        "How many steps to make in each estimator call. Here: Keras "
        "`steps_per_execution` on TPU.")
    flags.DEFINE_enum(
        "distribution_strategy", "auto", STRATEGIES,
        "tf.distribute strategy. `auto`: TPU if --use_tpu, mirrored over all "
        "GPUs if there are several, else the default (one device).")
    flags.DEFINE_bool(
        "use_mixed_precision", False,
        "Compute in float16 (GPU) or bfloat16 (TPU) with float32 weights.")
    flags.DEFINE_bool("use_xla", False, "Compile the train step with XLA.")
    flags.DEFINE_integer("keep_checkpoint_max", 5,
                         "How many recent `model.ckpt-N` to keep in output_dir.")


def runtime_options_from_flags(flag_values=None):
    """Reads the flags of `define_runtime_flags` into `RuntimeOptions`."""
    flag_values = flag_values or flags.FLAGS
    return RuntimeOptions(**{field.name: flag_values[field.name].value
                             for field in dataclasses.fields(RuntimeOptions)})


def get_strategy(options):
    """The `tf.distribute.Strategy` the options ask for.

    Raises:
        ValueError: TPU asked for without a TPU address.
    """
    name = options.distribution_strategy
    if name == "auto":
        if options.use_tpu:
            name = "tpu"
        elif len(tf.config.list_logical_devices("GPU")) > 1:
            name = "mirrored"
        else:
            name = "one_device"
    if name == "tpu":
        if not (options.tpu_name or options.master):
            raise ValueError("--use_tpu needs --tpu_name (or --master).")
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
            tpu=options.tpu_name or options.master, zone=options.tpu_zone,
            project=options.gcp_project)
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        strategy = tf.distribute.TPUStrategy(resolver)
    elif name == "mirrored":
        strategy = tf.distribute.MirroredStrategy()
    elif name == "multi_worker_mirrored":
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    else:
        strategy = tf.distribute.get_strategy()
    logging.info("Distribution strategy: %s with %d replica(s).", name,
                 strategy.num_replicas_in_sync)
    return strategy


def configure_precision(options):
    """Sets the global Keras dtype policy; returns its name."""
    if options.use_mixed_precision:
        policy = "mixed_bfloat16" if options.use_tpu else "mixed_float16"
    else:
        policy = "float32"
    keras.mixed_precision.set_global_policy(policy)
    return policy


def is_chief(strategy):
    """True on the worker that writes checkpoints and result files."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.task_type:
        return True
    return resolver.task_type == "chief" or (
        resolver.task_type == "worker" and resolver.task_id == 0)


def steps_per_execution(options):
    """Train steps per `tf.function` call: `iterations_per_loop` on TPU only."""
    return options.iterations_per_loop if options.use_tpu else 1


def setup(options):
    """Applies the precision policy and returns the distribution strategy.

    Call before building models, then build them under `strategy.scope()`.
    """
    configure_precision(options)
    return get_strategy(options)
