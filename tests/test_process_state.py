"""Using the library from Python changes nothing in the process.

Importing `modeling`, `data`, `serving` or `tasks`, and running a task from
Python (`Task.run()`, which trains through `bert_tf1.modeling.training.run_training`),
sets no environment variable, adds no handler to the root or `tensorflow`
logger (nor stops the latter propagating), changes no logger level and
registers no `atexit` function. The scripts' start (`bert_tf1/tasks/cli.py`,
`bert_tf1/tasks/quiet_start.py`) is where a command line's settings are made.

Each check runs in a fresh interpreter started without the variables the
scripts and `tests/conftest.py` set (TF_CPP_MIN_LOG_LEVEL, KERAS_BACKEND,
TF_ENABLE_ONEDNN_OPTS), with TensorFlow, Keras, keras-hub and TF Text
imported before the snapshot (their own start-up is not ours to judge).
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO_ROOT

SCRIPT_VARIABLES = ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BACKEND", "TF_ENABLE_ONEDNN_OPTS")

# Prints, as JSON, what changed in the process while {action} ran.
PROBE = textwrap.dedent("""
    import os, sys, atexit, json, logging, tensorflow, keras, keras_hub, tensorflow_text
    from absl import logging as absl_logging

    # atexit functions registered from the project's files. TensorFlow's own
    # (autograph registers one per converted function's temporary source)
    # are not ours, but they change atexit._ncallbacks().
    project_exits = []
    _register = atexit.register

    def _recording_register(function, *args, **kwargs):
        caller = os.path.abspath(sys._getframe(1).f_code.co_filename)
        if caller.startswith({repo!r} + os.sep) and "site-packages" not in caller:
            project_exits.append(caller + ": " + getattr(function, "__qualname__", "?"))
        return _register(function, *args, **kwargs)

    atexit.register = _recording_register

    def state():
        tf_logger = logging.getLogger("tensorflow")
        return dict(env=dict(os.environ), atexit=atexit._ncallbacks(),
                    root=list(logging.getLogger().handlers),
                    root_level=logging.getLogger().level,
                    tf=list(tf_logger.handlers), tf_propagate=tf_logger.propagate,
                    absl_level=absl_logging.get_absl_logger().level)

    def absl_basic_config(handlers):
        # absl.logging.log() calls logging.basicConfig() itself when the root
        # logger has no handler (as logging.info() does), whoever logs: that
        # one plain stderr handler is absl's doing, not the library's.
        return (len(handlers) == 1 and type(handlers[0]) is logging.StreamHandler
                and handlers[0].formatter._fmt == logging.BASIC_FORMAT)

    before = state()
    {action}
    after = state()
    changes = {{}}
    env_changed = sorted(k for k in set(before["env"]) | set(after["env"])
                         if before["env"].get(k) != after["env"].get(k))
    if env_changed:
        changes["environment variables"] = env_changed
    if project_exits:
        changes["atexit"] = project_exits
    if after["atexit"] != before["atexit"]:
        changes["atexit callbacks"] = [before["atexit"], after["atexit"]]
    if after["root"] != before["root"] and not (
            not before["root"] and absl_basic_config(after["root"])):
        changes["root handlers"] = [repr(h) for h in after["root"]]
    for key in ("root_level", "tf", "tf_propagate", "absl_level"):
        if after[key] != before[key]:
            changes[key] = [repr(before[key]), repr(after[key])]
    print("CHANGES=" + json.dumps(changes))
""")

IMPORTS = ("import bert_tf1, bert_tf1.modeling, bert_tf1.data, bert_tf1.serving, "
           "bert_tf1.tasks\n")

TASK_RUN = """\
from bert_tf1.tasks.classification import ClassificationConfig, ClassificationTask
fixture = {fixture!r}
results = ClassificationTask(ClassificationConfig(
    task_name="MRPC", data_dir={data!r}, vocab_file=fixture + "/vocab.txt",
    bert_config_file=fixture + "/bert_config.json",
    init_checkpoint=fixture + "/bert_model.ckpt", output_dir={out!r},
    max_seq_length=32, do_train=True, do_eval=True, train_batch_size=8,
    eval_batch_size=8, num_train_epochs=1.0)).run()
assert results["train"]["global_step"] == 2, results
"""


def changes_while(action, tmp_path):
    """What `action` (Python source) changed in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k not in SCRIPT_VARIABLES}
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(action=action, repo=str(REPO_ROOT))], cwd=REPO_ROOT,
        env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    line = next(line for line in result.stdout.splitlines()
                if line.startswith("CHANGES="))
    return json.loads(line[len("CHANGES="):])


def test_importing_the_packages_changes_nothing(tmp_path):
    assert changes_while(IMPORTS, tmp_path) == {}


def _mrpc_slice(folder, data_dir):
    """train.tsv (16 rows: 2 steps of 8) and dev.tsv (8 rows) of GLUE MRPC."""
    folder.mkdir()
    for name, rows in (("train.tsv", 16), ("dev.tsv", 8)):
        lines = (data_dir / "glue/MRPC" / name).read_text(
            encoding="utf-8").splitlines(keepends=True)
        (folder / name).write_text("".join(lines[:rows + 1]), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def task_run_changes(tmp_path_factory, fixtures_dir, data_dir):
    tmp_path = tmp_path_factory.mktemp("task_run")
    action = TASK_RUN.format(
        fixture=str(fixtures_dir / "tf1_vocab_mrpc_classifier"),
        data=str(_mrpc_slice(tmp_path / "mrpc", data_dir)),
        out=str(tmp_path / "out"))
    return changes_while(action, tmp_path)


@pytest.mark.slow  # trains 2 steps and evaluates in a fresh process: ~30 s
def test_task_run_sets_no_variable_and_configures_no_logging(task_run_changes):
    changes = {k: v for k, v in task_run_changes.items()
               if k not in ("atexit", "atexit callbacks")}
    assert changes == {}


@pytest.mark.slow
def test_task_run_registers_no_atexit(task_run_changes):
    # Fails while bert_tf1/data/io/output_lock.py registers its release at import.
    assert "atexit" not in task_run_changes, task_run_changes


def test_another_keras_backend_is_one_clear_error():
    # Keras fixes its backend when first imported; here it is made to say
    # "jax" after the fact (this venv has no other backend installed).
    code = textwrap.dedent("""
        import keras
        keras.backend.backend = lambda: "jax"
        try:
            import bert_tf1.modeling
        except ImportError as error:
            print("ERROR=" + str(error))
    """)
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    message = next(line for line in result.stdout.splitlines()
                   if line.startswith("ERROR="))
    assert "'jax'" in message and "KERAS_BACKEND=tensorflow" in message
