"""A Hugging Face folder in PyTorch's format (config.json and
pytorch_model.bin, no safetensors) given as --init_checkpoint: every
script says to save it as safetensors first, not to supply TF1 files."""
import json

from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import (MRPC, MRPC_HEADER,
                                                  MRPC_ROWS, _classifier,
                                                  _export, _extract,
                                                  _mrpc_data, _predict,
                                                  _write)

SAFETENSORS_FIRST = "must first be saved as safetensors"


def _pytorch_folder(folder):
    """config.json of a BertModel and a pytorch_model.bin (never read)."""
    config = json.loads((MRPC / "bert_config.json").read_text())
    hf = folder / "hf_pytorch"
    _write(hf / "config.json", json.dumps(dict(
        config, model_type="bert", architectures=["BertModel"])))
    _write(hf / "pytorch_model.bin", b"PK\x03\x04 not read")
    return hf


@case("predict_text.py")
def predict_pytorch_folder(folder):
    hf = _pytorch_folder(folder)
    return (_predict(folder, init_checkpoint=hf, bert_config_file=None,
                     vocab_file=None, text="hello"),
            [str(hf), "pytorch_model.bin", SAFETENSORS_FIRST])


@case("export_saved_model.py")
def export_pytorch_folder(folder):
    hf = _pytorch_folder(folder)
    return (_export(folder, init_checkpoint=hf, bert_config_file=None,
                    vocab_file=None),
            [str(hf), "pytorch_model.bin", SAFETENSORS_FIRST])


@case("run_classifier.py")
def classifier_pytorch_folder(folder):
    hf = _pytorch_folder(folder)
    data = _mrpc_data(folder, train=MRPC_HEADER + MRPC_ROWS)
    return (_classifier(folder, data, do_train=True, init_checkpoint=hf),
            [str(hf), "pytorch_model.bin", SAFETENSORS_FIRST])


@case("extract_features.py")
def extract_pytorch_folder(folder):
    hf = _pytorch_folder(folder)
    return (_extract(folder, init_checkpoint=hf),
            [str(hf), "pytorch_model.bin", SAFETENSORS_FIRST])
