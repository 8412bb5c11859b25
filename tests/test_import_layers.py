"""Imports go one way: every module's imports against the table of layers.

Layers, top to bottom: `demos/` (demo code, which nothing else imports),
the scripts at the repository root, `tasks/`,
`serving/`, then `modeling/` beside the data jobs (`data/glue`,
`data/squad`, ...), `data/tokenization`, and `data/io` at the bottom.
A module may import its own layer and the layers the table allows; so
`data/` never imports `modeling/`, `modeling/` reaches `data/` only through
`data/io`, and nothing imports a script or `tasks/` from below. Every import
statement is read from the source (function-level ones included), so a lazy
import cannot hide an edge.
"""
import ast
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("data", "demos", "modeling", "serving", "tasks")
SCRIPT = "script"

# layer -> the layers it may import (its own is always allowed).
ALLOWED = {
    "demos": {SCRIPT, "tasks", "serving", "modeling", "data.job",
              "data.tokenization", "data.io"},
    SCRIPT: {"tasks", "serving", "modeling", "data.job", "data.tokenization",
             "data.io"},
    "tasks": {"serving", "modeling", "data.job", "data.tokenization",
              "data.io"},
    "serving": {"modeling", "data.job", "data.tokenization", "data.io"},
    "modeling": {"data.io"},
    "data.job": {"data.tokenization", "data.io"},
    "data.tokenization": {"data.io"},
    "data.io": set(),
}


def _scripts():
    return sorted(path for path in REPO.glob("*.py") if path.name != "setup.py")


def _modules():
    paths = _scripts()
    for package in PACKAGES:
        paths += sorted((REPO / package).rglob("*.py"))
    return paths


def _module_name(path):
    relative = path.relative_to(REPO).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer(module):
    """The layer of a dotted module name of this project, or None."""
    top = module.split(".")[0]
    if top not in PACKAGES:
        return SCRIPT if (REPO / f"{top}.py").exists() else None
    if top != "data":
        return top
    parts = module.split(".")
    if len(parts) == 1:
        return "data.io"  # the package face: a docstring only
    if parts[1] in ("io", "tokenization"):
        return f"data.{parts[1]}"
    return "data.job"


def _job(module):
    """`data.glue.<module>` -> "glue": data jobs may not import one another."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _imports(path):
    """Dotted names of everything `path` imports from this project."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" \
        else _module_name(path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            # `from data.glue import processors` imports data.glue.processors.
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if _layer(name) is not None}


def _violations():
    bad = []
    for path in _modules():
        module = _module_name(path)
        layer = _layer(module)
        for imported in sorted(_imports(path)):
            target = _layer(imported)
            if target == SCRIPT and layer != "demos":  # a demo may reuse flags
                bad.append(f"{module} imports the script {imported}")
            elif target == layer == "data.job" and _job(imported) != _job(module):
                bad.append(f"{module} imports another data job: {imported}")
            elif target != layer and target not in ALLOWED[layer]:
                bad.append(f"{module} ({layer}) imports {imported} ({target})")
    return bad


def test_every_import_follows_the_layer_table():
    bad = _violations()
    assert not bad, "imports against the layer table:\n" + "\n".join(bad)


@pytest.mark.parametrize("module, expected", [
    ("modeling.training.loop", "modeling"),
    ("data.io.atomic", "data.io"),
    ("data.tokenization.packing", "data.tokenization"),
    ("data.squad.features", "data.job"),
    ("serving.export", "serving"),
    ("tasks.cli", "tasks"),
    ("demos.ner.task", "demos"),
    ("run_classifier", SCRIPT),
    ("numpy", None),
])
def test_layer_of_a_module(module, expected):
    assert _layer(module) == expected


def test_the_check_finds_an_upward_import(tmp_path):
    # A data module importing modeling, and modeling importing tasks, are
    # both reported: the check can fail.
    fake = tmp_path / "repo"
    for package in PACKAGES:
        (fake / package).mkdir(parents=True)
        (fake / package / "__init__.py").write_text("")
    (fake / "data" / "glue").mkdir()
    (fake / "data" / "glue" / "x.py").write_text("from modeling import losses\n")
    (fake / "modeling" / "y.py").write_text(
        "def f():\n    from tasks import cli\n")
    (fake / "data" / "squad").mkdir()
    (fake / "data" / "squad" / "z.py").write_text("import data.glue.x\n")
    (fake / "tasks" / "w.py").write_text("from demos.ner import task\n")
    global REPO
    saved, REPO = REPO, fake
    try:
        bad = _violations()
    finally:
        REPO = saved
    assert any("data.glue.x (data.job) imports modeling" in line for line in bad)
    assert any("modeling.y (modeling) imports tasks" in line for line in bad)
    assert any("data.squad.z imports another data job: data.glue.x" in line
               for line in bad)
    assert any("tasks.w (tasks) imports demos.ner" in line for line in bad)
