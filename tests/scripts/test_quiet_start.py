"""Tests for bert_tf1/tasks/quiet_start.py: TensorFlow's start-up lines do not bury a
script's one-line error, and nothing else is swallowed."""
import os
import subprocess
import sys

import pytest

from bert_tf1.data.io.stderr_noise import lines_to_keep
from bert_tf1.tasks.quiet_start import STARTUP_NOISE
from tests.conftest import FIXTURES_DIR, REPO_ROOT

STARTUP_OUTPUT = """\
WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1796097237.634508   12926 port.cc:153] oneDNN custom operations are on.
I0000 00:00:1796097237.636940   12926 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.
E0000 00:00:1796097242.618688   12926 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)
I0000 00:00:1796097237.637000   12926 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.
To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.
E0000 00:00:1796097242.618688   12926 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)
E0000 00:00:1796097237.640000   12926 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered
W0000 00:00:1796097237.650000   12926 tf_trt.cc:12] TF-TRT Warning: Could not find TensorRT
E0000 00:00:1796097242.618700   12926 some_op.cc:10] a real error from TensorFlow
W0000 00:00:1796097242.618800   12926 some_op.cc:11] a real warning from TensorFlow
/venv/lib/python3.11/site-packages/x.py:3: UserWarning: a Python warning
"""


def test_only_startup_noise_is_dropped():
    # Real C++ warnings and errors pass, as the module docstring promises.
    assert lines_to_keep(STARTUP_OUTPUT, STARTUP_NOISE) == [
        "E0000 00:00:1796097242.618700   12926 some_op.cc:10] a real error from TensorFlow",
        "W0000 00:00:1796097242.618800   12926 some_op.cc:11] a real warning from TensorFlow",
        "/venv/lib/python3.11/site-packages/x.py:3: UserWarning: a Python warning",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("level", [None, "2"])
def test_script_error_is_the_only_stderr_line_by_default(tmp_path, level):
    # Unset, or set to 2 (as scripts_env.sh once did): the filter is on.
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    if level is not None:
        env["TF_CPP_MIN_LOG_LEVEL"] = level
    fixture = os.path.join(FIXTURES_DIR, "tf1_vocab_mrpc_classifier")
    result = subprocess.run(
        [sys.executable, "run_classifier.py", "--task_name=no-such-task",
         f"--data_dir={tmp_path}", "--do_train=true",
         f"--vocab_file={fixture}/vocab.txt",
         f"--bert_config_file={fixture}/bert_config.json",
         f"--output_dir={tmp_path}/out"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("run_classifier.py: error: --task_name")


@pytest.mark.slow
def test_create_pretraining_data_and_its_workers_start_quietly(tmp_path):
    """A successful run with --num_workers=2 (spawned workers, which import
    TensorFlow themselves): none of TensorFlow's start-up lines on stderr.
    Before, the error path imported `modeling` first and so TensorFlow
    unfiltered, twice."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    vocab = os.path.join(FIXTURES_DIR, "tf1_vocab_mrpc_classifier", "vocab.txt")
    corpus = os.path.join(os.path.dirname(FIXTURES_DIR), "data", "pretraining",
                          "sample_text.txt")
    result = subprocess.run(
        [sys.executable, "create_pretraining_data.py", f"--input_file={corpus}",
         f"--output_file={tmp_path}/out.tfrecord", f"--vocab_file={vocab}",
         "--num_workers=2", "--shard_size_mb=0.002", "--dupe_factor=1"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Wrote" in result.stderr
    for noise in ("absl::InitializeLog", "cuInit", "cuda drivers",
                  "oneDNN custom operations"):
        assert noise not in result.stderr, result.stderr[-3000:]
