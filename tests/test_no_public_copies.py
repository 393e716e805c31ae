"""The project holds no file copied from a public repository (issue 32): real public data lives
in ``../shared/data`` only. A file of the project whose bytes equal a file there is such a copy
(one was: the real gemini-cli session of harbor's RFC 0001 inside a synthetic Harbor trial).
Licence texts are the exception: they must travel with what they license."""

from __future__ import annotations

import hashlib
from pathlib import Path

from shared_data import DATA, needed

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("src", "tests", "docs", "bench", "scripts", ".ci")
SKIP_DIRS = {"__pycache__", "_build", ".venv", ".git", ".pytest_cache", ".ruff_cache"}
LICENCES = {  # the same licence text as a file in ../shared/data, kept on purpose
    "LICENSE",  # the project's own licence (the same standard text as one in shared)
    "src/agentpost/security/data/baxbench.MIT.txt",  # the notice for the adapted suite
}
SMALL = 64  # bytes: a short file (an empty JSON list, a one-line script) is no copy


def _files(root: Path, rel_to: Path):
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(rel_to)
        if p.is_file() and not p.is_symlink() and not SKIP_DIRS.intersection(rel.parts):
            yield p


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@needed
def test_no_file_of_the_project_is_a_copy_of_a_shared_public_file():
    shared = {_sha(p): p for p in _files(DATA, DATA) if p.stat().st_size > SMALL}
    ours = [REPO / "LICENSE", *(p for f in FOLDERS if (REPO / f).is_dir()
                                for p in _files(REPO / f, REPO))]  # fmt: skip
    copies = [
        f"{p.relative_to(REPO)} == ../shared/data/{shared[h].relative_to(DATA)}"
        for p in ours
        if p.stat().st_size > SMALL
        and str(p.relative_to(REPO)) not in LICENCES
        and (h := _sha(p)) in shared
    ]
    assert not copies, copies
