#!/usr/bin/env bash
# Sets up a virtual environment (first run only) and runs the whole test suite,
# slow end-to-end tests included. Needs ../shared beside the repository (or
# BERT_SHARED_DIR). Extra arguments go to pytest, e.g. `-m "not slow"`.
set -euo pipefail
cd "$(dirname "$0")"
VENV=${VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -e ".[dev]"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-}
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
exec "$VENV/bin/python" -m pytest -q "$@"
