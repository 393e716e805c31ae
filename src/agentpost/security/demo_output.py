"""What a scripted security demo writes, in one place: `agentpost security demo` and the security
stage of `agentpost demo` both call ``write_demo`` on ``pipeline.scripted_demo``'s result.

Files under ``out``: ``trajectories.jsonl``, ``grades.jsonl``, ``annotations.jsonl``,
``labels.jsonl``, ``summary.json`` (``agentpost.security.demo-summary/1``: FuncPass/SecPass per
agent, the pooled per-CWE table, a per-agent per-CWE table and the attribution; the producer
arguments carry ``suite_hash``, the content hash of the task directories, so a rerun can tell the
suite did not change) and ``attribution.json`` (as ``agentpost security attribute`` prints it).

Layer: io.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json
from agentpost.security.metrics import per_cwe
from agentpost.security.model import SecurityTask
from agentpost.security.records import write_records

SUMMARY_FORMAT = fmt("agentpost.security.demo-summary")


def suite_hash(tasks: list[SecurityTask]) -> str:
    """A short hash of every file of the tasks' directories (names and bytes)."""
    h = hashlib.sha256()
    for t in tasks:
        for p in sorted(q for q in Path(t.path).rglob("*") if q.is_file()):
            h.update(str(p.relative_to(t.path)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def summary_doc(result: dict[str, Any], cwes: dict[str, list], digest: str) -> dict[str, Any]:
    """The demo summary: the pipeline's metrics, pooled ``per_cwe`` and attribution, plus
    per-agent per-CWE tables."""
    samples = [
        {"task": g["task_id"], "agent": t.agent, "func": g["func"], "sec": g["sec"],
         "cwes": cwes.get(g["task_id"], []), "aborted": g["aborted"]}
        for t, g in zip(result["trajectories"], result["grades"], strict=True)
    ]  # fmt: skip
    agents = sorted({str(s["agent"]) for s in samples})
    made_by = result["producer"]
    return {
        "format": SUMMARY_FORMAT,
        "producer": {**made_by, "args": {**made_by["args"], "suite_hash": digest}},
        "metrics": result["metrics"],
        "per_cwe": result["per_cwe"],
        "per_agent_cwe": {a: per_cwe([s for s in samples if s["agent"] == a]) for a in agents},
        "attribution": result["attribution"],
    }


def write_demo(out: Path, result: dict[str, Any], tasks: list[SecurityTask]) -> dict[str, Any]:
    """Write every file of the module docstring under ``out``; returns the summary document."""
    from agentpost.trajectory.io import write_jsonl

    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "trajectories.jsonl", result["trajectories"])
    for name in ("grades", "annotations", "labels"):
        write_records(out / f"{name}.jsonl", result[name])
    from agentpost.security.attribution import attribute

    attribution = result["attribution"]
    write_json(out / "attribution.json", {
        **attribution,
        "producer": producer(attribute, labels="labels.jsonl", agent_a=attribution.get("agent_a"),
                             agent_b=attribution.get("agent_b")),
    }, default=str)  # fmt: skip
    doc = summary_doc(result, {t.id: list(t.cwes) for t in tasks}, suite_hash(tasks))
    write_json(out / "summary.json", doc, default=str)
    return doc
