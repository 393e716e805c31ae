"""Golden outputs of the importers: a small digest of every trajectory imported from the test
data, one JSONL file per format under ``tests/trajectory/golden/``.

Each line says what a reader checks by hand (turns, tool calls by kind, exit codes, the token
totals, the outcome) plus the sha256 of the whole canonical line, so any change to an importer
shows up as a golden diff: a readable one when a figure moves, the hash when only text does.
Regenerate with ``python scripts/regen_golden.py`` and review the diff before committing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
from shared_data import TRAJECTORIES

from agentpost.trajectory.importing import import_paths
from agentpost.trajectory.io import dumps

TESTS = Path(__file__).resolve().parents[1]
# real files in ../shared/data/trajectories, ours in tests/data/synthetic: a digest names a file
# by its path under the folder above each ("trajectories/..." or "synthetic/...")
SOURCES = [TRAJECTORIES, TESTS / "data" / "synthetic"]
GOLDEN = Path(__file__).resolve().parent / "golden"


def _digest(t, root: Path) -> dict:
    src = Path(t.source.path).resolve()
    rel = src.relative_to(root).as_posix() if src.is_relative_to(root) else src.name
    t.source.path = rel
    # the hash must not depend on where the checkout lives (paths also sit in outcome details)
    line = dumps(t).replace(f"{root}/".encode(), b"")
    tot = t.totals
    return {
        "source": rel,
        "record": t.source.record,
        "id": t.id,
        "task_id": t.task_id,
        "agent": t.agent,
        "model": t.model,
        "turns": tot.turns,
        "tool_calls": tot.tool_calls,
        "calls": [[f"{c.kind}:{c.name}" for c in tt.tool_calls] for tt in t.turns],
        "exit_codes": [o.exit_code for tt in t.turns for o in tt.observations],
        "errors": sum(bool(o.is_error) for tt in t.turns for o in tt.observations),
        "tokens": [tot.input_tokens, tot.cached_tokens, tot.output_tokens, tot.reasoning_tokens],
        "usage": [tot.usage_source, tot.partial, tot.unknown],
        "outcome": [
            t.outcome.resolved,
            t.outcome.reward,
            t.outcome.evaluator,
            len(t.outcome.tests),
        ],
        "sha256": hashlib.sha256(line).hexdigest(),
    }


def compute() -> dict[str, list[dict]]:
    """format → digests, sorted by source and id."""
    out: dict[str, list[dict]] = {}
    for base in SOURCES:
        root = base.parent
        report = import_paths([base])
        if report.errors:
            raise RuntimeError(report.errors[0].one_line())
        for t in report.trajectories:
            out.setdefault(t.source.format, []).append(_digest(t, root))
    for rows in out.values():
        rows.sort(key=lambda r: (r["source"], r["record"] or "", r["id"]))
    return out


def render(rows: list[dict]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def write(out: dict[str, list[dict]]) -> list[Path]:
    GOLDEN.mkdir(exist_ok=True)
    for stale in GOLDEN.glob("*.jsonl"):
        if stale.stem not in out:
            stale.unlink()
    paths = []
    for fmt, rows in sorted(out.items()):
        path = GOLDEN / f"{fmt}.jsonl"
        path.write_bytes(render(rows))
        paths.append(path)
    return paths
