"""The one base class for mistakes a user can fix.

It lives at the bottom of the import graph (`data/io`, which every layer may
import) so that the data and model layers can derive their own error classes
from it; `tasks.errors` re-exports it and decides how it is printed.
"""


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
