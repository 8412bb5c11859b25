"""The runtime flags every training script shares, and `RuntimeOptions` from
them: the original's TPU flags (same names and defaults) plus this project's
switches. The layers below see only `bert_tf1.modeling.training.runtime.RuntimeOptions`.
"""
import dataclasses
import functools

from absl import flags

from bert_tf1.modeling.training.runtime import (OPTIMIZERS, PRECISIONS, STRATEGIES,
                                                RuntimeOptions)
from bert_tf1.tasks.errors import UserError


def define_runtime_flags(flag_values=None):
    """Defines the flags in `flag_values` (default `flags.FLAGS`)."""
    flag_values = flag_values if flag_values is not None else flags.FLAGS
    boolean, string, integer, enum, real = (
        functools.partial(define, flag_values=flag_values) for define in (
            flags.DEFINE_bool, flags.DEFINE_string, flags.DEFINE_integer,
            flags.DEFINE_enum, flags.DEFINE_float))
    boolean("use_tpu", False, "Whether to use TPU or GPU/CPU.")
    string(
        "tpu_name", None,
        "The Cloud TPU to use for training. This should be either the name "
        "used when creating the Cloud TPU, or a grpc://ip.address.of.tpu:8470 "
        "url.")
    string(
        "tpu_zone", None,
        "[Optional] GCE zone where the Cloud TPU is located in. If not "
        "specified, we will attempt to automatically detect it from metadata.")
    string(
        "gcp_project", None,
        "[Optional] Project name for the Cloud TPU-enabled project. If not "
        "specified, we will attempt to automatically detect it from metadata.")
    string("master", None, "[Optional] TensorFlow master URL.")
    integer(
        "num_tpu_cores", 8,
        "Only used if `use_tpu` is True. Total number of TPU cores to use.")
    integer("save_checkpoints_steps", 1000,
            "How often to save the model checkpoint.", lower_bound=1)
    integer(
        "iterations_per_loop", 1000,
        "How many steps to make in each estimator call. Here: the default "
        "--steps_per_execution under a TPU strategy.")
    enum(
        "distribution_strategy", "auto", STRATEGIES,
        "tf.distribute strategy. `auto`: TPU if --use_tpu, mirrored over all "
        "GPUs if there are several, else the default (one device). "
        "`multi_worker_mirrored` reads the cluster from TF_CONFIG.")
    boolean(
        "use_mixed_precision", False,
        "Alias kept for old commands: --mixed_precision=bfloat16 under a TPU "
        "strategy, float16 otherwise.")
    enum(
        "mixed_precision", None, PRECISIONS,
        "Compute dtype, with float32 weights: float32 (default), bfloat16 "
        "(CPU with AMX, GPU, TPU) or float16 (GPU; with dynamic loss "
        "scaling, its state kept in checkpoints).")
    boolean("use_xla", False, "Compile the train step with XLA.")
    integer("keep_checkpoint_max", 5,
            "How many recent `model.ckpt-N` to keep in output_dir (0: all).",
            lower_bound=0)
    integer(
        "gradient_accumulation_steps", 1,
        "Average the gradients of this many batches of --train_batch_size "
        "per optimizer step (global_step counts optimizer steps).",
        lower_bound=1)
    integer(
        "steps_per_execution", None,
        "Train steps per compiled call (default: --iterations_per_loop under "
        "a TPU strategy, else 1).", lower_bound=1)
    enum(
        "optimizer", "adamw", OPTIMIZERS,
        "adamw: the original AdamWeightDecayOptimizer; lamb: LAMB with the "
        "same weight-decay exclusions. (run_pretraining.py's "
        "--optimizer_type is an alias.)")
    real(
        "tpu_timeout_s", 120.0,
        "How long to wait for the TPU of --tpu_name to answer.", lower_bound=0)
    integer(
        "log_steps", 100,
        "Log `loss = <mean loss since the last line>, step = N` with "
        "global_step/sec and "
        "examples/sec, and write the TensorBoard training scalars, every this "
        "many global steps (the Estimator's log_step_count_steps).",
        lower_bound=1)
    integer(
        "seed", None,
        "Seed every random choice of the run (weight initialisation, dropout, "
        "shuffles) and run TensorFlow ops deterministically, so two runs with "
        "the same seed on the same machine and strategy give identical "
        "weights (somewhat slower). Default: unseeded, as the original.")


def runtime_options_from_flags(flag_values=None):
    """`RuntimeOptions` of the flags of `define_runtime_flags` (and
    run_pretraining.py's `--optimizer_type`, an alias of `--optimizer`).

    Raises:
        UserError: `--optimizer` and `--optimizer_type` disagree, or
            `--use_mixed_precision` is given with `--mixed_precision=float32`.
    """
    flag_values = flag_values if flag_values is not None else flags.FLAGS
    values = {field.name: flag_values[field.name].value
              for field in dataclasses.fields(RuntimeOptions)
              if field.name in flag_values}
    if "optimizer_type" in flag_values and flag_values["optimizer_type"].present:
        alias = flag_values["optimizer_type"].value
        if "optimizer" in flag_values and flag_values["optimizer"].present \
                and flag_values["optimizer"].value != alias:
            raise UserError(
                f"--optimizer={flag_values['optimizer'].value} and "
                f"--optimizer_type={alias} disagree; give one of them.")
        values["optimizer"] = alias
    options = RuntimeOptions(**values)
    if options.use_mixed_precision and options.mixed_precision == "float32":
        raise UserError("--use_mixed_precision contradicts "
                         "--mixed_precision=float32; give one of them.")
    return options
