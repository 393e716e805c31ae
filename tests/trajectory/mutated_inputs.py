"""Mutated real samples for the import tests: keys deleted, values replaced by other JSON types,
JSONL lines replaced or the file cut after a line. Deterministic for a seed.

Used by ``test_import_fuzz`` (nothing but ``InputError`` ever escapes) and ``test_import_native``
(the compiled importers give what the interpreted ones give).
"""

import copy
import json
import random
import re
from pathlib import Path

from shared_data import TRAJECTORIES

from agentpost.trajectory.importing import iter_files

TESTS = Path(__file__).resolve().parents[1]
DATA = TRAJECTORIES  # ../shared/data/trajectories
SYNTHETIC = TESTS / "data" / "synthetic"
VALUES = [None, 1, "x", [], {}, 1.5, True, [1], {"a": 1}]


def _nodes(o, path=()):
    yield path
    children = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
    for k, v in children:
        yield from _nodes(v, (*path, k))


def mutate(doc, rng: random.Random):
    """One to three of ``doc``'s nodes deleted (object keys) or replaced by another JSON value."""
    paths = [p for p in _nodes(doc) if p]
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(paths)
        parent = doc
        try:
            for k in path[:-1]:
                parent = parent[k]
            if isinstance(parent, dict) and rng.random() < 0.4:
                del parent[path[-1]]
            else:
                parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))  # never a shared object
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation removed this path
    return doc


def json_files(dest: Path, n: int, seed: int = 1) -> list[Path]:
    """``n`` mutated copies of the JSON samples, each at its sample's relative path (the
    importers read companions and folder names) under ``dest/<i>/``."""
    rng = random.Random(seed)
    files = [p for p in iter_files([DATA]) if p.suffix in (".json", ".traj")]
    out = []
    for i in range(n):
        src = rng.choice(files)
        doc = mutate(json.loads(src.read_bytes()), rng)
        dst = dest / str(i) / src.relative_to(DATA)
        dst.parent.mkdir(parents=True)
        dst.write_text(json.dumps(doc))
        out.append(dst)
    return out


def _lines(path: Path) -> bool:
    """Whether every non-blank line of ``path`` is a JSON value (Entire stores a Gemini CLI
    session, one indented JSON document, as ``full.jsonl``)."""
    try:
        return all(json.loads(x) is not None for x in path.read_bytes().splitlines() if x.strip())
    except ValueError:
        return False


def jsonl_files(dest: Path, n: int, seed: int = 3) -> list[Path]:
    """``n`` mutated copies of the JSONL samples (Claude Code, Codex, OpenHands V1 and eval
    output, real and synthetic): one to three lines mutated, or the file cut after a line."""
    rng = random.Random(seed)
    files = [p for p in iter_files([DATA, SYNTHETIC]) if p.suffix == ".jsonl" and _lines(p)]
    parts = {part for p in files for part in p.parts}
    assert {"claude-code", "codex"} <= parts
    out = []
    for i in range(n):
        src = rng.choice(files)
        lines = [json.loads(x) for x in src.read_bytes().splitlines() if x.strip()]
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(lines))
            nested = isinstance(lines[k], dict | list) and lines[k]
            lines[k] = (
                mutate(lines[k], rng) if nested and rng.random() < 0.8 else rng.choice(VALUES)
            )
        if rng.random() < 0.2:
            lines = lines[: rng.randrange(1, len(lines) + 1)]
        dst = dest / str(i) / src.name
        dst.parent.mkdir(parents=True)
        dst.write_text("".join(json.dumps(x) + "\n" for x in lines))
        out.append(dst)
    return out


_DETAIL = re.compile(r" \((?:TypeError|AttributeError|KeyError|ValueError|IndexError): .*\)$")


def outcomes(paths: list[Path]) -> list[list]:
    """What importing each file gives: ``["ok", <canonical JSONL of its trajectories>]``,
    ``["skip", reason]`` or ``["error", where, message]``. The exception detail of the catch-all
    ("not a valid X file (TypeError: ...)") is cut: compiled code may name another exception."""
    from agentpost.errors import InputError
    from agentpost.trajectory.importers import NotATrajectory
    from agentpost.trajectory.importing import import_file
    from agentpost.trajectory.io import dumps

    out: list[list] = []
    for p in paths:
        try:
            out.append(["ok", b"".join(dumps(t) + b"\n" for t in import_file(p)).decode()])
        except NotATrajectory as e:
            out.append(["skip", str(e)])
        except InputError as e:
            out.append(["error", e.where, _DETAIL.sub("", e.message)])
    return out
