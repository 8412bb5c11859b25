# Sourced by run_main.sh and run_tests.sh: creates the virtualenv on first use
# and (re)installs the project only when setup.py changed since the last
# install, so reruns need no package index.
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VENV=${VENV:-$REPO/.venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
SETUP_HASH=$(sha256sum "$REPO/setup.py" | cut -c1-16)
STAMP="$VENV/.installed-$SETUP_HASH-${INSTALL_EXTRAS:-base}"
# The base install is part of every install with extras: a venv that
# run_tests.sh made serves run_main.sh and the demos as it is.
if [ -z "${INSTALL_EXTRAS:-}" ] && compgen -G "$VENV/.installed-$SETUP_HASH-*" > /dev/null; then
  STAMP=$(compgen -G "$VENV/.installed-$SETUP_HASH-*" | head -n 1)
fi
if [ ! -f "$STAMP" ]; then
  # uv (from PyPI, into the venv) installs the same requirements as pip,
  # downloading in parallel: the install with the test extras took 70-92 s
  # with pip (no cache; ~40 s with its cache) and 14 s with uv (empty
  # cache; 5 s from its cache), on this 2-core machine. Where uv cannot be
  # had, pip does it. Neither compiles the modules one by one: compileall
  # does it on every core afterwards, the packages' own test modules left
  # out.
  TARGET="$REPO${INSTALL_EXTRAS:+[$INSTALL_EXTRAS]}"
  if "$VENV/bin/python" -m pip install -q --disable-pip-version-check uv 2> /dev/null; then
    "$VENV/bin/python" -m uv pip install -q --python "$VENV/bin/python" -e "$TARGET"
  else
    echo "scripts_env.sh: uv could not be installed (offline, or no wheel for this platform); installing with pip." >&2
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q --no-compile -e "$TARGET"
  fi
  "$VENV/bin/python" -m compileall -q -j 0 -x '/tests?/|_test[.]py$' "$("$VENV/bin/python" -c \
    'import sysconfig; print(sysconfig.get_paths()["purelib"])')" > /dev/null || true
  touch "$STAMP"
fi
# TF_CPP_MIN_LOG_LEVEL is left to the scripts: they set it and filter
# TensorFlow's start-up lines themselves (bert_tf1/tasks/quiet_start.py).
