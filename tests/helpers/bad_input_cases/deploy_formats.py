"""Bad inputs of export_saved_model.py --format (tasks/export_formats.py)."""
from tests.helpers.bad_input_cases import case
from tests.helpers.bad_input_cases.inputs import _export


@case("export_saved_model.py")
def export_unknown_format(folder):
    return (_export(folder, format="numeric,tensorrt"),
            ["--format=tensorrt", "saved_model", "litert"])


@case("export_saved_model.py")
def export_serving_version_without_a_saved_model(folder):
    return (_export(folder, format="onnx", serving_version=2),
            ["--serving_version", "saved_model or numeric"])
