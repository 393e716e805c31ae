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
        found = violations(source, "agentpost.efficiency.fake", "pure")
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
# and voting; each method (verification/ = SCVD, security/ = SecureVibe) owns its prompt, parser
# and view. (A name in a component table is a string, resolved at run time: not an import.)
ROOM_RULES = {"agentpost.judges": ("agentpost.verification", "agentpost.security")}


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
    bad = "def f():\n    from agentpost.verification.heuristic import annotate"
    assert room_violations(bad, "agentpost.judges.fake") == [
        "agentpost.judges.fake imports agentpost.verification.heuristic.annotate"
    ]
