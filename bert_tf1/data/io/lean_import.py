"""Importing TensorFlow without the optional packages Keras would pull in.

`import tensorflow` imports Keras (for `tf.keras`), and Keras imports, when
they are installed, scikit-learn and scipy.stats (for the estimators of
`keras.wrappers`) and matplotlib.pyplot (for `keras.visualization`): no
script and no worker of ours uses either. The deploy extra's nncf brings
scikit-learn, the plots extra matplotlib. Measured on a 2-core AMD EPYC (Zen
3), TensorFlow 2.21: `import tensorflow, keras` took 10.7-11.2 CPU s with
both installed, 9.0-9.4 s with scikit-learn hidden and 7.5-7.6 s with both
hidden.
"""
import contextlib
import sys

UNUSED_BY_OUR_PROCESSES = ("sklearn", "matplotlib")


@contextlib.contextmanager
def without_unused_keras_imports():
    """Hides scikit-learn and matplotlib while the block runs (meant to
    import TensorFlow and Keras in a script or a worker).

    Keras' wrappers and visualization then say their package is missing;
    after the block both import as usual (our training_curves.png needs
    matplotlib, nncf's int8 OpenVINO export scikit-learn). A package already
    imported is left as it is.
    """
    hidden = [name for name in UNUSED_BY_OUR_PROCESSES
              if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # `import name` raises ImportError
    try:
        yield
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
