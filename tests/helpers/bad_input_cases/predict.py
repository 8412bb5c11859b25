"""Bad inputs of predict_text.py."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import _predict, _write


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
