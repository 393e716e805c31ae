"""The demo's SecureVibe stage: both scripted security agents (secure-minded, functional-only)
over the bundled security suite (``security.pipeline.scripted_demo``, what ``agentpost security
demo`` calls: run, grade, annotate, attribute); writes what ``agentpost security demo`` writes
(``trajectories.jsonl``, ``grades.jsonl``, ``annotations.jsonl``, ``labels.jsonl``,
``summary.json`` with FuncPass/SecPass, per-CWE tables and attribution; ours adds per-agent
per-CWE tables) plus ``attribution.json`` as ``agentpost security attribute`` prints it.
Recomputed when the suite changes, skipped otherwise (keyed by the suite's content hash in
``summary.json``).

Layer: io.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from agentpost import __version__
from agentpost.demo.files import write_json, write_lines
from agentpost.demo.pipeline import Demo

SUMMARY_FORMAT = "agentpost.security.demo-summary/1"


def _suite_hash(tasks: list[Any]) -> str:
    h = hashlib.sha256()
    for t in tasks:
        for p in sorted(q for q in Path(t.path).rglob("*") if q.is_file()):
            h.update(str(p.relative_to(t.path)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def summary_doc(result: dict[str, Any], cwes: dict[str, list], suite_hash: str) -> dict[str, Any]:
    """``agentpost security demo``'s summary plus per-agent per-CWE tables (the pipeline's own
    ``per_cwe`` pools the agents)."""
    from agentpost.security.metrics import per_cwe

    samples = [
        {
            "task": g["task_id"],
            "agent": t.agent,
            "func": g["func"],
            "sec": g["sec"],
            "cwes": cwes.get(g["task_id"], []),
            "aborted": g["aborted"],
        }
        for t, g in zip(result["trajectories"], result["grades"], strict=True)
    ]
    agents = sorted({str(s["agent"]) for s in samples})
    producer = result["producer"]
    return {
        "format": SUMMARY_FORMAT,
        "producer": {**producer, "args": {**producer["args"], "suite_hash": suite_hash}},
        "metrics": result["metrics"],
        "per_cwe": result["per_cwe"],
        "per_agent_cwe": {a: per_cwe([s for s in samples if s["agent"] == a]) for a in agents},
        "attribution": result["attribution"],
    }


def stage_security(d: Demo) -> None:
    """``agentpost security demo``'s function, plus per-agent tables and the attribution."""
    from agentpost.security.pipeline import scripted_demo
    from agentpost.security.suite import load_suite
    from agentpost.trajectory.io import write_jsonl

    tasks = load_suite()[: d.limit]
    digest = _suite_hash(tasks)
    summary_path = d.out / "security" / "summary.json"
    if summary_path.exists():
        old = orjson.loads(summary_path.read_bytes())
        if old.get("producer", {}).get("args", {}).get("suite_hash") == digest:
            d.progress("security: up to date")
            return
    d.progress(
        f"security: 2 scripted agents x {len(tasks)} tasks, graded with exploit tests in "
        f"{d.backend} sandboxes"
    )
    result = scripted_demo(tasks, d.box, workers=2)
    sec = d.out / "security"
    write_jsonl(sec / "trajectories.jsonl", result["trajectories"])
    for name in ("grades", "annotations", "labels"):
        write_lines(sec / f"{name}.jsonl", result[name])
    attribution = {
        **result["attribution"],
        "producer": {
            "name": "agentpost security attribute",
            "version": __version__,
            "args": {
                "labels": "security/labels.jsonl",
                "agent_a": result["attribution"].get("agent_a"),
                "agent_b": result["attribution"].get("agent_b"),
            },
        },
    }
    write_json(sec / "attribution.json", attribution)
    doc = summary_doc(result, {t.id: list(t.cwes) for t in tasks}, digest)
    write_json(summary_path, doc)
    d.progress(
        "security: "
        + ", ".join(
            f"{a} FuncPass={m['func_pass']:.2f} SecPass={m['sec_pass']:.2f}"
            for a, m in doc["metrics"].items()
            if m.get("func_pass") is not None
        )
    )
