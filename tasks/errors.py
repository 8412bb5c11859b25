"""The one exception type for mistakes a user can fix, and how it is printed.

Scripts print a user error as one line (what, where, what was expected) and
exit with status 1; any other exception is a bug and keeps its traceback.
`UserError` itself lives in `data/io/errors.py`, the bottom of the import
graph, so every layer can derive its errors from it.
"""
import re

from data.io.errors import UserError  # noqa: F401 (the one base, re-exported)


def user_error_types():
    """Exception classes that mean "bad input", not "bug": `UserError` only.

    Every check for bad input raises a `UserError` subclass (they are
    `ValueError`s; a few are also `FileNotFoundError`, `KeyError`, ...), and
    TensorFlow or OS errors are translated into one where the file is known.
    Anything else reaching a script is a bug in this project and keeps its
    traceback (`tasks.cli.mark_as_bug`).
    """
    return (UserError,)


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
