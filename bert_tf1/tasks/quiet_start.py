"""Start TensorFlow without its start-up noise on stderr.

TensorFlow's C++ start-up lines come before `TF_CPP_MIN_LOG_LEVEL` applies
and bury a script's one-line error: they are captured and every line but the
known noise (`STARTUP_NOISE`) is replayed; nothing is filtered with
`TF_CPP_MIN_LOG_LEVEL` 0 or 1. Keras' optional imports no script uses are
left out (`bert_tf1.data.io.lean_import`).
"""
import os
import re
import sys

from bert_tf1.data.io.lean_import import without_unused_keras_imports
from bert_tf1.data.io.stderr_noise import tensorflow_noise_filtered

STARTUP_NOISE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog"
    r"|I\d{4} \d\d:\d\d:\d\d"
    r"|[WE]\d{4} .*(failed call to cuInit"
    r"|Unable to register cu(DNN|FFT|BLAS) factory"
    r"|TF-TRT Warning: Could not find TensorRT"
    r"|computation placer already registered)"
    r"|To enable the following instructions:"
    r"|.*rebuild TensorFlow with the appropriate compiler flags)")

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
    with (tensorflow_noise_filtered(STARTUP_NOISE),
          without_unused_keras_imports()):
        import tensorflow as tf
        tf.config.list_physical_devices()
    return tf
