"""Whether a model folder's vocab is meant to be lower-cased, kept beside it
in `tokenizer_config.json` (`do_lower_case`, as Hugging Face's folders; other
keys kept on writing), with the `max_seq_length` a training script used.
Google's folders say the casing through their names only.
"""
import json
import os

from bert_tf1.data.io.errors import UserError

#: The record's file name, beside vocab.txt.
RECORD_FILE = "tokenizer_config.json"


def _read(folder):
    """(path, the record as a dict) of `folder` (a model folder, or a file
    in it); (path, None) without one.

    Raises:
        UserError: the record is not a JSON object.
    """
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    path = os.path.join(folder, RECORD_FILE)
    if not os.path.isfile(path):
        return path, None
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (ValueError, UnicodeDecodeError) as error:
        raise UserError(f"{path}: not a JSON file ({error}).") from None
    if not isinstance(record, dict):
        raise UserError(f"{path}: expected a JSON object, got "
                        f"{type(record).__name__}.")
    return path, record


def read_lower_case(folder):
    """The folder's recorded `do_lower_case`.

    Args:
        folder: a model folder, or a file in it.

    Returns:
        bool, or None without a record or key.

    Raises:
        UserError: the record is not a JSON object or its value not a bool.
    """
    path, record = _read(folder)
    value = (record or {}).get("do_lower_case")
    if value is not None and not isinstance(value, bool):
        raise UserError(f"{path}: do_lower_case must be true or false, got "
                        f"{value!r}.")
    return value


def read_max_seq_length(folder):
    """The folder's recorded `max_seq_length` (the training scripts write
    it beside do_lower_case), or None without one.

    Raises:
        UserError: the record is not a JSON object, or the value not a
            positive integer.
    """
    path, record = _read(folder)
    value = (record or {}).get("max_seq_length")
    if value is not None and (not isinstance(value, int) or isinstance(
            value, bool) or value < 1):
        raise UserError(f"{path}: max_seq_length must be a positive integer, "
                        f"got {value!r}.")
    return value


def write_lower_case(folder, do_lower_case, max_seq_length=None):
    """Records `do_lower_case` (and `max_seq_length`, if given) in
    `folder/tokenizer_config.json` (atomically; other keys of an existing
    record are kept).

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
    if max_seq_length is not None:
        record["max_seq_length"] = int(max_seq_length)
    write_text_atomically(path, json.dumps(record, indent=2, sort_keys=True)
                          + "\n")
    return path
