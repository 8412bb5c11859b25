"""benchmarks/gpu.py runs (on the CPU here): `--quick`, a tiny model, 2 steps.

With --num_hidden_layers=1: the table's rows and timing do not depend on the
depth, and each row's XLA compilation (most of the run on a CPU, ~10-18 CPU
s per SQuAD row) is about a quarter shorter with one encoder layer than
with the tiny model's two."""
import pytest

from tests.helpers.script_runner import run_script_argv


def _run(*flags):
    # In a fork of the warm script server (TensorFlow imported, no op run).
    process = run_script_argv("benchmarks/gpu.py", "--quick",
                              "--num_hidden_layers=1", *flags, timeout=900)
    assert process.returncode == 0, process.stderr[-3000:]
    assert "; 1 encoder layers (--num_hidden_layers)" in process.stdout.split(
        "\n", 1)[0], process.stdout[:300]
    rows = [line.split("|")[1:-1] for line in process.stdout.splitlines()
            if line.startswith("| tiny ")]
    return [[cell.strip() for cell in row] for row in rows]


@pytest.mark.slow
def test_quick_every_precision():
    rows = _run()
    assert [(r[1], r[2]) for r in rows] == [
        (task, precision) for task in ("infer", "squad")
        for precision in ("fp32", "bf16", "fp16")]
    # Every row timed (fp32 included: the one precision every machine has).
    assert all(float(r[5]) > 0 for r in rows)
