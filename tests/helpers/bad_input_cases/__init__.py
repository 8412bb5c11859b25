"""The table of bad inputs that tests/scripts/test_bad_inputs.py runs.

Each case is a function `build(folder)` registered with `@case(script)`:
it writes its tiny inputs under `folder` (a fresh folder of its own) and
returns (flags, names): the flags `script` is run with, and the strings
its one error line must contain; `@case(script, patch=f)`: `f(monkeypatch)`
first changes the process for the run (a library made absent, an old
rule put back), undone after it. `inputs.py` holds the shared data and
flag sets; every other module holds the cases of one script (or two).

Importing the package fills `CASES`; the modules are imported below in a
fixed order, which is the order of the test ids.
"""
import dataclasses


@dataclasses.dataclass
class BadInput:
    """One bad input: `build(folder)` writes its data, returns (flags, names).

    `names` are the strings the one error line must contain.
    """
    name: str
    script: str
    build: object
    patch: object = None


CASES = []


def case(script, patch=None):
    """Registers the decorated `build(folder)` as a case run by `script`
    (after `patch(monkeypatch)`, if given)."""
    def register(build):
        CASES.append(BadInput(build.__name__, script, build, patch))
        return build
    return register


# After `case`: each module registers its cases with it while it is imported.
from tests.helpers.bad_input_cases import (  # noqa: E402,F401
    classifier, pretraining, squad, ner, extract_features,
    export_and_convert, create_data, heads_export_and_convert, predict,
    multiple_choice, preflight, other_kinds, lora, batch_inference,
    deploy_formats, preflight_numbers, pytorch_folders, export_folders,
    embeddings)
