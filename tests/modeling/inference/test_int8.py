"""modeling/inference/int8.py: weight quantization, exact oneDNN products, outputs.

The oneDNN checks run in a subprocess (tests/helpers/int8_worker.py) with
TF_ENABLE_ONEDNN_OPTS=1, which must be set before TensorFlow is imported.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from modeling.inference import int8 as int8_inference
from tests.conftest import REPO_ROOT


def test_quantize_kernel_per_column_by_hand():
    kernel = np.array([[0.5, -2.0, 0.0],
                       [-1.27, 1.0, 0.0]], np.float32)
    values, scales = int8_inference.quantize_kernel(kernel)
    # Column peaks 1.27, 2.0 and an all-zero column (scale 1).
    np.testing.assert_allclose(scales, [0.01, 2.0 / 127, 1.0], rtol=1e-6)
    np.testing.assert_array_equal(values, [[50, -127, 0], [-127, 64, 0]])
    assert values.dtype == np.int8


def test_quantize_kernel_error_at_most_half_a_step():
    kernel = np.random.default_rng(3).normal(size=(64, 16)).astype(np.float32)
    values, scales = int8_inference.quantize_kernel(kernel)
    assert np.abs(values).max() == 127
    assert (np.abs(values * scales - kernel) <= scales / 2 + 1e-7).all()


_WITHOUT_ONEDNN = """
from modeling import BertConfig, BertModel
from modeling.inference import int8
from data.io.errors import UserError
assert not int8.onednn_enabled()
config = BertConfig(vocab_size=16, hidden_size=8, num_hidden_layers=1,
                    num_attention_heads=2, intermediate_size=8)
try:
    int8.quantize_int8(BertModel(config))
except UserError as error:  # a setting the user fixes: one line in scripts
    print(error)
"""


def test_without_onednn_a_clear_error():
    # This process has oneDNN on (tests/conftest.py), so a process with
    # TF_ENABLE_ONEDNN_OPTS=0 (oneDNN off on every CPU) shows the error.
    process = subprocess.run(
        [sys.executable, "-c", _WITHOUT_ONEDNN], capture_output=True,
        text=True, timeout=300, cwd=REPO_ROOT,
        env=dict(os.environ, TF_ENABLE_ONEDNN_OPTS="0",
                 PYTHONPATH=str(REPO_ROOT)))
    assert process.returncode == 0, process.stderr[-3000:]
    assert "TF_ENABLE_ONEDNN_OPTS=1" in process.stdout


@pytest.fixture(scope="module")
def worker_result():
    process = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tests" / "helpers" / "int8_worker.py")],
        capture_output=True, text=True, timeout=600,
        env=dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1"))
    assert process.returncode == 0, process.stderr[-3000:]
    return json.loads(process.stdout.strip().splitlines()[-1])


def test_onednn_products_equal_numpy_integer_matmul(worker_result):
    # Worst case included: 7-bit codes of 127 against weights of +-127 must
    # not saturate oneDNN's int16 pair sums on AVX2.
    assert worker_result["onednn"]
    assert worker_result["products_max_error"] == 0.0


def test_int8_outputs_close_to_float32(worker_result):
    # The LayerNorm outputs have unit scale; 7-bit rows and 8-bit columns
    # keep them within a few hundredths.
    assert worker_result["sequence_max_error"] < 0.02
    assert worker_result["classifier_max_error"] < 0.05 * max(
        worker_result["classifier_scale"], 1e-3) + 1e-4
    assert worker_result["num_labels"] == 3
