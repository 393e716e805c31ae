"""Build the report for any run directory: find the JSON each stage wrote, render what applies.

Files are recognised by their ``format`` field first (the table in ``documents.formats``: each
row names the report kind it feeds) and by their shape second, never by name,
so ``agentpost report`` works on a ``diagnose`` directory, a ``run`` directory, a saved
``efficiency --json`` output or a whole ``demo`` directory alike. Sections whose inputs are
absent say 'not run' instead of failing; a recognised file whose shape a section cannot read
costs that section only (it names the file and the error, and ``warn`` gets a line).

Layer: io.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from html import escape
from pathlib import Path
from typing import Any

from agentpost import __version__ as VERSION
from agentpost.documents.formats import producer
from agentpost.documents.write import atomic_write
from agentpost.errors import InputError
from agentpost.report import (
    efficiency,
    glance,
    joined,
    lab,
    rundata,
    runs,
    security,
    tokens,
    verdict_view,
    verification,
)
from agentpost.report.html import Section, cell, note, page, producer_line, table
from agentpost.report.palette import agent_colors
from agentpost.report.scan import KINDS, Found, classify_json, nothing_here, scan  # noqa: F401 (classify_json: its old home, until 0.3)
from agentpost.report.viewer_store import Shards


def _one(found: Found, kind: str) -> tuple[str, Any] | None:
    return found.files[kind][0] if found.files[kind] else None


def _overview(run_dir: Path, found: Found, sections: list[Section]) -> Section:
    def role(kind: str, label: str, single: bool, i: int) -> str:
        if i == 0 or not (single or kind == "efficiency"):
            return label
        if kind == "efficiency":
            return f"{label} (its entropy analyses are shown; the first file is shown in full)"
        return f"{label} (not shown: the first is used)"

    rows = [
        [rel, role(kind, label, single, i)]
        for kind, (label, single) in KINDS.items()
        for i, (rel, _) in enumerate(found.files[kind])
    ]
    rows += [[rel, "not recognised (ignored)"] for rel in found.unrecognised]
    rendered = ", ".join(s.title for s in sections if s.present) or "none"
    skipped = ", ".join(s.title for s in sections if not s.present) or "none"
    body = (
        f"<p>Run directory: <code>{escape(run_dir.name)}</code> (paths below are relative to "
        "it)</p>"
        f"<p>Sections with data: {escape(rendered)}. "
        f"Sections without data: {escape(skipped)}.</p>"
        + table(["file", "recognised as"], rows, left=2)
    )
    for rel, demo in found.files["demo"]:
        stages = demo.get("stages") or {}
        body += f"<h3>Demo stages ({escape(rel)}, {cell(demo.get('seconds'))} s)</h3>"
        body += table(
            ["stage", "status", "seconds", "error"],
            [[k, v.get("status"), v.get("seconds"), v.get("error")] for k, v in stages.items()],
        )
    prov = [
        producer_line(rel, d.get("producer"), d.get("format")) for rel, d in found.files["demo"]
    ]
    return Section("overview", "What this run directory holds", body, provenance=prov)


def _file_notes(found: Found) -> dict[str, str]:
    """An efficiency document's ``note`` applies to the trajectory files it was computed from
    (its ``producer.args.inputs``, relative to the run directory)."""
    notes = {}
    for _, doc in found.files["efficiency"]:
        if doc.get("note"):
            for rel in (doc.get("producer") or {}).get("args", {}).get("inputs") or []:
                notes[str(rel)] = str(doc["note"])
    return notes


def _guarded(key: str, title: str, kinds: tuple[str, ...], found: Found, fn) -> Section | None:
    """``fn()``, or, when a recognised file does not have the shape its kind needs, a section
    that names the files and the error instead of a traceback that loses the whole report."""
    try:
        return fn()
    except (TypeError, KeyError, AttributeError, ValueError, IndexError) as e:
        files = ", ".join(rel for k in kinds for rel, _ in found.files[k]) or "none"
        why = f"Could not render this section from {files}: {type(e).__name__}: {e}"
        found.problems.append(f"{title}: {why}")
        return Section(key, title, note(why, strong=True), present=False)


def build_sections(
    run_dir: Path, found: Found, shards: Shards, *, agents: list[str] | None = None,
    tasks: list[str] | None = None, progress: Any = None, compare_to: Path | None = None,
    compare_agents: tuple[str | None, str | None] = (None, None),
) -> list[Section]:  # fmt: skip
    """Every section of the report of ``run_dir``: its trajectories are read once, one at a
    time (only ``agents``' and ``tasks``' when given; ``progress`` sees each line), each one's
    viewer entry going to ``shards``. ``compare_to``: a second run directory (its compare
    section second)."""
    f, one = found.files, partial(_one, found)
    gather = joined.Gather(shards)
    data = rundata.from_found(run_dir, found, agents, tasks, on_trajectory=gather,
                              progress=progress)  # fmt: skip
    if progress is not None:
        progress.stage("rendering")
    with agent_colors(joined.agent_names(found, data, gather)):
        out = _sections(run_dir, found, data, gather, f, one)
        if compare_to is not None:
            out.insert(1, joined.compare_section(run_dir, compare_to, *compare_agents))
    return out


def _sections(run_dir: Path, found: Found, data, gather, f, one) -> list[Section]:
    try:
        top, cmp, view = joined.sections(run_dir, data, gather)
    except (TypeError, KeyError, AttributeError, ValueError, IndexError) as e:
        why = f"Could not build the verdict and the trajectory viewer: {type(e).__name__}: {e}"
        found.problems.append(why)
        top = Section("verdict", verdict_view.TITLE, note(why, strong=True), present=False)
        cmp, view = None, None
    sections = [
        _guarded("runs", runs.TITLE, ("run_summary",), found,
                 lambda: runs.render(f["run_summary"])),
        _guarded("tokens", tokens.TITLE, ("trajectories",), found,
                 lambda: tokens.render(gather.tokens, _file_notes(found))),
        _guarded("efficiency", efficiency.TITLE, ("efficiency", "advantages"), found,
                 lambda: efficiency.render(f["efficiency"], one("advantages"))),
        _guarded("verification", verification.TITLE, ("scvd_metrics", "scvd_records"), found,
                 lambda: verification.render(one("scvd_metrics"), one("scvd_records"))),
        _guarded("security", security.TITLE,
                 ("security_check", "security_summary", "security_attribute", "security_grade"),
                 found, lambda: security.render(one("security_check"), one("security_summary"),
                                                one("security_attribute"), f["security_grade"])),
    ]  # fmt: skip
    if f["lab_hero"] or f["lab_scvd"]:  # only lab folders have these; others get no lab section
        sections.append(_guarded("lab", lab.TITLE, ("lab_hero", "lab_scvd"), found,
                                 lambda: lab.render(one("lab_hero"), one("lab_scvd"))))  # fmt: skip
    glance_section = _guarded(
        "glance", glance.TITLE, ("efficiency", "scvd_metrics", "security_summary"), found,
        lambda: glance.render(one("efficiency"), one("scvd_metrics"), one("security_summary")),
    )  # fmt: skip
    head = [x for x in (top, glance_section, cmp) if x] + [_overview(run_dir, found, sections)]
    return [*head, *sections, *([view] if view else [])]


def _scripts(sections: list[Section]) -> list[tuple[str, str]]:
    from agentpost.report.viewer_script import SCRIPT, script_hash

    return [(SCRIPT, script_hash())] if any(s.key == "trajectories" and s.present
                                            for s in sections) else []  # fmt: skip


def render_run_dir(
    run_dir: str | Path,
    out: str | Path | None = None,
    warn: Callable[[str], None] | None = None,
    *,
    compare_to: str | Path | None = None,
    agents: tuple[str | None, str | None] = (None, None),
    only_agents: list[str] | None = None,
    only_tasks: list[str] | None = None,
    require: bool = False,
    progress: Any = None,
) -> Path:
    """Write ``report.html`` (or ``out``) for ``run_dir``; returns the path written. ``warn``
    gets one line per section that could not be rendered (the report says why, too).
    ``compare_to``: a second run directory; the report then has a compare section (this run is
    A, that one B; ``agents`` picks the agent of each side). ``only_agents``/``only_tasks``
    (``--agent``/``--task``) keep only those trajectories in the sections built from
    trajectories (verdict, tokens, viewer). ``require`` (the CLI): an ``InputError`` when the
    directory holds nothing the report reads. The page names no local path: the run directory by its name,
    files relative to it. ``progress``: see ``commands._progress`` (the run's trajectories are
    read once, one at a time; a large run's viewer data goes beside the page,
    ``viewer_store``)."""
    try:
        run_dir = Path(run_dir).resolve()
    except (RuntimeError, OSError) as e:  # a symlink loop
        raise InputError(run_dir, None, f"cannot resolve: {e}") from None
    out = Path(out) if out else run_dir / "report.html"
    if out.is_dir():  # `-o SOME_DIR`: the report goes inside it
        out = out / "report.html"
    found = scan(run_dir)
    if require and not any(found.files.values()):
        raise nothing_here(run_dir, found)
    shards = Shards(out)
    try:
        sections = build_sections(
            run_dir, found, shards, agents=only_agents, tasks=only_tasks, progress=progress,
            compare_to=None if compare_to is None else Path(compare_to).resolve(),
            compare_agents=agents,
        )  # fmt: skip
        for p in found.problems if warn else []:
            warn(p)
        made_by = producer(render_run_dir, run_dir=run_dir.name)
        html = page("agentpost report", f"{run_dir.name} · agentpost {VERSION}", sections,
                    made_by, scripts=_scripts(sections), own_files=shards.external)  # fmt: skip
        shards.install()  # the data first: a new page never points at a missing folder
        return atomic_write(out, html)
    finally:
        shards.discard()
