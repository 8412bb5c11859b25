"""Runtime flags, precision, strategy-driven choices and the TPU wait."""
import socket
import time

import keras
import numpy as np
import pytest
import tensorflow as tf
from absl import flags

from bert_tf1.modeling.training import runtime
from bert_tf1.modeling.training.runtime import RuntimeOptions
from bert_tf1.tasks import runtime_flags
from bert_tf1.modeling.training.runtime import TPUConnectionError, connect_tpu


def _flag_values(argv, alias=False):
    values = flags.FlagValues()
    runtime_flags.define_runtime_flags(values)
    if alias:  # run_pretraining.py's own name for --optimizer
        flags.DEFINE_enum("optimizer_type", "adamw", ["adamw", "lamb"], "alias",
                          flag_values=values)
    values(["prog"] + argv)
    return values


def test_new_flags_reach_runtime_options():
    options = runtime_flags.runtime_options_from_flags(_flag_values([
        "--mixed_precision=bfloat16", "--gradient_accumulation_steps=4",
        "--steps_per_execution=8", "--optimizer=lamb", "--tpu_timeout_s=3"]))
    assert (options.mixed_precision, options.gradient_accumulation_steps,
            options.steps_per_execution, options.optimizer,
            options.tpu_timeout_s) == ("bfloat16", 4, 8, "lamb", 3.0)
    defaults = runtime_flags.runtime_options_from_flags(_flag_values([]))
    assert defaults == RuntimeOptions()


def test_optimizer_type_is_an_alias_of_optimizer():
    values = _flag_values(["--optimizer_type=lamb"], alias=True)
    assert runtime_flags.runtime_options_from_flags(values).optimizer == "lamb"
    values = _flag_values(["--optimizer_type=lamb", "--optimizer=adamw"], alias=True)
    with pytest.raises(ValueError, match="disagree"):
        runtime_flags.runtime_options_from_flags(values)


def test_use_mixed_precision_alias_follows_the_strategy():
    default = tf.distribute.get_strategy()
    assert runtime.resolve_precision(RuntimeOptions(), default) == "float32"
    alias = RuntimeOptions(use_mixed_precision=True)
    assert runtime.resolve_precision(alias, default) == "float16"
    # --use_tpu without a TPU strategy does not switch to bfloat16 ...
    assert runtime.resolve_precision(
        RuntimeOptions(use_mixed_precision=True, use_tpu=True), default) == "float16"
    assert runtime.resolve_precision(
        RuntimeOptions(mixed_precision="bfloat16"), default) == "bfloat16"
    with pytest.raises(ValueError, match="contradicts"):
        runtime_flags.runtime_options_from_flags(_flag_values(
            ["--use_mixed_precision", "--mixed_precision=float32"]))


def test_steps_per_execution_follows_the_strategy():
    default = tf.distribute.get_strategy()
    on_tpu_flag = RuntimeOptions(use_tpu=True, iterations_per_loop=50)
    assert runtime.steps_per_execution(on_tpu_flag, default) == 1
    assert runtime.steps_per_execution(on_tpu_flag) == 50  # no strategy: the flag
    assert runtime.steps_per_execution(
        RuntimeOptions(steps_per_execution=7), default) == 7
    assert not runtime.is_tpu_strategy(default)


def test_setup_sets_the_bfloat16_policy():
    previous = keras.config.dtype_policy()
    try:
        runtime.setup(RuntimeOptions(mixed_precision="bfloat16"))
        assert keras.config.dtype_policy().name == "mixed_bfloat16"
    finally:
        keras.config.set_dtype_policy(previous)


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_tpu_address_with_nothing_listening_fails_within_the_timeout():
    address = f"grpc://127.0.0.1:{_closed_port()}"
    start = time.monotonic()
    with pytest.raises(TPUConnectionError) as error:
        connect_tpu(address, timeout_s=1.5)
    assert time.monotonic() - start < 10
    message = str(error.value)
    assert address in message and "1.5 s" in message and "\n" not in message
    assert "--tpu_timeout_s" in message


def test_use_tpu_flag_with_closed_port_raises_from_setup():
    options = RuntimeOptions(use_tpu=True, tpu_timeout_s=1,
                             tpu_name=f"grpc://127.0.0.1:{_closed_port()}")
    with pytest.raises(TPUConnectionError, match="No TPU answered"):
        runtime.setup(options)
    with pytest.raises(ValueError, match="needs --tpu_name"):
        runtime.setup(RuntimeOptions(use_tpu=True))


def test_data_sharding_unless_the_dataset_chose():
    dataset = tf.data.Dataset.range(4)
    policy = tf.data.experimental.AutoShardPolicy
    sharded = runtime.shard_for_workers(dataset)
    assert sharded.options().experimental_distribute.auto_shard_policy == policy.DATA
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = policy.FILE
    chosen = runtime.shard_for_workers(dataset.with_options(options))
    assert chosen.options().experimental_distribute.auto_shard_policy == policy.FILE


def test_one_process_writes_into_output_dir(tmp_path):
    strategy = tf.distribute.get_strategy()
    assert runtime.is_chief(strategy) and not runtime.is_multi_worker(strategy)
    with runtime.worker_output_dir(strategy, str(tmp_path)) as folder:
        assert folder == str(tmp_path)


def test_unresolvable_tpu_name_is_one_clear_error():
    # The resolver asks the GCE metadata server for a name; off GCE that is
    # a urllib error, reported as one line.
    with pytest.raises(TPUConnectionError, match="Could not find the TPU 'no-such-tpu'"):
        connect_tpu("no-such-tpu", timeout_s=20)


_LATE_STRATEGY = """
import tensorflow as tf
from bert_tf1.modeling.training import runtime
tf.constant(1) + 1  # TensorFlow work before the strategy
try:
    runtime.setup(runtime.RuntimeOptions(distribution_strategy="multi_worker_mirrored"))
except RuntimeError as error:
    print("RAISED", error)
"""


@pytest.mark.slow
def test_multi_worker_strategy_created_late_says_what_to_do(repo_root):
    import json
    import os

    from tests.helpers.script_runner import run_code
    env = dict(os.environ, PYTHONPATH=str(repo_root), TF_CPP_MIN_LOG_LEVEL="2",
               TF_CONFIG=json.dumps({
                   "cluster": {"worker": ["127.0.0.1:1", "127.0.0.1:2"]},
                   "task": {"type": "worker", "index": 0}}))
    process = run_code(_LATE_STRATEGY, cwd=repo_root, env=env, timeout=120)
    assert "RAISED multi_worker_mirrored: the strategy must be created before" \
        in process.stdout, process.stderr[-3000:]
