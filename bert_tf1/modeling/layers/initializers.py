"""Weight initialisation as the original: truncated normal, zero biases."""
import keras


def create_initializer(initializer_range=0.02):
    """Truncated normal with stddev `initializer_range`, re-drawn beyond 2 stddev.

    Source: `create_initializer` in the original `modeling.py`
    (`tf.truncated_normal_initializer`), which has the same 2-sigma cut-off.
    """
    return keras.initializers.TruncatedNormal(stddev=initializer_range)
