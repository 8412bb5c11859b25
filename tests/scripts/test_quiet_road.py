"""At the default verbosity the road out is quiet: the documented export of
every format and predict_text.py (plain and with --runner) print no
TensorFlow start-up or INFO line, no converter "will be renamed" line, no
cuInit error, no Beam "apitools" line and no LiteRT banner; predict_text.py
ends with one line of examples per second on stderr, stdout holding the
JSON lines alone. Fresh processes without TF_CPP_MIN_LOG_LEVEL, as a user's
shell runs them."""
import json
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES_DIR, REPO_ROOT

pytest.importorskip(
    "openvino", reason="--format needs the [deploy] extra (pip install -e '.[deploy]'; run_tests.sh installs it)")
pytest.importorskip(
    "apache_beam", reason="--runner needs the [beam] extra (pip install -e '.[beam]'; run_tests.sh installs it)")
MRPC = FIXTURES_DIR / "tf1_vocab_mrpc_classifier"
NOISE = re.compile(
    r"^([IWE]\d{4} |INFO[: ]|WARNING: All log messages"
    r"|.*(failed call to cuInit|will be renamed|apitools not found"
    r"|XNNPACK|Sharding callback|Assets written|Writing fingerprint))")
SPEED = re.compile(r"^predict_text: \d+ examples in [\d.]+ s, [\d.]+ "
                   r"examples/s$")


def _run(script, *args):
    env = {key: value for key, value in os.environ.items()
           if key != "TF_CPP_MIN_LOG_LEVEL"}
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run([sys.executable, str(REPO_ROOT / script), *args],
                            cwd=REPO_ROOT, env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def _noise(stderr):
    return [line for line in stderr.splitlines() if NOISE.match(line)]


@pytest.mark.slow   # three fresh interpreters and an export: ~1-2 min
def test_export_and_predict_text_are_quiet(tmp_path):
    export_dir = tmp_path / "deploy"
    exported = _run(
        "export_saved_model.py", "--model_type=classifier", "--task_name=MRPC",
        f"--vocab_file={MRPC / 'vocab.txt'}", "--do_lower_case=true",
        f"--bert_config_file={MRPC / 'bert_config.json'}",
        f"--init_checkpoint={MRPC}", "--max_seq_length=16",
        "--format=saved_model,numeric,openvino,litert,onnx",
        f"--export_dir={export_dir}")
    assert not _noise(exported.stderr), _noise(exported.stderr)
    assert f"Wrote {export_dir}" in exported.stdout
    text = "The cat sat on the mat.\tA cat was sitting on the mat."
    predicted = _run("predict_text.py", f"--export_dir={export_dir / 'litert'}",
                     f"--text={text}")
    assert not _noise(predicted.stderr), _noise(predicted.stderr)
    assert [line for line in predicted.stderr.splitlines()
            if SPEED.match(line)], predicted.stderr
    assert json.loads(predicted.stdout)["text_b"] == text.split("\t")[1]
    lines = tmp_path / "lines.txt"
    lines.write_text(f"{text}\nhello world\n", encoding="utf-8")
    beamed = _run("predict_text.py", f"--export_dir={export_dir / 'numeric'}",
                  "--runner=DirectRunner", f"--input_file={lines}",
                  f"--output_dir={tmp_path / 'out'}")
    assert not _noise(beamed.stderr), _noise(beamed.stderr)
