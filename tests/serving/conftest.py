"""The deployment exports, written once per test run and shared by
test_deploy_formats.py, test_deploy_predict.py and test_embedder_export.py:
each model is built in memory (loaded from its checkpoint) and written to
every format by `bert_tf1.export_model`, the one road out. The `encoder`
is a `SentenceEmbedder` (the fixture's encoder, mean pooling, L2
normalised: what run_embeddings.py trains), exported with its own pooling;
`real_encoder` a plain `BertModel` (all-MiniLM-L6-v2) mean-pooled.

Under pytest-xdist (run_tests.sh: --dist loadfile) the files often run in
different worker processes; the first worker to need a model's export writes
it into the run's shared temporary folder (under a file lock) and the others
read that folder: the models are built from the same checkpoint files
(deterministic heads: tests/helpers/task_checkpoints.py), so every worker's
in-memory model holds the same weights the export was written from."""
import os

import filelock
import pytest

from bert_tf1.modeling.models import SentenceEmbedder
from bert_tf1.serving import export_model, load_served_model
from bert_tf1.serving.formats import FORMATS
from tests.serving import deploy_models

#: The fixture embedder's pooling (the `encoder` export's).
EMBEDDER_POOLING = {"pooling": "mean", "l2_normalize": True}
#: Written beside an export once every format of it is there.
_DONE = "export.done"


def _run_folder(tmp_path_factory):
    """The temporary folder all of this run's workers share (pytest's own
    base folder without xdist)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def exports(fixtures_dir, tmp_path_factory, request):
    """model name (a model type, or "real_encoder": all-MiniLM-L6-v2) ->
    (the export_dir holding every format, build arguments), written on
    first use in this run; `exports.models[name]` is (this process's
    in-memory model, its preprocessor): for "encoder" a `SentenceEmbedder`
    (module docstring)."""
    pytest.importorskip(
        "openvino", reason="--format needs the [deploy] extra (pip install -e '.[deploy]'; run_tests.sh installs it)")
    made = {}
    shared = _run_folder(tmp_path_factory)

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
            home = shared / f"deploy-export-{name}"
            folder = home / "export"
            with filelock.FileLock(str(shared / f"deploy-export-{name}.lock")):
                if not (home / _DONE).exists():
                    home.mkdir(exist_ok=True)
                    export_model(model, str(folder), arguments.get("label_list"),
                                 formats=FORMATS, preprocessor=preprocessor,
                                 model_type=model_type, **rules)
                    (home / _DONE).write_text("")
            made[name] = folder, arguments
            export.models[name] = model, preprocessor
        return made[name]
    export.models = {}
    return export
