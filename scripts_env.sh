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
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # pip compiles the installed modules one by one; compileall does the same
  # on every core afterwards (a full install: 99 s -> 82 s on 2 cores).
  if [ -n "${INSTALL_EXTRAS:-}" ]; then
    "$VENV/bin/python" -m pip install -q --no-compile -e "$REPO[$INSTALL_EXTRAS]"
  else
    "$VENV/bin/python" -m pip install -q --no-compile -e "$REPO"
  fi
  "$VENV/bin/python" -m compileall -q -j 0 "$("$VENV/bin/python" -c \
    'import sysconfig; print(sysconfig.get_paths()["purelib"])')" > /dev/null || true
  touch "$STAMP"
fi
# TF_CPP_MIN_LOG_LEVEL is left to the scripts: they set it and filter
# TensorFlow's start-up lines themselves (bert_tf1/tasks/quiet_start.py).
