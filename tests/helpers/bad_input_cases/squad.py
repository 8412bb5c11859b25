"""Bad inputs of run_squad.py."""
import json
import os
import zipfile

from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import SQUAD_V1, _squad, _write


@case("run_squad.py")
def squad_zipped_predict_file(folder):
    zipped = folder / "dev-v1.1.json"
    with zipfile.ZipFile(folder / "dev.zip", "w") as archive:
        archive.writestr("dev-v1.1.json", json.dumps(SQUAD_V1))
    os.replace(folder / "dev.zip", zipped)
    return _squad(folder, predict_file=zipped), [str(zipped)]


@case("run_squad.py")
def squad_doc_stride_below_1(folder):
    return _squad(folder, doc_stride=0), ["doc_stride", "0"]


@case("run_squad.py")
def squad_predict_file_without_data_field(folder):
    path = _write(folder / "bad.json", json.dumps({"version": "1.1"}))
    return _squad(folder, predict_file=path), [str(path), "data"]
