"""The deployment exports, written once per test session and shared by
test_deploy_formats.py, test_deploy_predict.py and test_embedder_export.py:
each model is built in memory (loaded from its checkpoint) and written to
every format by `bert_tf1.export_model`, the one road out. The `encoder`
is a `SentenceEmbedder` (the fixture's encoder, mean pooling, L2
normalised: what run_embeddings.py trains), exported with its own pooling;
`real_encoder` a plain `BertModel` (all-MiniLM-L6-v2) mean-pooled."""
import pytest

from bert_tf1.modeling.models import SentenceEmbedder
from bert_tf1.serving import export_model, load_served_model
from bert_tf1.serving.formats import FORMATS
from tests.serving import deploy_models

#: The fixture embedder's pooling (the `encoder` export's).
EMBEDDER_POOLING = {"pooling": "mean", "l2_normalize": True}


@pytest.fixture(scope="session")
def exports(fixtures_dir, tmp_path_factory, request):
    """model name (a model type, or "real_encoder": all-MiniLM-L6-v2) ->
    (the export_dir holding every format, build arguments), written on
    first use; `exports.models[name]` is (the in-memory model, its
    preprocessor): for "encoder" a `SentenceEmbedder` (module docstring)."""
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
            model, preprocessor = load_served_model(**arguments)
            rules = {key: value for key, value in arguments.items()
                     if key in ("pooling", "doc_stride")}
            if name == "encoder":   # served with its own pooling
                arguments.update(EMBEDDER_POOLING)
                model = SentenceEmbedder(encoder=model,
                                         preprocessor=preprocessor,
                                         **EMBEDDER_POOLING)
                rules = {}
            folder = tmp_path_factory.mktemp(name) / "export"
            export_model(model, str(folder), arguments.get("label_list"),
                         formats=FORMATS, preprocessor=preprocessor,
                         model_type=model_type, **rules)
            made[name] = folder, arguments
            export.models[name] = model, preprocessor
        return made[name]
    export.models = {}
    return export
