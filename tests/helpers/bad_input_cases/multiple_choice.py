"""Bad inputs of run_multiple_choice.py: SWAG, HellaSwag and TSV files."""
import json

from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (
    HELLASWAG_ROW, SWAG_HEADER, SWAG_ROWS, _multiple_choice, _write)


@case("run_multiple_choice.py")
def multiple_choice_row_with_three_endings(folder):
    rows = [HELLASWAG_ROW, dict(HELLASWAG_ROW, endings=["a.", "b.", "c."])]
    path = _write(folder / "train.jsonl",
                  "".join(json.dumps(row) + "\n" for row in rows))
    return (_multiple_choice(folder, data_format="hellaswag", do_train=True,
                             train_file=path),
            [str(path), "line 2", "found 3 endings", "num_choices=4"])


@case("run_multiple_choice.py")
def multiple_choice_label_out_of_range(folder):
    path = _write(folder / "train.csv", SWAG_HEADER + SWAG_ROWS
                  + "It rained.,It,poured.,shone.,froze.,fell.,4\n")
    return (_multiple_choice(folder, data_format="swag", do_train=True,
                             train_file=path),
            [str(path), "line 4", "label 4 is outside 0..3"])


@case("run_multiple_choice.py")
def multiple_choice_missing_eval_file(folder):
    # Found before training.
    train = _write(folder / "train.csv", SWAG_HEADER + SWAG_ROWS)
    missing = folder / "val.csv"
    return (_multiple_choice(folder, data_format="swag", do_train=True,
                             train_file=train, do_eval=True,
                             eval_file=missing),
            [str(missing), "--eval_file"])


@case("run_multiple_choice.py")
def multiple_choice_header_with_other_num_choices(folder):
    path = _write(folder / "dev.tsv", "context\tending0\tending1\tending2"
                  "\tlabel\nThe cat sat.\tIt purred.\tIt flew.\tIt swam.\t0\n")
    return (_multiple_choice(folder, data_format="tsv", do_eval=True,
                             eval_file=path),
            [str(path), "line 1", "found 3 ending columns",
             "num_choices=4"])


@case("run_multiple_choice.py")
def multiple_choice_eval_file_without_labels(folder):
    path = _write(folder / "test.csv", SWAG_HEADER.replace(",label", "")
                  + "The cat sat.,It,purred.,barked.,flew.,swam.\n")
    return (_multiple_choice(folder, data_format="swag", do_eval=True,
                             eval_file=path),
            [str(path), "no labels", "--do_eval"])


@case("run_multiple_choice.py")
def multiple_choice_unknown_data_format(folder):
    path = _write(folder / "train.csv", SWAG_HEADER + SWAG_ROWS)
    return (_multiple_choice(folder, data_format="csv", do_train=True,
                             train_file=path),
            ["data_format", "csv"])
