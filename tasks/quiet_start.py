"""Start TensorFlow without its start-up noise on stderr.

TensorFlow 2.21 prints its start-up lines (the "before absl::InitializeLog"
warning, the oneDNN and CPU-feature notices, "Could not find cuda drivers",
"failed call to cuInit" on a machine without a GPU) from C++ before its
logging is set up, so `TF_CPP_MIN_LOG_LEVEL` does not silence them, and they
bury a script's one-line error. `start_tensorflow` imports TensorFlow with
file descriptor 2 pointed at a temporary file, then writes back every line
that is not start-up noise. What is dropped: C++ info lines (`I...`, notices,
never warnings), absl's pre-initialisation notice, and a short list of known
start-up warnings and errors of machines without a GPU or TensorRT (cuInit,
the CUDA factory registrations, TensorRT missing). Every other line, C++
warnings (`W...`) and errors (`E...`) included, reaches the user.

Nothing is filtered when the user set `TF_CPP_MIN_LOG_LEVEL` to 0 or 1
(they asked for TensorFlow's info or warning lines); a level of 2 or 3, the
default here, keeps the filter.
"""
import contextlib
import os
import re
import sys
import tempfile

# TensorFlow's start-up noise only: absl's pre-initialisation notice, C++
# info lines and the CPU-feature notice's second line, and the known
# warnings/errors of a machine without a GPU driver or TensorRT.
_STARTUP_NOISE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog"
    r"|I\d{4} \d\d:\d\d:\d\d"
    r"|[WE]\d{4} .*(failed call to cuInit"
    r"|Unable to register cu(DNN|FFT|BLAS) factory"
    r"|TF-TRT Warning: Could not find TensorRT"
    r"|computation placer already registered)"
    r"|To enable the following instructions:"
    r"|.*rebuild TensorFlow with the appropriate compiler flags)")

# The one line TensorFlow prints at the first run of some graphs on CPUs
# without AVX-512 when oneDNN is on: an "E" line, although nothing failed
# (int64 ops simply run on Eigen).
RUNTIME_NOISE = re.compile(
    r"^E\d{4} .*oneDNN supports DT_\w+ only on platforms with AVX-512")

#: Values of TF_CPP_MIN_LOG_LEVEL that ask for TensorFlow's own lines.
_VERBOSE_LEVELS = ("0", "1")


def start_tensorflow():
    """Sets the environment defaults and imports TensorFlow quietly.

    Call at the top of a script, before anything imports TensorFlow. Sets
    `TF_CPP_MIN_LOG_LEVEL=2`, `KERAS_BACKEND=tensorflow` and
    `TF_ENABLE_ONEDNN_OPTS=1` unless already set, imports TensorFlow and lists the physical devices (which is when
    CUDA is probed), and replays on stderr whatever else was printed.

    Returns:
        the `tensorflow` module.
    """
    wants_tf_lines = (os.environ.get("TF_CPP_MIN_LOG_LEVEL", "").strip()
                      in _VERBOSE_LEVELS)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    # oneDNN kernels on every x86 CPU (TensorFlow turns them on only where
    # AVX-512 is present): 15-30% faster float32 on AVX2 machines.
    # TF_ENABLE_ONEDNN_OPTS=0 keeps TF's default.
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    if wants_tf_lines or "tensorflow" in sys.modules:
        import tensorflow as tf
        return tf
    with tensorflow_noise_filtered(_STARTUP_NOISE):
        import tensorflow as tf
        tf.config.list_physical_devices()
    return tf


@contextlib.contextmanager
def tensorflow_noise_filtered(noise=RUNTIME_NOISE):
    """Runs the block with file descriptor 2 captured, then replays on
    stderr every captured line that `noise` does not match.

    For the C++ lines TensorFlow prints once per process outside its logging
    levels: at import (`_STARTUP_NOISE`), and at the first run of some
    graphs (`RUNTIME_NOISE`). Does nothing when the user asked for
    TensorFlow's own lines (TF_CPP_MIN_LOG_LEVEL=0 or 1).
    """
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "").strip() in _VERBOSE_LEVELS:
        yield
        return
    sys.stderr.flush()
    saved_stderr = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved_stderr, 2)
            os.close(saved_stderr)
            captured.seek(0)
            text = captured.read().decode("utf-8", errors="replace")
            kept = [line for line in text.splitlines()
                    if line.strip() and not noise.match(line)]
            if kept:
                sys.stderr.write("\n".join(kept) + "\n")
                sys.stderr.flush()


def startup_lines_to_keep(text):
    """The lines of captured start-up output that are not TensorFlow's
    start-up noise (list of str, in order; blank lines dropped)."""
    return [line for line in text.splitlines()
            if line.strip() and not _STARTUP_NOISE.match(line)]
