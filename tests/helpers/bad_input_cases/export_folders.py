"""predict_text.py over an export folder that no longer fits its
export_info.json (bert_tf1/serving/formats/info.py: the sha256 of every
file; bert_tf1/serving/runners.py: one probe call against labels and
max_seq_length)."""
import atexit
import json
import shutil
import tempfile
from pathlib import Path

from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import MRPC

_BUILT = {}


def _numeric_export(folder):
    """A copy, in `folder`, of one numeric export of the MRPC classifier
    (built once per process, removed at exit)."""
    if "export" not in _BUILT:
        from bert_tf1.serving import export_saved_model

        scratch = Path(tempfile.mkdtemp(prefix="bad-input-export-"))
        atexit.register(shutil.rmtree, scratch, True)
        export_saved_model(
            scratch / "export", formats=["numeric"], model_type="classifier",
            init_checkpoint=MRPC, bert_config_file=MRPC / "bert_config.json",
            max_seq_length=32, vocab_file=MRPC / "vocab.txt",
            label_list=["0", "1"])
        _BUILT["export"] = scratch / "export" / "numeric"
    return Path(shutil.copytree(_BUILT["export"], folder / "numeric"))


def _change_info(export, **fields):
    path = export / "export_info.json"
    path.write_text(json.dumps(dict(json.loads(path.read_text()), **fields)))
    return path


@case("predict_text.py")
def predict_export_model_file_cut_short(folder):
    export = _numeric_export(folder)
    data = export / "variables/variables.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:1000])
    return ({"export_dir": export, "text": "hello"},
            [str(data), "differs from the file the export wrote", "cut"])


@case("predict_text.py")
def predict_export_model_file_missing(folder):
    export = _numeric_export(folder)
    (export / "saved_model.pb").unlink()
    return ({"export_dir": export, "text": "hello"},
            [str(export / "saved_model.pb"), "is missing"])


@case("predict_text.py")
def predict_export_info_with_other_labels(folder):
    export = _numeric_export(folder)
    info = _change_info(export, labels=["a", "b", "c"])
    return ({"export_dir": export, "text": "hello"},
            [str(info), "lists 3 labels", "gives 2 scores"])


@case("predict_text.py")
def predict_export_info_with_another_max_seq_length(folder):
    export = _numeric_export(folder)
    info = _change_info(export, max_seq_length=64)
    return ({"export_dir": export, "text": "hello"},
            [str(info), "max_seq_length 64", "export it again"])
