"""The one exception type for mistakes a user can fix, and how it is printed.

Scripts print a user error as one line (what, where, what was expected) and
exit with status 1; any other exception is a bug and keeps its traceback.
"""
import re

from data.io.errors import UserError  # noqa: F401 (the one base, re-exported)


def user_error_types():
    """Exception classes that mean "bad input", not "bug".

    The data and model layers raise their own classes (a bad config, a
    checkpoint that does not fit, a token missing from the vocab, a malformed
    GLUE/SQuAD file, a missing file); all are `ValueError`, `OSError` or
    `KeyError` subclasses named here. TensorFlow's own input errors (a
    truncated record file, a record of another shape) are included as well.
    """
    import tensorflow as tf

    from data.tokenization.full_tokenizer import VocabLookupError

    return (ValueError, OSError, VocabLookupError, UnicodeError,
            tf.errors.NotFoundError, tf.errors.DataLossError,
            tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError,
            tf.errors.PermissionDeniedError, tf.errors.FailedPreconditionError)


def one_line(error):
    """`error`'s message on a single line (newlines become "; ").

    A `KeyError`'s repr quotes are dropped; TensorFlow op errors keep only
    their message, not the op trace.
    """
    message = getattr(error, "message", None)
    if not isinstance(message, str) or not message:
        message = str(error)
    if isinstance(error, KeyError) and message.startswith(("'", '"')):
        message = message[1:-1]
    # TF op errors append "\n\t [[{{node ...}}]]" and graph traces.
    message = message.split("\n\t [[", 1)[0]
    lines = [line.strip() for line in message.splitlines()]
    message = "; ".join(line for line in lines if line)
    message = re.sub(r"\s+", " ", message)
    return message or type(error).__name__
