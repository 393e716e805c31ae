"""The report sections built from the joined run data (``report.rundata``): the verdict, the
comparisons (of this run's agents, or against a second run) and the trajectory viewer; and the
agent names the report colours.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentpost.report import rundata, verdict, verdict_view, viewer
from agentpost.report.html import Section


def viewer_section(data: rundata.RunData, shards: Any) -> Section:
    """The trajectory viewer of ``data``: every trajectory's full entry goes to ``shards``
    (``viewer_store.Shards``), its index row stays here."""
    metas, agents = [], []
    for t in data.trajectories:
        row = data.rows.get(t.id) or {}
        rec = data.records.get(t.id)
        shards.add(viewer.entry(t, row, rec, data.advantages.get(t.id)))
        metas.append(viewer.meta(t, row, rec))
        agents.append(str(row.get("agent") or t.model or ""))
    shards.finish()
    where = shards.name if shards.external else None
    index = viewer.index(metas, agents, shards.places, shards.digests, where)
    return viewer.render(len(metas), shards.html(index), where)


def sections(run_dir: Path, found: Any, shards: Any) -> list[Section | None]:
    """From the joined run data: the verdict (first), the comparison of this run's agents
    against its best agent, and the trajectory viewer (last; its data goes to ``shards``)."""
    from agentpost.report.compare import compare
    from agentpost.report.compare_view import section as compare_section_of
    from agentpost.report.viewer_script import CSS

    data = rundata.from_found(run_dir, found)
    # commands name files relative to the folder holding the run directory (no local paths)
    rows = [dict(r, file=f"{run_dir.name}/{r['file']}" if r.get("file") else None)
            for r in data.rows.values()]  # fmt: skip
    doc = verdict.verdict(rows, data.records, data.grades, suite=data.suite)
    view = viewer_section(data, shards)
    view.css = CSS
    docs = [compare(a, b, n_boot=500) for a, b in rundata.within_run_pairs(data)]
    cmp = compare_section_of(docs, title="Compare the agents of this run: B − A against the "
                             "best agent (terminal: highest resolution, then fewest tokens; security: highest SecPass)",
                             key="compare-agents")  # fmt: skip
    return [verdict_view.section(doc), cmp, view]


def compare_section(run_a: Path, run_b: Path, agent_a: str | None, agent_b: str | None) -> Section:
    """The compare section for ``run_a`` (A) against ``run_b`` (B); see ``report.compare``."""
    from agentpost.report.compare import compare
    from agentpost.report.compare_view import section

    a, b = rundata.load(run_a), rundata.load(run_b)
    docs = [compare(x, y) for x, y in rundata.pairs(a, b, agent_a, agent_b)]
    return section(docs)  # type: ignore[return-value]


def agent_names(found: Any) -> list[str]:
    """Every agent or model name the report may chart, so each keeps one colour throughout."""
    names = {str(t.model or t.agent) for _, ts in found.files["trajectories"] for t in ts}
    for _, doc in found.files["efficiency"]:
        models = doc.get("models")
        if isinstance(models, list):  # a file of the wrong shape costs its section only
            names |= {str(m.get("model")) for m in models if isinstance(m, dict)}
    for _, doc in found.files["security_summary"]:
        if isinstance(doc.get("metrics"), dict):
            names |= {str(a) for a in doc["metrics"]}
    return sorted(names)
