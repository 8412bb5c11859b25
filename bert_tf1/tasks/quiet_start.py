"""Start TensorFlow without its start-up noise on stderr.

TensorFlow's C++ start-up lines come before `TF_CPP_MIN_LOG_LEVEL` applies
and bury a script's one-line error: they are captured and every line but the
known noise (`STARTUP_NOISE`) is replayed; nothing is filtered with
`TF_CPP_MIN_LOG_LEVEL` 0 or 1. Keras' scikit-learn wrappers are left
unloaded (`keras_without_sklearn`).
"""
import contextlib
import os
import re
import sys

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
    with tensorflow_noise_filtered(STARTUP_NOISE), keras_without_sklearn():
        import tensorflow as tf
        tf.config.list_physical_devices()
    return tf


@contextlib.contextmanager
def keras_without_sklearn():
    """Hides scikit-learn while TensorFlow and Keras import.

    Keras imports scikit-learn, when installed (the deploy extra's nncf
    brings it), and scipy.stats through it, for its `keras.wrappers`
    estimators, which no script uses: measured here, `import tensorflow,
    keras` took 8.2-10.0 CPU s with scikit-learn installed and 6.5-6.7 s with
    it hidden. Those wrappers then say scikit-learn is missing; an `import
    sklearn` after the block works as usual (nncf's, in the int8 OpenVINO
    export). Nothing is hidden if scikit-learn is already imported.
    """
    hide = "sklearn" not in sys.modules
    if hide:
        sys.modules["sklearn"] = None  # `import sklearn` raises ImportError
    try:
        yield
    finally:
        if hide and "sklearn" in sys.modules and sys.modules["sklearn"] is None:
            del sys.modules["sklearn"]
