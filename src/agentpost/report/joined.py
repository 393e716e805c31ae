"""The report sections built from the joined run data (``report.rundata``): the verdict, the
comparisons (of this run's agents, or against a second run) and the trajectory viewer; and the
agent names the report colours.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentpost.intervals import RESAMPLES, UNKNOWN
from agentpost.report import rundata, verdict, verdict_view, viewer
from agentpost.report.html import Section
from agentpost.trajectory.model import Trajectory


class Gather:
    """What the report keeps of each trajectory as the run streams past
    (``rundata.from_found(..., on_trajectory=gather)``): its viewer entry, written to
    ``shards`` at once, and its index row; its row of the token section; its model's name."""

    def __init__(self, shards: Any) -> None:
        from agentpost.report.tokens import TokenStats

        self.shards = shards
        self.metas: list[dict[str, Any]] = []
        self.tokens = TokenStats()
        self.names: set[str] = set()

    def __call__(self, rel: str, t: Trajectory, row: dict[str, Any], data: Any) -> None:
        rec = data.records.get(t.id)
        self.shards.add(viewer.entry(t, row, rec, data.advantages.get(t.id)))
        self.metas.append(viewer.meta(t, row, rec))
        self.tokens.add(rel, t)
        self.names.add(t.model or t.agent or UNKNOWN)


def viewer_section(data: rundata.RunData, gather: Gather) -> Section:
    """The trajectory viewer: the index of every trajectory gathered; their entries are in
    ``gather.shards``."""
    from agentpost.report.viewer_script import CSS

    shards = gather.shards
    shards.finish()
    agents = [data.labels.get(m["id"], "") for m in gather.metas]
    where = shards.name if shards.external else None
    index = viewer.index(gather.metas, agents, shards.places, shards.digests, where)
    view = viewer.render(len(gather.metas), shards.html(index), where)
    view.css = CSS
    return view


def sections(run_dir: Path, data: rundata.RunData, gather: Gather) -> list[Section | None]:
    """From the joined run data: the verdict (first), the comparison of this run's agents
    against its best agent, and the trajectory viewer (last)."""
    from agentpost.report.compare import compare
    from agentpost.report.compare_view import section as compare_section_of

    # commands name files relative to the folder holding the run directory (no local paths)
    rows = [dict(r, file=f"{run_dir.name}/{r['file']}" if r.get("file") else None)
            for r in data.rows.values()]  # fmt: skip
    doc = verdict.verdict(rows, data.records, data.grades, suite=data.suite)
    view = viewer_section(data, gather)
    docs = [compare(a, b, n_boot=RESAMPLES) for a, b in rundata.within_run_pairs(data)]
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


def agent_names(found: Any, data: rundata.RunData | None, gather: Gather) -> list[str]:
    """Every agent or model name the report may chart, so each keeps one colour throughout:
    the trajectories' models (or scaffolds), their agent labels, the efficiency documents'
    models and the security summaries' agents."""
    names = set(gather.names) | (set(data.labels.values()) if data else set())
    for _, doc in found.files["efficiency"]:
        models = doc.get("models")
        if isinstance(models, list):  # a file of the wrong shape costs its section only
            names |= {UNKNOWN if m.get("model") is None else str(m.get("model"))
                      for m in models if isinstance(m, dict)}  # fmt: skip
    for _, doc in found.files["security_summary"]:
        if isinstance(doc.get("metrics"), dict):
            names |= {str(a) for a in doc["metrics"]}
    return sorted(names)
