"""The base class for mistakes a user can fix, and the line-length rule.

At the bottom of the import graph so every layer can derive its errors from
it; `bert_tf1.tasks.errors` re-exports it and decides how it is printed.
"""
import contextlib

# Lists in an error line are cut to this many items and a count.
LISTED_ITEMS = 5


class UserError(ValueError):
    """A flag, file or config the user supplied is wrong (a ValueError).

    The message names the file, line or field, what was found and what was
    expected; scripts print it as one line. Any other error is a bug and
    keeps its traceback.
    """


class MissingFileError(UserError, FileNotFoundError):
    """A file or folder the user named does not exist (a FileNotFoundError)."""


class OutputExistsError(UserError, FileExistsError):
    """An output path already exists (a FileExistsError)."""


class OutputWriteError(UserError):
    """An output could not be written: disk full, quota, read-only, I/O
    error (one line naming the path and reason; atomic.write_failure)."""


def cut_list(items, shown=LISTED_ITEMS, separator=", "):
    """`items` joined, at most `shown` of them, then "... and N more".

    E.g. "a, b, c, ... and 12 more" (str() of each item).
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
    (safetensors, h5py, json, TF's checkpoint reader); `what` is what the
    file should be, e.g. "safetensors weights file".

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
