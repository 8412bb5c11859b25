"""Start TensorFlow without its start-up noise on stderr.

TensorFlow's C++ start-up lines come before `TF_CPP_MIN_LOG_LEVEL` applies
and bury a script's one-line error: they are captured and every line but the
known noise (`_STARTUP_NOISE`) is replayed; nothing is filtered with
`TF_CPP_MIN_LOG_LEVEL` 0 or 1.
"""
import contextlib
import os
import re
import sys
import tempfile

_STARTUP_NOISE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog"
    r"|I\d{4} \d\d:\d\d:\d\d"
    r"|[WE]\d{4} .*(failed call to cuInit"
    r"|Unable to register cu(DNN|FFT|BLAS) factory"
    r"|TF-TRT Warning: Could not find TensorRT"
    r"|computation placer already registered)"
    r"|To enable the following instructions:"
    r"|.*rebuild TensorFlow with the appropriate compiler flags)")

# An "E" line at the first run of some graphs on CPUs without AVX-512 with
# oneDNN on, although nothing failed.
RUNTIME_NOISE = re.compile(
    r"^E\d{4} .*oneDNN supports DT_\w+ only on platforms with AVX-512")


def start_tensorflow():
    """Sets `TF_CPP_MIN_LOG_LEVEL=2`, `KERAS_BACKEND=tensorflow` and
    `TF_ENABLE_ONEDNN_OPTS=1` unless set, then imports and returns
    TensorFlow and lists the devices quietly (before any other import)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    # oneDNN kernels on every x86 CPU, not only with AVX-512 (measured
    # faster; TF_ENABLE_ONEDNN_OPTS=0 keeps TF's default).
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    if "tensorflow" in sys.modules:
        import tensorflow as tf
        return tf
    with tensorflow_noise_filtered(_STARTUP_NOISE):
        import tensorflow as tf
        tf.config.list_physical_devices()
    return tf


@contextlib.contextmanager
def tensorflow_noise_filtered(noise=RUNTIME_NOISE):
    """Runs the block with file descriptor 2 captured, then replays on
    stderr every captured line that `noise` does not match (nothing is
    captured with TF_CPP_MIN_LOG_LEVEL=0 or 1)."""
    if os.environ.get("TF_CPP_MIN_LOG_LEVEL", "").strip() in ("0", "1"):
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
            kept = startup_lines_to_keep(text, noise)
            if kept:
                sys.stderr.write("\n".join(kept) + "\n")
                sys.stderr.flush()


def startup_lines_to_keep(text, noise=_STARTUP_NOISE):
    """The non-blank lines of captured output that `noise` does not match
    (list of str, in order)."""
    return [line for line in text.splitlines()
            if line.strip() and not noise.match(line)]
