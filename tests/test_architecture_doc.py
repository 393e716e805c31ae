"""docs/ARCHITECTURE.md stays true to the code: every file it names exists, every function it
names after a file is defined there, every room it lists is a room of the package, and every
section ``b.N`` of each paper's spec (``../shared/spec/*.md``, where its formulas live) has a row
in that paper's table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from shared_data import DATA, needed

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


SPECS = {"HERO": "HERO.md", "SCVD": "SCVD.md", "SecureVibe": "SECUREVIBE.md"}


def uncovered(doc: str, paper: str, spec: str) -> list[str]:
    """The ``### b.N`` sections of ``spec`` that the doc's table for ``paper`` has no row for."""
    start = doc.index(f"### {paper} (")
    end = doc.find("\n### ", start + 1)
    table = doc[start : end if end > 0 else len(doc)].split("\n## ")[0]
    rows = set(re.findall(r"^\| (b\.\d+) \|", table, flags=re.M))
    sections = re.findall(r"^### (b\.\d+)\b", spec, flags=re.M)
    return [f"{paper} {b}" for b in sections if b not in rows]


@needed
def test_every_section_of_each_spec_has_a_row() -> None:
    doc = DOC.read_text()
    spec_dir = DATA.parent / "spec"
    if not spec_dir.is_dir():
        pytest.skip(f"the papers' specs live in {spec_dir} (absent)")
    missing_rows = [
        m
        for paper, name in SPECS.items()
        for m in uncovered(doc, paper, (spec_dir / name).read_text())
    ]
    assert missing_rows == []


def test_the_section_check_can_fail() -> None:
    doc = "### HERO (x)\n\n| spec | f | g |\n|---|---|---|\n| b.2 | a | b |\n\n## next\n"
    assert uncovered(doc, "HERO", "### b.1 Notation\n### b.2 TRS\n") == ["HERO b.1"]


def test_the_rooms_it_lists_are_the_package_rooms() -> None:
    from test_layers import ROOMS

    text = DOC.read_text()
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").is_file()}
    for room in packages:
        assert f"`{room}/`" in text, room
    assert set(packages) <= set(ROOMS)
