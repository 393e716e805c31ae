"""The layer rule of ARCHITECTURE.md: an import only points down model → pure → io → edges.

Each module says its layer in its docstring (``Layer: pure.``). Pure code touches no
filesystem, subprocess, network, clock or framework; heavy stacks are imported lazily
(inside functions) everywhere, so ``import agentpost`` stays light.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "agentpost"
ORDER = {"model": 0, "pure": 1, "io": 2, "edges": 3}
LAYER_RE = re.compile(r"Layer:\s*(model|pure|io|edges)\b")

# Standard-library and third-party modules each layer may not import (top-level name).
# Banned in both model and pure code: the OS (processes, files, sockets, databases, threads,
# clock), model servers, the terminal and training frameworks.
_NO_SIDE_EFFECTS = {
    "os",
    "subprocess",
    "socket",
    "shutil",
    "sqlite3",
    "threading",
    "time",
    "openai",
    "httpx",
    "typer",
    "rich",
    "trl",
    "verl",
    "ray",
    "transformers",
}
FORBIDDEN = {
    "model": _NO_SIDE_EFFECTS | {"numpy", "torch"},
    "pure": _NO_SIDE_EFFECTS
    | {
        "pathlib",
        "tempfile",
        "asyncio",
        "http",
        "urllib",
        "requests",
        "datetime",
        "glob",
        "io",
    },
    "io": {"typer", "trl", "verl", "ray"},
    "edges": set(),
}
# Imported lazily (inside a function) wherever they are used.
HEAVY = {"torch", "trl", "verl", "ray", "transformers", "datasets", "accelerate", "swebench"}

# Modules that are not part of the package proper: bundled task files run inside sandboxes.
EXCLUDED_PARTS = {"suites"}


def _modules() -> list[Path]:
    return sorted(
        p for p in SRC.rglob("*.py") if not EXCLUDED_PARTS.intersection(p.relative_to(SRC).parts)
    )


def _dotted(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _layer(path: Path) -> str | None:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    m = LAYER_RE.search(doc)
    if m:
        return m.group(1)
    if path.name == "__init__.py":
        return "model"  # package markers: they must stay import-free
    return None


def _imports(tree: ast.Module, module: str, is_pkg: bool) -> list[tuple[str, bool]]:
    """(imported module, at top level?) for every import in ``tree``."""
    top_level = {id(n) for n in tree.body}
    for node in tree.body:  # `if TYPE_CHECKING:` blocks count as lazy
        if isinstance(node, ast.If):
            top_level.discard(id(node))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, id(node) in top_level) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            # `from pkg import sub` may import a submodule: check `pkg.sub` (the longest known
            # module prefix decides, so `from m import Name` still resolves to `m`)
            out += [(f"{name}.{a.name}", id(node) in top_level) for a in node.names]
    return out


LAYERS = {_dotted(p): _layer(p) for p in _modules()}
# Builtins that reach the file system, the terminal or arbitrary code: not in model or pure.
IMPURE_BUILTINS = {"open", "input", "print", "exec", "eval", "__import__", "breakpoint"}


def violations(source: str, module: str, layer: str, is_pkg: bool = False) -> list[str]:
    """Every way ``source`` (module ``module`` in ``layer``) breaks the layer rule."""
    tree = ast.parse(source)
    out = []
    for name, top in _imports(tree, module, is_pkg):
        head = name.split(".")[0]
        if head == "agentpost":
            target = max(
                (m for m in LAYERS if name == m or name.startswith(m + ".")),
                key=len,
                default=None,
            )
            if target is not None and LAYERS[target] is not None:
                if ORDER[LAYERS[target]] > ORDER[layer]:
                    out.append(
                        f"{module} ({layer}) imports {name} ({LAYERS[target]}): "
                        "imports only point down"
                    )
        elif head in FORBIDDEN[layer]:
            out.append(f"{module} ({layer}) may not import {name}")
        elif top and head in HEAVY:
            out.append(f"{module} imports {name} at module level; import lazily")
    if layer in ("model", "pure"):
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in IMPURE_BUILTINS
            ):
                out.append(f"{module} ({layer}) calls {node.func.id}() at line {node.lineno}")
    return out


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_module_declares_layer_and_respects_it(path: Path) -> None:
    layer = _layer(path)
    assert layer, f"{path.relative_to(SRC)}: docstring must say 'Layer: model|pure|io|edges.'"
    assert violations(path.read_text(), _dotted(path), layer, path.name == "__init__.py") == []


def test_the_checker_catches_each_kind_of_violation() -> None:
    """The rule above can fail: one synthetic module per kind of breach."""
    bad = {
        "from agentpost.trajectory.io import read_jsonl": "imports only point down",
        "from ..trajectory import io": "imports only point down",
        "from agentpost.trajectory import io as tio": "imports only point down",
        "import os.path": "may not import os.path",
        "import typer": "may not import typer",
        "def f():\n    return open('x').read()": "calls open()",
        "print('hi')": "calls print()",
    }
    for source, message in bad.items():
        found = violations(source, "agentpost.hero.fake", "pure")
        assert len(found) == 1 and message in found[0], (source, found)
    assert "at module level" in violations("import torch", "agentpost.store", "io")[0]
    assert violations("def f():\n    import torch", "agentpost.store", "io") == []
    assert violations("from agentpost.trajectory.model import Turn", "agentpost.x", "pure") == []


def test_package_import_is_light() -> None:
    import subprocess
    import sys

    code = "import sys, agentpost.cli; bad = {'torch','trl','verl','ray','transformers'} & set(sys.modules); print(sorted(bad))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# Rooms that serve every method import none of the methods: judges are transports, the call path
# and voting; each method (scvd/ = SCVD, security/ = SecureVibe) owns its prompt, parser
# and view. (A name in a component table is a string, resolved at run time: not an import.)
ROOM_RULES = {"agentpost.judges": ("agentpost.scvd", "agentpost.security")}


def room_violations(source: str, module: str, is_pkg: bool = False) -> list[str]:
    """Imports of ``module`` that reach a room its own room may not import."""
    out = []
    for room, banned in ROOM_RULES.items():
        if module == room or module.startswith(room + "."):
            for name, _top in _imports(ast.parse(source), module, is_pkg):
                out += [f"{module} imports {name}" for b in banned if name.startswith(b + ".")]
    return out


def test_shared_rooms_import_no_method() -> None:
    found = [
        v
        for p in _modules()
        for v in room_violations(p.read_text(), _dotted(p), p.name == "__init__.py")
    ]
    assert found == []
    # the rule can fail, lazily imported or not
    bad = "def f():\n    from agentpost.scvd.heuristic import annotate"
    assert room_violations(bad, "agentpost.judges.fake") == [
        "agentpost.judges.fake imports agentpost.scvd.heuristic.annotate"
    ]


# Rooms: the top-level packages and modules of agentpost, lowest first. An import only points to
# a room at or below its own (a lower room never imports a higher one, lazily or not), so the
# rooms cannot form a circle either. A new room must be placed here: where it stands is a
# decision, not an accident. (The method rooms: hero = HERO, scvd = SCVD, security = SecureVibe;
# replay serves them all, so it stands below them.)
ROOMS = [
    "_moved", "agentpost", "errors",
    "ingress",  # the one way in for bytes from a sandbox, trajectory or run folder (stdlib only)
    "documents",  # every output format and the one way out (atomic_write, open_output)
    "config_checks", "prices", "dirlock", "store", "components",
    "intervals",  # the foundation: no agentpost room above it
    "trajectory", "sft", "sandbox", "tasks", "replay",  # data, sandboxes, tasks, replay
    "hero", "agent", "judges", "scvd", "security",  # HERO, the agent runtime, judges, SCVD, SecureVibe
    "train", "lab", "report", "demo", "commands", "cli",  # trainers, experiments, views, the CLI
]  # fmt: skip
# A sub-room stands above the rest of its room: the room never imports it.
SUB_ROOMS = {"agentpost.scvd.distill": "agentpost.scvd"}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _resolve(name: str, known: set[str]) -> str | None:
    """The package module an import of ``name`` (``a.b`` or ``a.b.attr``) loads, or None when
    it is no module of ours (a C extension, a third-party package)."""
    if not name.startswith("agentpost"):
        return None
    if name in known:
        return name
    parent = name.rpartition(".")[0]
    return parent if parent in known else None


def import_graph(sources: dict[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """module → the package modules it imports (at top level or lazily), from ``sources``
    (module → (source text, is a package))."""
    known = set(sources)
    graph: dict[str, set[str]] = {}
    for module, (text, is_pkg) in sources.items():
        targets = {_resolve(n, known) for n, _top in _imports(ast.parse(text), module, is_pkg)}
        graph[module] = {t for t in targets if t is not None and t != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def arrows_up(graph: dict[str, set[str]], rooms: list[str] = ROOMS) -> list[str]:
    """Every import that points to a higher room (or a room not placed in ``rooms``), and every
    import of a sub-room by the rest of its room."""
    rank = {r: i for i, r in enumerate(rooms)}
    out = []
    for module, targets in sorted(graph.items()):
        a = _room(module)
        if a not in rank:
            out.append(f"{module}: room {a!r} is not placed in ROOMS (tests/test_layers.py)")
            continue
        for t in sorted(targets):
            b = _room(t)
            if b not in rank:
                out.append(f"{t}: room {b!r} is not placed in ROOMS (tests/test_layers.py)")
            elif rank[b] > rank[a]:
                out.append(f"{module} ({a}) imports {t} ({b}): a lower room imports a higher one")
            for sub, room in SUB_ROOMS.items():
                inside = module == sub or module.startswith(sub + ".")
                into = t == sub or t.startswith(sub + ".")
                if not inside and _room(module) == _room(room) and into:
                    out.append(f"{module} imports {t}: {room} never imports its sub-room {sub}")
    return out


def _package_sources() -> dict[str, tuple[str, bool]]:
    return {_dotted(p): (p.read_text(), p.name == "__init__.py") for p in _modules()}


def test_no_import_circle_and_no_arrow_up() -> None:
    graph = import_graph(_package_sources())
    assert circles(graph) == []
    assert arrows_up(graph) == []


def test_the_circle_and_arrow_checks_can_fail() -> None:
    src = {
        "agentpost.demo.pipeline": ("from agentpost.demo.terminal import stage_run", False),
        "agentpost.demo.terminal": (
            "def f():\n    from agentpost.demo.pipeline import Demo",
            False,
        ),
        "agentpost.replay.run": ("from agentpost.scvd.protocol import call_outputs", False),
        "agentpost.scvd.protocol": ("from agentpost.trajectory.model import Turn", False),
        "agentpost.scvd.pipeline": ("from agentpost.scvd.distill import collect", False),
        "agentpost.scvd.distill": ("", True),
        "agentpost.scvd.distill.collect": ("from agentpost.scvd.pipeline import x", False),
        "agentpost.trajectory.model": ("", False),
        "agentpost.newroom.x": ("", False),
    }
    graph = import_graph(src)
    assert circles(graph) == [
        ["agentpost.demo.pipeline", "agentpost.demo.terminal"],
        ["agentpost.scvd.distill.collect", "agentpost.scvd.pipeline"],
    ]
    assert arrows_up(graph) == [
        "agentpost.newroom.x: room 'newroom' is not placed in ROOMS (tests/test_layers.py)",
        "agentpost.replay.run (replay) imports agentpost.scvd.protocol (scvd): "
        "a lower room imports a higher one",
        "agentpost.scvd.pipeline imports agentpost.scvd.distill.collect: "
        "agentpost.scvd never imports its sub-room agentpost.scvd.distill",
    ]


def deprecated_uses(source: str, module: str, is_pkg: bool = False) -> list[str]:
    """Old paths in ``source``: a moved module's old dotted path anywhere in the text (imports,
    component tables, docstrings), and any import from an old package."""
    from agentpost._moved import MOVED, OLD_PACKAGES

    names = sorted(MOVED, key=len, reverse=True)
    text = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")(?![\w])")
    found = {m.group(1) for m in text.finditer(source)}
    for name, _top in _imports(ast.parse(source), module, is_pkg):
        if any(name == p or name.startswith(p + ".") for p in OLD_PACKAGES):
            found.add(next((m for m in names if name == m or name.startswith(m + ".")), name))
    return [f"{module} uses {old}" for old in sorted(found)]


def test_no_package_module_names_a_deprecated_path() -> None:
    """The package uses the new paths only (``_moved`` keeps the old ones answering for users,
    with a warning). (``agentpost.efficiency`` is also a document format's name: only imports
    of the old packages count.)"""
    found = [
        v
        for p in _modules()
        if p.name != "_moved.py"
        for v in deprecated_uses(p.read_text(), _dotted(p), p.name == "__init__.py")
    ]
    assert found == []
    # the check can fail, on each kind of use
    assert deprecated_uses("from agentpost.verification.replay import replay", "agentpost.x") == [
        "agentpost.x uses agentpost.verification.replay"
    ]
    assert deprecated_uses('T = {"h": "agentpost.efficiency.advantage:f"}', "agentpost.x") == [
        "agentpost.x uses agentpost.efficiency.advantage"
    ]
    assert deprecated_uses("from agentpost.efficiency import advantage", "agentpost.x") == [
        "agentpost.x uses agentpost.efficiency.advantage"
    ]
    assert deprecated_uses('FORMAT = fmt("agentpost.efficiency")', "agentpost.x") == []


def test_old_import_paths_warn_and_give_the_moved_module() -> None:
    import importlib
    import subprocess
    import sys

    from agentpost._moved import MOVED, OLD_PACKAGES, SPLIT

    for old, new in [*OLD_PACKAGES.items(), *MOVED.items()]:
        if old in sys.modules:  # imported earlier in this process: the warning was given then
            continue
        with pytest.warns(DeprecationWarning, match=re.escape(f"{old} moved to {new}")):
            mod = importlib.import_module(old)
        if old in OLD_PACKAGES:
            assert mod.__path__ == []  # a placeholder: its submodules come from the table
        elif old in SPLIT:
            for name, home in SPLIT[old].items():
                assert getattr(mod, name) is getattr(importlib.import_module(home), name)
        else:
            assert mod is importlib.import_module(new)
    # the classic spelling, in a fresh interpreter, warns at the importing line
    code = "from agentpost.verification import replay; print(replay.__name__)"
    out = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert out.stdout.strip() == "agentpost.replay.run"
    assert "<string>:1: DeprecationWarning: agentpost.verification.replay moved" in out.stderr
