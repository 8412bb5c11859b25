"""The deployment exports, written once per test session and shared by
test_deploy_formats.py and test_deploy_predict.py."""
import pytest

from bert_tf1.serving.formats import FORMATS
from bert_tf1.tasks.export import write_formats
from tests.serving import deploy_models


@pytest.fixture(scope="session")
def exports(fixtures_dir, tmp_path_factory, request):
    """model name (a model type, or "real_encoder": all-MiniLM-L6-v2) ->
    (the --export_dir holding every format, build arguments), written on
    first use."""
    pytest.importorskip(
        "openvino", reason="--format needs the [deploy] extra (pip install -e '.[deploy]'; run_tests.sh installs it)")
    made = {}

    def export(name):
        if name not in made:
            real = (request.getfixturevalue("real_model_dir")
                    if name == "real_encoder" else None)
            model_type = "encoder" if name == "real_encoder" else name
            arguments = deploy_models.serving_arguments(
                model_type, fixtures_dir, tmp_path_factory, real)
            arguments.setdefault("pooling", "mean")
            folder = tmp_path_factory.mktemp(name) / "export"
            write_formats(str(folder), FORMATS, arguments,
                          arguments.get("label_list"))
            made[name] = folder, arguments
        return made[name]
    return export
