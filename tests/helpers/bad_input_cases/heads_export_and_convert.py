"""Bad inputs of export_saved_model.py and convert_checkpoint.py, part two.

The tagger and multiple-choice heads, label lists and Hugging Face
folders. They were added to the table after create_pretraining_data.py's
cases, and the package keeps CASES (so the test ids) in the order they
have always been collected in, hence a module apart from
export_and_convert.py.
"""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import MRPC, _export, _write


# -- export_saved_model.py: the tagger and multiple-choice heads ----------------

@case("export_saved_model.py")
def export_tagger_without_its_tags(folder):
    # No label_list.txt beside the checkpoint and no --label_list_file.
    return (_export(folder, model_type="tagger", task_name=None),
            [str(MRPC), "label_list.txt", "--label_list_file"])


@case("export_saved_model.py")
def export_tagger_from_a_classifier_checkpoint(folder):
    labels = _write(folder / "labels.txt", "O\nB-PER\nI-PER\n")
    return (_export(folder, model_type="tagger", task_name=None,
                    label_list_file=labels),
            ["cls/tagging/output_weights", "run_ner.py"])


@case("export_saved_model.py")
def export_multiple_choice_from_a_classifier_checkpoint(folder):
    return (_export(folder, model_type="multiple_choice", task_name=None),
            ["cls/multiple_choice/output_weights"])


@case("export_saved_model.py")
def export_tagger_label_list_with_a_blank_line(folder):
    labels = _write(folder / "labels.txt", "O\n\nB-PER\n")
    return (_export(folder, model_type="tagger", task_name=None,
                    label_list_file=labels),
            [str(labels), "line 2"])


@case("export_saved_model.py")
def export_tagger_label_without_a_scheme(folder):
    return (_export(folder, model_type="tagger", task_name=None,
                    label_list="O,PERSON"),
            ["'PERSON'", "<prefix>-<type>"])


# -- convert_checkpoint.py ----------------------------------------------------

@case("convert_checkpoint.py")
def convert_missing_label_list_file(folder):
    labels = folder / "no_labels.txt"
    return ({"input_format": "tf1", "input_path": MRPC,
             "output_format": "huggingface", "output_path": folder / "hf",
             "label_list_file": labels}, [str(labels)])


@case("convert_checkpoint.py")
def convert_huggingface_folder_without_config(folder):
    (folder / "hf").mkdir()
    return ({"input_format": "huggingface", "input_path": folder / "hf",
             "output_format": "tf1", "output_path": folder / "tf1"},
            [str(folder / "hf"), "config.json"])
