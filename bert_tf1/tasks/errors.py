"""The one exception type for mistakes a user can fix (`UserError`, from
`bert_tf1/data/io/errors.py`, the bottom of the import graph: "bad input", not "bug"),
and its one line."""
import re

from bert_tf1.data.io.errors import UserError  # noqa: F401 (the one base, re-exported)


def one_line(error):
    """`error`'s message on one line (newlines become "; "), without a
    KeyError's quotes or a TensorFlow op trace."""
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
