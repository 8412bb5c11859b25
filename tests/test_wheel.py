"""The wheel: one import name (`bert_tf1`), a command per script, and no
collision with a user's own packages named data, tasks, modeling or serving.

The wheel is built from a copy of the repository and installed (not
editable) into a fresh virtualenv that borrows this one's dependencies
(TensorFlow is not installed twice), then run from a folder whose own
packages of those names refuse to be imported.
"""
import ast
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from tests.conftest import FIXTURES_DIR, DATA_DIR, REPO_ROOT
from tests.helpers.script_runner import run_script_argv

FOLDERS = ("bert_tf1",)
USER_PACKAGES = ("data", "tasks", "modeling", "serving")
# docs/classification.md's quick MRPC command, with a seed; --data_dir is
# added per run (a subset of the MRPC folder: `_mrpc_subset`).
MRPC_FLAGS = [
    "--task_name=MRPC", "--do_train=true", "--do_eval=true",
    f"--vocab_file={FIXTURES_DIR}/tf1_vocab_mrpc_classifier/vocab.txt",
    f"--bert_config_file={FIXTURES_DIR}/tf1_vocab_mrpc_classifier/bert_config.json",
    f"--init_checkpoint={FIXTURES_DIR}/tf1_vocab_mrpc_classifier/bert_model.ckpt",
    "--max_seq_length=64", "--train_batch_size=32", "--learning_rate=2e-5",
    "--num_train_epochs=0.1", "--seed=1"]


def root_scripts():
    return sorted(path.stem for path in REPO_ROOT.glob("*.py")
                  if path.name != "setup.py")


def _setup_scripts():
    """setup.py's SCRIPTS, read from the file (running it would build)."""
    tree = ast.parse((REPO_ROOT / "setup.py").read_text(encoding="utf-8"))
    (value,) = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and [target.id for target in node.targets] == ["SCRIPTS"]]
    return ast.literal_eval(value)


def test_every_root_script_is_a_shim_with_a_command():
    assert list(_setup_scripts()) == root_scripts()
    for script in root_scripts():
        shim = (REPO_ROOT / f"{script}.py").read_text(encoding="utf-8")
        # The shim names its module and imports nothing else.
        tree = ast.parse(shim)
        imports = [node for node in ast.walk(tree)
                   if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert [(node.module, [a.name for a in node.names]) for node in imports] \
            == [(f"bert_tf1.{script}", ["command"])], script
        assert f"bert_tf1/{script}.py" in ast.get_docstring(tree)
        module = ast.parse((REPO_ROOT / "bert_tf1" / f"{script}.py").read_text(
            encoding="utf-8"))
        assert "command" in {node.name for node in module.body
                             if isinstance(node, ast.FunctionDef)}, script


def test_a_script_runs_as_a_module_of_the_package(tmp_path):
    # From another folder: `python -m` finds it through the package alone
    # (a fresh interpreter: what it finds depends on how Python starts).
    as_module = subprocess.run(
        [sys.executable, "-m", "bert_tf1.run_classifier", "--task_name=MRPC"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env=_environment(PYTHONPATH=str(REPO_ROOT)))
    # The root script needs no fresh interpreter: a fork of the warm script
    # server runs the same file.
    as_file = run_script_argv("run_classifier.py", "--task_name=MRPC")
    # The same one-line refusal of the missing required flags.
    assert as_module.returncode == as_file.returncode == 1
    assert "--data_dir" in as_module.stderr.splitlines()[-1]
    assert as_module.stderr.splitlines()[-1] == as_file.stderr.splitlines()[-1]


def _environment(**extra):
    env = {key: value for key, value in os.environ.items()
           if key != "PYTHONPATH"}
    env.update(CUDA_VISIBLE_DEVICES="", TF_CPP_MIN_LOG_LEVEL="2", **extra)
    return env


def _quick_start():
    """The README's Python quick start block."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Python quick start", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def _setuptools_version():
    import importlib.metadata

    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return (0, 0)
    return tuple(int(part) for part in re.findall(r"\d+", version)[:2])


def _build_and_install(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(REPO_ROOT / "setup.py", source)
    for folder in FOLDERS:
        shutil.copytree(REPO_ROOT / folder, source / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    wheels = tmp_path / "wheels"
    # setuptools builds wheels itself from 70.1 on; an older one (Python
    # 3.11's venv brings 65.5) builds in pip's isolated environment.
    isolation = (["--no-build-isolation"] if _setuptools_version() >= (70, 1)
                 else [])
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    *isolation, "-w", str(wheels), str(source)],
                   check=True, capture_output=True, timeout=300,
                   env=_environment())
    (wheel,) = wheels.glob("*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
                   check=True, timeout=300)
    python = venv / "bin" / "python"
    purelib = pathlib.Path(sysconfig.get_paths(
        vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    # The dependencies come from this virtualenv's site-packages, through a
    # folder of links to all of it but this project's own install (pip would
    # take that one, found on the path, as the wheel already installed).
    dependencies = tmp_path / "dependencies"
    dependencies.mkdir()
    for entry in pathlib.Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not (entry.name.startswith(("__editable__", "bert_keras_tf1compat"))
                or entry.name.endswith(".pth")
                or entry.name in FOLDERS):
            (dependencies / entry.name).symlink_to(entry)
    (purelib / "borrowed_dependencies.pth").write_text(f"{dependencies}\n")
    # Without PYTHONPATH (CI sets it to the clone, whose egg-info pip would
    # take as the wheel already installed) and without looking at what is
    # installed at all (--ignore-installed): the wheel's files always land.
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install",
         "--no-deps", "--no-index", "--ignore-installed", str(wheel)],
        check=True, capture_output=True, text=True, timeout=300,
        env=_environment())
    assert (purelib / "bert_tf1" / "__init__.py").is_file(), installed.stdout
    return wheel, venv


def _mrpc_subset(folder, train_pairs=320, dev_pairs=40):
    """The first pairs of MRPC's train.tsv and dev.tsv (header kept), in
    `folder`: at --num_train_epochs=0.1 and --train_batch_size=32 one
    training step, then an evaluation. The installed command and the
    clone's script must agree on any data; the whole of MRPC (3,668 + 408
    pairs) only made both runs longer."""
    folder.mkdir()
    for name, pairs in (("train.tsv", train_pairs), ("dev.tsv", dev_pairs)):
        lines = (DATA_DIR / "glue" / "MRPC" / name).read_text(
            encoding="utf-8").splitlines(keepends=True)
        (folder / name).write_text("".join(lines[:1 + pairs]),
                                   encoding="utf-8")
    return folder


@pytest.mark.slow
def test_the_wheel_runs_beside_a_users_own_packages(tmp_path):
    wheel, venv = _build_and_install(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        top_level = next(name for name in archive.namelist()
                         if name.endswith(".dist-info/top_level.txt"))
        assert archive.read(top_level).decode().split() == ["bert_tf1"]
        # The wheel holds the package folder as it is: no setup.py, tests or
        # benchmarks, nothing copied in or left out.
        packaged = {name for name in archive.namelist()
                    if ".dist-info/" not in name}
    on_disk = {path.relative_to(REPO_ROOT).as_posix()
               for path in (REPO_ROOT / "bert_tf1").rglob("*")
               if path.is_file() and "__pycache__" not in path.parts}
    assert packaged == on_disk, sorted(packaged ^ on_disk)

    user = tmp_path / "user"
    for name in USER_PACKAGES:
        (user / name).mkdir(parents=True)
        (user / name / "__init__.py").write_text(
            f"raise ImportError('the user\\'s own {name} package was imported')\n")
    out = tmp_path / "out"
    out.mkdir()
    code = _quick_start() + (
        "import bert_tf1, sys\n"
        "print('PACKAGE=' + bert_tf1.__file__)\n"
        "print('TOP=' + ','.join(sorted(m for m in sys.modules if m in "
        "('data', 'tasks', 'modeling', 'serving'))))\n")
    env = _environment(FIX=str(FIXTURES_DIR), OUT=str(out))
    result = subprocess.run([str(venv / "bin" / "python"), "-c", code],
                            cwd=user, env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    package = next(line for line in result.stdout.splitlines()
                   if line.startswith("PACKAGE="))[len("PACKAGE="):]
    assert pathlib.Path(package).is_relative_to(venv), package
    assert "TOP=\n" in result.stdout + "\n", result.stdout
    assert (out / "classifier.keras").is_file()

    # The installed command and the clone's script: the same evaluation.
    mrpc = f"--data_dir={_mrpc_subset(tmp_path / 'MRPC')}"
    installed = subprocess.run(
        [str(venv / "bin" / "bert-run-classifier"), *MRPC_FLAGS, mrpc,
         f"--output_dir={tmp_path / 'installed'}"],
        cwd=user, env=env, capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    # The clone's side needs no fresh interpreter: a fork of the warm
    # script server (tests/helpers/script_runner.py) runs the same file.
    clone = run_script_argv("run_classifier.py", *MRPC_FLAGS, mrpc,
                            f"--output_dir={tmp_path / 'clone'}", timeout=600)
    assert clone.returncode == 0, clone.stderr[-3000:]
    results = [(tmp_path / name / "eval_results.txt").read_text()
               for name in ("installed", "clone")]
    assert "eval_accuracy = " in results[0]
    # Trained for a step, on the subset's 40 dev pairs.
    assert "global_step = 1\n" in results[0], results[0]
    assert results[0] == results[1]
