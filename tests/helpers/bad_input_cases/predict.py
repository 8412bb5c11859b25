"""Bad inputs of predict_text.py."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (MRPC_HEADER, MRPC_ROWS,
                                                  _predict, _write)


@case("predict_text.py")
def predict_line_with_three_fields(folder):
    path = _write(folder / "in.txt", "a\tb\nc\td\te\n")
    return _predict(folder, input_file=path), [str(path), "line 2",
                                               "1 or 2"]


@case("predict_text.py")
def predict_non_utf8_input_file(folder):
    path = _write(folder / "in.txt", "fine\nCaf\xe9\n".encode("latin-1"))
    return _predict(folder, input_file=path), [str(path), "line 2", "UTF-8"]


@case("predict_text.py")
def predict_export_dir_without_a_saved_model(folder):
    (folder / "export").mkdir()
    return ({"export_dir": folder / "export", "text": "hello"},
            ["is not an export of export_saved_model.py", "export_info.json",
             str(folder / "export")])


@case("predict_text.py")
def predict_tagger_checkpoint_without_its_tags(folder):
    return (_predict(folder, model_type="tagger", task_name=None,
                     text="John lives here"),
            ["label_list.txt", "--label_list_file"])


@case("predict_text.py")
def predict_checkpoint_without_model_type(folder):
    return _predict(folder, model_type=None, text="x"), ["--model_type"]


@case("predict_text.py")
def predict_glue_dev_tsv_with_its_header(folder):
    # SST-2's two columns would pass as text_a<TAB>text_b: the label leaks.
    path = _write(folder / "dev.tsv", "sentence\tlabel\nit is fine .\t1\n")
    return _predict(folder, input_file=path), [str(path), "line 1",
                                               "GLUE SST-2", "header"]


@case("predict_text.py")
def predict_mrpc_dev_tsv(folder):
    path = _write(folder / "dev.tsv", MRPC_HEADER + MRPC_ROWS)
    return _predict(folder, input_file=path), [str(path), "line 1",
                                               "GLUE MRPC",
                                               "--task_name=MRPC"]


@case("predict_text.py")
def predict_qnli_header_given_to_squad(folder):
    # Four columns are refused anyway; the header says what the file is.
    path = _write(folder / "dev.tsv",
                  "index\tquestion\tsentence\tlabel\n0\tq\ts\tentailment\n")
    return (_predict(folder, input_file=path, model_type="squad",
                     task_name=None),
            [str(path), "line 1", "GLUE QNLI"])
