"""Imports go one way: every module's imports against the table of layers.

Layers, top to bottom: `demos/` (demo code, which nothing else imports),
the script modules (`bert_tf1/run_classifier.py`, ...), `bert_tf1/tasks/`,
`bert_tf1/serving/`, then `bert_tf1/modeling/` beside the data jobs (`bert_tf1/data/glue`,
`bert_tf1/data/squad`, ...), `bert_tf1/data/tokenization`, and `bert_tf1/data/io` at the bottom.
A module may import its own layer and the layers the table allows; so
`bert_tf1/data/` never imports `bert_tf1/modeling/`, `bert_tf1/modeling/` reaches `bert_tf1/data/` only through
`bert_tf1/data/io`, and nothing imports a script or `bert_tf1/tasks/` from below. Every import
statement is read from the source (function-level ones included), so a lazy
import cannot hide an edge.

Inside `bert_tf1/modeling/` the sub-layers of docs/architecture.md are checked the same
way (`MODELING_LAYERS`), and the whole library's module graph must have no
circle. Folders tie one way too: no two sibling folders of `bert_tf1/`
(`bert_tf1/modeling/` and `bert_tf1/data/`, or `bert_tf1/modeling/models/` and
`bert_tf1/modeling/interop/`) import each other, though no module circle need
join them. Private TensorFlow/Keras APIs are used in
bert_tf1/modeling/keras_internals.py only.
"""
import ast
import pathlib
import re

import pytest

from bert_tf1.modeling.keras_internals import OVERRIDDEN_HOOKS

REPO = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("data", "demos", "modeling", "serving", "tasks")
SCRIPT = "script"
# The package's own modules that are no layer's: its face and lazy loader.
PACKAGE_FACE = ("__init__.py", "lazy_exports.py")


def _folder(package):
    """demos/ at the root, the library's folders inside bert_tf1/."""
    return REPO / package if package == "demos" else REPO / "bert_tf1" / package

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

# bert_tf1/modeling/'s sub-layers, top to bottom, as docs/architecture.md draws them:
# a module imports its own sub-layer and those below. The most specific
# prefix names a module's sub-layer.
MODELING_LAYERS = (
    ("modeling",),  # the package face
    ("modeling.training", "modeling.inference", "modeling.optimization",
     "modeling.conversion"),
    ("modeling.models",),
    ("modeling.interop",),  # the layouts' readers, the checkpoint-source finder
    ("modeling.checkpoints",),
    ("modeling.layers",),
    ("modeling.config", "modeling.naming", "modeling.activations",
     "modeling.pooling", "modeling.keras_internals"),
)


def _scripts():
    """The script modules: bert_tf1/run_classifier.py, ..."""
    return sorted(path for path in (REPO / "bert_tf1").glob("*.py")
                  if path.name not in PACKAGE_FACE)


def _modules():
    paths = _scripts()
    for package in PACKAGES:
        paths += sorted(_folder(package).rglob("*.py"))
    return paths


def _module_name(path):
    """bert_tf1/modeling/x.py -> modeling.x (the table names the folders)."""
    relative = path.relative_to(REPO).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return _unprefixed(".".join(parts))


def _layer(module):
    """The layer of a dotted module name of this project, or None."""
    top = module.split(".")[0]
    if top not in PACKAGES:
        return SCRIPT if (REPO / "bert_tf1" / f"{top}.py").exists() and \
            f"{top}.py" not in PACKAGE_FACE else None
    if top != "data":
        return top
    parts = module.split(".")
    if len(parts) == 1:
        return "data.io"  # the package face: a docstring only
    if parts[1] in ("io", "tokenization"):
        return f"data.{parts[1]}"
    return "data.job"


def _job(module):
    """data.glue.<module> -> "glue": data jobs may not import one another."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _unprefixed(name):
    """bert_tf1.modeling.x -> modeling.x: the table names the folders."""
    return name[len("bert_tf1."):] if name.startswith("bert_tf1.") else name


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
    found = {_unprefixed(name) for name in found}
    return {name for name in found if _layer(name) is not None}


def _modeling_layer(module):
    """Index of a modeling module's sub-layer in MODELING_LAYERS (0: top)."""
    best = None
    for index, prefixes in enumerate(MODELING_LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[0]) and (
                    prefix != "modeling" or module == "modeling"):
                best = (len(prefix), index)
    if best is None:
        raise AssertionError(f"{module} is in no sub-layer of MODELING_LAYERS")
    return best[1]


def _module_edges(path, modules):
    """The modules of `modules` that importing `path` runs, by its import
    statements (function-level ones too): `from a.b import c` is a.b.c when
    that is a module, else a.b; importing a.b.c also runs the packages a and
    a.b unless they hold `path` itself (those are already running)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    module = _module_name(path)
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    targets = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets.update(_unprefixed(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1]
                                + ([base] if base else []))
            base = _unprefixed(base)
            for alias in node.names:
                name = f"{base}.{alias.name}"
                targets.add(name if name in modules else base)
    own = {".".join(module.split(".")[:i])
           for i in range(1, module.count(".") + 2)}
    found = set()
    for target in targets:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name in modules and name not in own:
                found.add(name)
    return found


def _graph():
    modules = {_module_name(path): path for path in _modules()}
    return {name: _module_edges(path, modules) for name, path in modules.items()}


def _cycle(graph):
    """One import circle of `graph` as [a, b, ..., a], or None."""
    state, trail = {}, []

    def visit(node):
        state[node] = "open"
        trail.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return trail[trail.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        trail.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _modeling_violations(graph):
    bad = []
    for module, targets in sorted(graph.items()):
        if _layer(module) != "modeling":
            continue
        for target in sorted(targets):
            if _layer(target) == "modeling" and (
                    _modeling_layer(target) < _modeling_layer(module)):
                bad.append(f"{module} (sub-layer {_modeling_layer(module)}) "
                           f"imports {target} (sub-layer "
                           f"{_modeling_layer(target)})")
    return bad


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
        folder = fake / package if package == "demos" else fake / "bert_tf1" / package
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("")
    lib = fake / "bert_tf1"
    (lib / "data" / "glue").mkdir()
    (lib / "data" / "glue" / "x.py").write_text(
        "from bert_tf1.modeling import losses\n")
    (lib / "modeling" / "y.py").write_text(
        "def f():\n    from bert_tf1.tasks import cli\n")
    (lib / "data" / "squad").mkdir()
    (lib / "data" / "squad" / "z.py").write_text("import bert_tf1.data.glue.x\n")
    (lib / "tasks" / "w.py").write_text("from demos.ner import task\n")
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


def test_the_library_has_no_import_circle():
    circle = _cycle(_graph())
    assert circle is None, "import circle: " + " -> ".join(circle)


def test_modeling_sub_layers_import_downwards():
    bad = _modeling_violations(_graph())
    assert not bad, "upward imports inside bert_tf1/modeling/:\n" + "\n".join(bad)


def test_the_checks_find_a_circle_and_an_upward_modeling_import(tmp_path):
    fake = tmp_path / "repo"
    for folder in ("bert_tf1/data", "demos", "bert_tf1/serving", "bert_tf1/tasks",
                   "bert_tf1/modeling", "bert_tf1/modeling/models",
                   "bert_tf1/modeling/layers", "bert_tf1/modeling/interop"):
        (fake / folder).mkdir(parents=True)
        (fake / folder / "__init__.py").write_text("")
    (fake / "bert_tf1/modeling/layers/a.py").write_text(
        "def f():\n    from modeling.models import b\n")
    (fake / "bert_tf1/modeling/models/b.py").write_text("from modeling.layers import a\n")
    # `from modeling.interop import c` runs bert_tf1/modeling/interop/__init__.py too.
    (fake / "bert_tf1/modeling/interop/__init__.py").write_text(
        "from modeling.models import d\n")
    (fake / "bert_tf1/modeling/interop/c.py").write_text("")
    (fake / "bert_tf1/modeling/models/d.py").write_text(
        "from modeling.interop.c import x\n")
    global REPO
    saved, REPO = REPO, fake
    try:
        graph = _graph()
        bad = _modeling_violations(graph)
    finally:
        REPO = saved
    assert _cycle(graph) in (["modeling.layers.a", "modeling.models.b",
                              "modeling.layers.a"],
                             ["modeling.interop", "modeling.models.d",
                              "modeling.interop"])
    assert _cycle({k: v for k, v in graph.items()
                   if not k.startswith("modeling.layers")}) == [
        "modeling.interop", "modeling.models.d", "modeling.interop"]
    assert "modeling.interop (sub-layer 3) imports modeling.models.d " \
        "(sub-layer 2)" in bad
    assert "modeling.layers.a (sub-layer 5) imports modeling.models.b " \
        "(sub-layer 2)" in bad
    assert not [line for line in bad if line.startswith("modeling.models")]


def _subfolder(module, scope):
    """The subfolder of the package `scope` ("" for bert_tf1 itself) holding
    `module`, dotted ("modeling.models" for modeling.models.task in scope
    "modeling"); None for a module outside `scope` or directly in it."""
    prefix = scope.split(".") if scope else []
    parts = module.split(".")
    if parts[:len(prefix)] != prefix or len(parts) == len(prefix):
        return None
    folder = parts[:len(prefix) + 1]
    return ".".join(folder) if (REPO / "bert_tf1").joinpath(*folder).is_dir() \
        else None


def _folder_circles(graph):
    """One line per package folder of bert_tf1 (bert_tf1/ itself included)
    whose subfolders import each other round a circle (a two-way tie is the
    shortest): the circle, then one module import for each of its steps."""
    root = REPO / "bert_tf1"
    scopes = [""] + sorted(".".join(path.parent.relative_to(root).parts)
                           for path in root.rglob("__init__.py")
                           if path.parent != root)
    found = []
    for scope in scopes:
        steps = {}  # (folder, folder it imports) -> one module import
        for module, targets in sorted(graph.items()):
            # The deepest target first: it names the module imported.
            for target in sorted(targets, key=lambda t: (-t.count("."), t)):
                pair = (_subfolder(module, scope), _subfolder(target, scope))
                if None not in pair and pair[0] != pair[1]:
                    steps.setdefault(pair, f"{module} imports {target}")
        folders = {folder for pair in steps for folder in pair}
        circle = _cycle({folder: {b for a, b in steps if a == folder}
                         for folder in folders})
        if circle:
            found.append(" -> ".join(circle) + " (" + "; ".join(
                steps[pair] for pair in zip(circle, circle[1:])) + ")")
    return found


def test_sibling_folders_import_one_way():
    circles = _folder_circles(_graph())
    assert not circles, ("folders of bert_tf1/ that import each other:\n"
                         + "\n".join(circles))


def test_the_folder_check_finds_two_way_ties(tmp_path):
    # Neither tie is a module circle: models.a -> interop.b and
    # interop.c -> models.d; data.glue.x -> tasks.y -> data.io.z.
    fake = tmp_path / "repo"
    for folder in ("bert_tf1/data", "bert_tf1/data/glue", "bert_tf1/data/io",
                   "demos", "bert_tf1/serving", "bert_tf1/tasks",
                   "bert_tf1/modeling", "bert_tf1/modeling/models",
                   "bert_tf1/modeling/interop"):
        (fake / folder).mkdir(parents=True)
        (fake / folder / "__init__.py").write_text("")
    for name, text in (
            ("modeling/models/a.py", "from bert_tf1.modeling.interop import b\n"),
            ("modeling/interop/b.py", ""),
            ("modeling/interop/c.py",
             "def f():\n    from bert_tf1.modeling.models.d import x\n"),
            ("modeling/models/d.py", "x = 1\n"),
            ("data/glue/x.py", "import bert_tf1.tasks.y\n"),
            ("tasks/y.py", "from bert_tf1.data.io import z\n"),
            ("data/io/z.py", "")):
        (fake / "bert_tf1" / name).write_text(text)
    global REPO
    saved, REPO = REPO, fake
    try:
        graph = _graph()
        circles = _folder_circles(graph)
    finally:
        REPO = saved
    assert _cycle(graph) is None
    assert circles == [
        "data -> tasks -> data (data.glue.x imports tasks.y; "
        "tasks.y imports data.io.z)",
        "modeling.interop -> modeling.models -> modeling.interop "
        "(modeling.interop.c imports modeling.models.d; "
        "modeling.models.a imports modeling.interop.b)"]


# `tensorflow.python`, or a private attribute (`._name`) of a Keras or
# TensorFlow object: of tf/keras, a model, layer, optimizer or strategy, or
# a base class's method (super()).
_PRIVATE_TF = re.compile(r"tensorflow\.python|tf\.python")


def _private_api_uses(paths):
    found = []
    for path in paths:
        if path.name == "keras_internals.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            line = None
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) \
                    else [alias.name for alias in node.names]
                if any(_PRIVATE_TF.match(name) for name in names):
                    line = node.lineno
            elif (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                  and not node.attr.startswith("__")):
                owner = node.value
                if isinstance(owner, ast.Call) and isinstance(
                        owner.func, ast.Name) and owner.func.id == "super":
                    # A private method of a Keras base class, but for the
                    # hooks keras_internals lists (and contract-tests).
                    if node.attr not in OVERRIDDEN_HOOKS:
                        line = node.lineno
                elif isinstance(owner, ast.Name) and owner.id in (
                        "tf", "keras", "model", "layer", "optimizer",
                        "strategy", "dense") or (isinstance(owner, ast.Attribute)
                                        and owner.attr == "extended"):
                    line = node.lineno
            if line is not None:
                found.append(f"{path.relative_to(REPO)}:{line}")
    return found


def test_private_tensorflow_and_keras_apis_live_in_keras_internals():
    uses = _private_api_uses(_modules())
    assert not uses, ("private TensorFlow/Keras API outside "
                      "bert_tf1/modeling/keras_internals.py:\n" + "\n".join(uses))


def _bare_package_imports(paths):
    """`import modeling` / `from data.io import x` lines: the folders are
    imported only as `bert_tf1.<folder>` (one import name, docs/differences.md)."""
    bare = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            else:
                continue
            bare += [f"{path.relative_to(REPO)}:{node.lineno}: {name}"
                     for name in names
                     if name.split(".")[0] in ("modeling", "data", "serving",
                                                "tasks")]
    return bare


def test_the_folders_are_imported_as_bert_tf1_only():
    paths = [path for folder in ("tests", "benchmarks")
             for path in (REPO / folder).rglob("*.py")] + _modules()
    bare = _bare_package_imports(paths)
    assert not bare, "imports outside bert_tf1:\n" + "\n".join(bare)


def test_the_bare_import_check_can_fail(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from data.io import atomic\n"
                      "import bert_tf1.modeling\nimport serving.export\n")
    global REPO
    saved, REPO = REPO, tmp_path
    try:
        assert sorted(_bare_package_imports([module])) == [
            "m.py:2: data.io", "m.py:4: serving.export"]
    finally:
        REPO = saved
