"""Bad inputs of run_ner.py: CoNLL files and their tags."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import NER_TRAIN, _ner


@case("run_ner.py")
def ner_line_with_another_column_count(folder):
    flags = _ner(folder, train=NER_TRAIN + "New York\tB-location\tx\n\n")
    return flags, [str(flags["train_file"]), "line 10", "3 columns"]


@case("run_ner.py")
def ner_tag_outside_the_scheme(folder):
    flags = _ner(folder, train=NER_TRAIN + "Rome\tX-location\n\n")
    return flags, [str(flags["train_file"]), "line 10", "X-location"]


@case("run_ner.py")
def ner_missing_eval_file(folder):
    # Found before training.
    dev = folder / "dev.conll"
    return _ner(folder, do_eval=True, eval_file=dev), [str(dev)]
