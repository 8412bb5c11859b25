"""Shared pytest fixtures: where `../shared` lives, and a quiet TensorFlow."""
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")  # as the scripts

import pytest  # noqa: E402

# Asserts inside the shared helpers are rewritten like the tests' own.
pytest.register_assert_rewrite("tests.helpers")

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED_DIR = pathlib.Path(
      os.environ.get("BERT_SHARED_DIR", REPO_ROOT.parent / "shared")).resolve()
FIXTURES_DIR = SHARED_DIR / "fixtures"
DATA_DIR = SHARED_DIR / "data"

# The test files that take longest (most seconds first, as measured in a CI
# rehearsal), run before all others. run_tests.sh hands whole files to its
# two processes in collection order (--dist loadfile --no-loadscope-reorder),
# the next file to whichever process is free: a long file started last
# would keep one process busy while the other has nothing left to do.
LONGEST_FIRST = (
    "tests/test_readme.py",
    "tests/tasks/test_real_model_fine_tuning.py",
    "tests/serving/test_deploy_formats.py",
    "tests/scripts/test_init_checkpoint_kinds.py",
    "tests/modeling/training/test_step_logs.py",
    "tests/serving/test_export.py",
    "tests/tasks/test_embeddings_script.py",
    "tests/serving/test_batch_inference.py",
    "tests/test_wheel.py",
    "tests/tasks/test_custom_models.py",
    "tests/modeling/test_model_harness.py",
    "tests/tasks/test_dynamic_padding.py",
    "tests/benchmarks/test_pretraining_data_benchmark.py",
    "tests/modeling/training/test_multi_worker.py",
    "tests/scripts/test_quiet_road.py",
    "tests/modeling/models/test_text_models.py",
    "tests/tasks/test_real_model.py",
    "tests/tasks/test_tagging.py",
    "tests/serving/test_batch_inference_real_model.py",
    "tests/modeling/training/test_training.py",
    "tests/modeling/training/test_preemption.py",
    "tests/serving/test_tagger.py",
    "tests/scripts/test_kill_safety.py",
)


def pytest_collection_modifyitems(items):
    """LONGEST_FIRST's files first, in its order; the others after them in
    collection order (each file's tests keep theirs)."""
    rank = {path: index for index, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0],
                                         len(rank)))


@pytest.fixture(scope="session")
def fixtures_dir():
    return FIXTURES_DIR


@pytest.fixture(scope="session")
def data_dir():
    return DATA_DIR


@pytest.fixture(scope="session")
def repo_root():
    return REPO_ROOT


@pytest.fixture(scope="session")
def real_model_dir():
    """all-MiniLM-L6-v2 fetched into the default cache (once per machine);
    skipped without network, failed when CI=true (tests/helpers/real_model.py)."""
    from tests.helpers.real_model import fetch_or_skip

    return fetch_or_skip()


@pytest.fixture(autouse=True)
def _op_determinism_off_after_each_test():
    """A task run in this process with a seed (`runtime.apply_seed`) turns
    TensorFlow's op determinism on for the whole process, where graph-mode
    random ops then need a seed: each test starts as a fresh process would."""
    yield
    import sys

    if "tensorflow" in sys.modules:
        # TensorFlow exports only the switch on; the switch off is internal.
        from tensorflow.python.framework import config

        if config.is_op_determinism_enabled():
            config.disable_op_determinism()
