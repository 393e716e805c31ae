"""docs/ARCHITECTURE.md stays true to the code: every file it names exists, every function it
names after a file is defined there, and every room it lists is a room of the package."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "agentpost"
DOC = ROOT / "docs" / "ARCHITECTURE.md"
# `path/file.py`: `name`, `name`  (the names that follow a file are defined in it)
REF = re.compile(r"`([\w/]+\.py)`(?::\s*((?:`\w+`(?:,\s*)?)+))?")


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)} | {
        t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
        if isinstance(t, ast.Name)
    }  # fmt: skip


def references(text: str) -> list[tuple[str, list[str]]]:
    return [(m.group(1), re.findall(r"`(\w+)`", m.group(2) or "")) for m in REF.finditer(text)]


def missing(text: str) -> list[str]:
    out = []
    for rel, names in references(text):
        path = next((p for p in (SRC / rel, ROOT / rel) if p.is_file()), None)
        if path is None:
            out.append(f"{rel}: no such file")
            continue
        defined = _defined(path)
        out += [f"{rel}: no {name}" for name in names if name not in defined]
    return out


def test_every_file_and_function_the_architecture_names_exists() -> None:
    text = DOC.read_text()
    assert len(references(text)) > 60
    assert missing(text) == []


def test_the_check_can_fail() -> None:
    assert missing("`hero/cost.py`: `trs`, `no_such_fn`") == ["hero/cost.py: no no_such_fn"]
    assert missing("`nowhere/x.py`: `f`") == ["nowhere/x.py: no such file"]


def test_the_rooms_it_lists_are_the_package_rooms() -> None:
    from test_layers import ROOMS

    text = DOC.read_text()
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    for room in packages:
        assert f"`{room}/`" in text, room
    assert set(packages) <= set(ROOMS)
