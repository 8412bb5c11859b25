"""Bad inputs of export_saved_model.py, convert_checkpoint.py and
fetch_pretrained.py.

The later cases of both scripts (the tagger and multiple-choice heads)
are in heads_export_and_convert.py.
"""
import json

from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (
    MRPC, _config, _convert, _export, _write)


# -- export_saved_model.py ----------------------------------------------------

@case("export_saved_model.py")
def export_config_does_not_fit_checkpoint(folder):
    config = _config(folder, MRPC, hidden_size=64, intermediate_size=128)
    return (_export(folder, bert_config_file=config),
            [str(config), "does not fit", "mismatch", "more"])


@case("export_saved_model.py")
def export_dir_exists(folder):
    (folder / "export").mkdir()
    return _export(folder), [str(folder / "export"), "already exists"]


@case("export_saved_model.py")
def export_classifier_without_labels(folder):
    return (_export(folder, task_name=None),
            ["--task_name", "--label_list", "--num_labels"])


# -- convert_checkpoint.py ----------------------------------------------------

@case("convert_checkpoint.py")
def convert_output_path_exists(folder):
    (folder / "hf").mkdir()
    return _convert(folder), [str(folder / "hf"), "already exists"]


@case("convert_checkpoint.py")
def convert_damaged_safetensors_file(folder):
    hf = folder / "from_hub"
    _write(hf / "config.json", json.dumps({
        "model_type": "bert", "vocab_size": 30522, "hidden_size": 32,
        "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 64, "max_position_embeddings": 512,
        "type_vocab_size": 2}))
    weights = _write(hf / "model.safetensors", b"\x08\x00\x00\x00not a header")
    return (_convert(folder, input_format="huggingface", input_path=hf,
                     output_format="tf1", output_path=folder / "tf1"),
            [str(weights), "safetensors"])


@case("convert_checkpoint.py")
def convert_missing_input(folder):
    missing = folder / "nowhere"
    return _convert(folder, input_path=missing), [str(missing)]


# -- fetch_pretrained.py ------------------------------------------------------

@case("fetch_pretrained.py")
def fetch_output_dir_holds_something_else(folder):
    (folder / "model").mkdir()
    _write(folder / "model" / "notes.txt", "mine")
    return ({"model": "all-MiniLM-L6-v2", "output_dir": folder / "model"},
            [str(folder / "model"), "not a complete model folder"])
