"""Whether a model folder's vocab is meant to be lower-cased, kept beside it
in `tokenizer_config.json` (`do_lower_case`, as Hugging Face's folders; other
keys kept on writing). Google's folders say it through their names only.
"""
import json
import os

from bert_tf1.data.io.errors import UserError

#: The record's file name, beside vocab.txt.
RECORD_FILE = "tokenizer_config.json"


def read_lower_case(folder):
    """The folder's recorded `do_lower_case`.

    Args:
        folder: a model folder, or a file in it.

    Returns:
        bool, or None without a record or key.

    Raises:
        UserError: the record is not a JSON object or its value not a bool.
    """
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    path = os.path.join(folder, RECORD_FILE)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (ValueError, UnicodeDecodeError) as error:
        raise UserError(f"{path}: not a JSON file ({error}).") from None
    if not isinstance(record, dict):
        raise UserError(f"{path}: expected a JSON object, got "
                        f"{type(record).__name__}.")
    value = record.get("do_lower_case")
    if value is not None and not isinstance(value, bool):
        raise UserError(f"{path}: do_lower_case must be true or false, got "
                        f"{value!r}.")
    return value


def write_lower_case(folder, do_lower_case):
    """Records `do_lower_case` in `folder/tokenizer_config.json` (atomically;
    other keys of an existing record are kept).

    Returns:
        str, the record's path.
    """
    from bert_tf1.data.io.atomic import write_text_atomically

    path = os.path.join(os.fspath(folder), RECORD_FILE)
    record = {}
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            loaded = json.load(f)
        if isinstance(loaded, dict):
            record = loaded
    record["do_lower_case"] = bool(do_lower_case)
    write_text_atomically(path, json.dumps(record, indent=2, sort_keys=True)
                          + "\n")
    return path
