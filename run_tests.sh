#!/usr/bin/env bash
# Sets up a virtualenv (first run, or after setup.py changed) and runs the
# whole test suite, slow end-to-end tests included. Needs ../shared beside the
# repository (or BERT_SHARED_DIR). Extra arguments go to pytest, e.g.
# `-m "not slow"`.
set -euo pipefail
# dev: pytest and test references; beam: tests/data/pretraining/test_beam.py;
# plots: matplotlib, so the training_curves.png test runs too; deploy: the
# OpenVINO, LiteRT and ONNX exports (tests/serving/test_deploy_formats.py).
INSTALL_EXTRAS=dev,beam,plots,deploy
source "$(dirname "$0")/scripts_env.sh"
cd "$REPO"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-}
# Two test processes (pytest-xdist, from the dev extra), each test file
# in one of them, the files in collection order (the longest first:
# tests/conftest.py); BERT_TEST_PROCESSES=1 runs everything in one.
JOBS=${BERT_TEST_PROCESSES:-2}
if [ "$JOBS" -gt 1 ]; then
  set -- -n "$JOBS" --dist loadfile --no-loadscope-reorder "$@"
fi
exec "$VENV/bin/python" -m pytest "$@"
