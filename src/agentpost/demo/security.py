"""The demo's SecureVibe stage: both scripted security agents (secure-minded, functional-only)
over the bundled security suite, through the functions ``agentpost security demo`` calls
(``security.pipeline.scripted_demo``: run, grade, annotate, attribute; ``security.demo_output.
write_demo``: the files, under ``security/``). Recomputed when the suite changes, skipped
otherwise (keyed by the suite's content hash in ``summary.json``).

Layer: io.
"""

from __future__ import annotations

import orjson

from agentpost.demo.model import Demo


def stage_security(d: Demo) -> None:
    """``agentpost security demo``'s functions: ``scripted_demo``, then ``write_demo``."""
    from agentpost.security.demo_output import suite_hash, write_demo
    from agentpost.security.pipeline import scripted_demo
    from agentpost.security.suite import load_suite

    tasks = load_suite()[: d.limit]
    digest = suite_hash(tasks)
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
    doc = write_demo(d.out / "security", scripted_demo(tasks, d.box, workers=2), tasks)
    d.progress(
        "security: "
        + ", ".join(
            f"{a} FuncPass={m['func_pass']:.2f} SecPass={m['sec_pass']:.2f}"
            for a, m in doc["metrics"].items()
            if m.get("func_pass") is not None
        )
    )
