"""The one base class for mistakes a user can fix, and the line-length rule.

It lives at the bottom of the import graph (`data/io`, which every layer may
import) so that the data and model layers can derive their own error classes
from it; `tasks.errors` re-exports it and decides how it is printed.
"""
import contextlib

# An error line is read on a terminal: lists inside it are cut to a few
# items and a count (`cut_list`), so one message stays well under a screen.
LISTED_ITEMS = 5


class UserError(ValueError):
    """A flag, file or config the user supplied is wrong.

    Subclasses `ValueError`, so code that caught the `ValueError`s the checks
    used to raise still catches it. The message names the file, line or
    field, what was found and what was expected; scripts print it as one line.
    Anything that is not a `UserError` is treated as a bug in this project and
    keeps its traceback.
    """


class MissingFileError(UserError, FileNotFoundError):
    """A file or folder the user named does not exist (the message names it).

    Also a `FileNotFoundError`, so callers that caught that still do.
    """


class OutputExistsError(UserError, FileExistsError):
    """An output path already exists; outputs never replace a user's file.

    Also a `FileExistsError`.
    """


class OutputWriteError(UserError):
    """An output could not be written: disk full, quota, read-only, I/O error.

    Not a bug and not bad input, but something the user fixes (free space,
    permissions), so it is printed as one line naming the path and the
    operating system's reason (`data.io.atomic.write_failure`).
    """


def cut_list(items, shown=LISTED_ITEMS, separator=", "):
    """`items` joined, at most `shown` of them, then "... and N more".

    Args:
        items: an iterable of things to name (str() of each is used).
        shown: how many to list before the count.
        separator: between items.

    Returns:
        str, e.g. "a, b, c, ... and 12 more".
    """
    items = [str(item) for item in items]
    if len(items) <= shown:
        return separator.join(items)
    return separator.join(items[:shown]) + f"{separator}... and {len(items) - shown} more"


class FileReadError(UserError):
    """A user's file could not be read or parsed by the library reading it."""


@contextlib.contextmanager
def reading_file(path, what):
    """Re-raises a reader's failure on `path` as `FileReadError` naming it.

    Use around the one call that parses a user's file with a library
    (safetensors, h5py, json, TensorFlow's checkpoint reader): whatever it
    raises there (a `SafetensorError`, an `OSError` from h5py, a
    `JSONDecodeError`) is about that file, and its own message rarely says
    which file it was.

    Args:
        path: the file (or folder) being read.
        what: what it should be, e.g. "safetensors weights file".

    Raises:
        FileReadError: names `path`, `what` and the reader's first line.
        UserError: passed through as it is.
    """
    try:
        yield
    except UserError:
        raise
    except Exception as error:  # noqa: BLE001 (the file's fault, named)
        lines = str(error).strip().splitlines() or [""]
        detail = f"{type(error).__name__}: {lines[0][:300]}".rstrip(": ")
        raise FileReadError(
            f"{path}: cannot read this {what} ({detail}). The file is damaged "
            "or of another format; copy or download it again.") from None
