"""Write a diagnosis run's outputs, as ``collect_out`` writes a collection's: ``metrics.json``,
``records.jsonl``, ``judge_answers.jsonl`` (every raw judge answer keyed by its request,
replayable with a ``recorded`` judge) and a readable ``summary.md``. (The report's SCVD section
is ``report.verification``.)

Files are written with ``documents.write.atomic_write``, so a killed run never leaves half a file.
``metrics_text`` and ``calibration_text`` are the plain-text forms of ``agentpost scvd metrics``
and ``agentpost scvd calibrate``.

Layer: io.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agentpost.documents.write import atomic_write

SUMMARY_METRICS = ("ICA", "final_acc_all", "VTR", "VOR", "EDR", "ESP", "CPR", "VPR", "RSR",
                   "W2R", "R2W", "net_gain")  # fmt: skip


def _jsonl(rows) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def _fmt(v) -> str:
    return "NA" if v is None else f"{100 * v:.1f}"


def _pct(v) -> str:
    return "NA" if v is None else f"{100 * v:.1f}%"


def _fmt_ci(ci) -> str:
    return "NA" if ci is None else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}"


def _incomplete(doc: dict[str, Any]) -> list[str]:
    """Warnings for work a rerun of the same command would retry (nothing of it was cached)."""
    failed = sum(n for st in doc["judges"]["status"].values()
                 for s, n in st.items() if s in ("infra_error", "budget"))  # fmt: skip
    rep = doc["replay"]["status"]
    retry = sum(n for s, n in rep.items() if s in ("infra_error", "task_missing"))
    out = []
    if failed:
        out.append(f"INCOMPLETE: {failed} judge results are endpoint failures or over budget "
                   "(counted as abstentions here); rerun the same command to ask again.")  # fmt: skip
    if retry:
        out.append(f"INCOMPLETE: {retry} replays could not run (infrastructure error or task "
                   "missing from the suite); their y_c is null.")  # fmt: skip
    missing = doc["replay"].get("missing_tasks") or []
    if missing:
        shown = ", ".join(repr(t) for t in missing[:5]) + (", ..." if len(missing) > 5 else "")
        out.append(f"Tasks not in the suite ({len(missing)}): {shown}; pass the suite that holds "
                   "them with --suite.")  # fmt: skip
    return out


def summary_markdown(doc: dict[str, Any]) -> str:
    """The readable ``summary.md``: caveats first, then metrics with macro CIs, coverage, panel."""
    m, cols = doc["metrics"], SUMMARY_METRICS
    out = ["# SCVD diagnosis", "",
           f"Judges: {', '.join(doc['judges']['ids'])} (arbiter {doc['judges']['arbiter']}); "
           f"prompt {doc['judges']['prompt_version']}.", ""]  # fmt: skip
    caveat = doc["producer"].get("caveat")
    out += [f"Note: {caveat}", ""] if caveat else []
    out += [f"{w}\n" for w in _incomplete(doc)]
    out += ["Metrics in % (per run, mean over runs, macro over models; NA = empty denominator).", "",
            "| model | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]  # fmt: skip
    for model, vals in m["per_model"].items():
        out.append(f"| {model} | " + " | ".join(_fmt(vals[c]) for c in cols) + " |")
    out.append("| **macro** | " + " | ".join(_fmt(m["macro"][c]) for c in cols) + " |")
    if "cis" in m:
        ci = m["cis"]["macro"]
        out.append("| macro 95% CI | " + " | ".join(_fmt_ci(ci[c]) for c in cols) + " |")
        out += ["", f"CI: percentile bootstrap over trajectories within each run "
                f"({m['cis']['n_boot']} replicates, seed {m['cis']['seed']})."]  # fmt: skip
    out += ["", "Coverage (pooled over runs):", "",
            "| model | trajectories | annotated | candidates | replays | valid replays |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for model, c in m["coverage"].items():
        out.append(f"| {model} | {c['trajectories']} | {c['annotated']} | {c['candidates']} "
                   f"({_pct(c['candidate_rate'])}) | {c['replays']} | {c['replays_valid']} "
                   f"({_pct(c['replay_valid_rate'])}) |")  # fmt: skip
    p, r = doc["panel"], m["pearson_rsr_final_acc"]
    rs = "NA" if r["r"] is None else f"{r['r']:.2f}"
    out += ["", f"Panel: vote {_pct(p['vote_rate'])}, arbiter {_pct(p['arbiter_rate'])}, "
            f"unannotated {p['unannotated']}; three-way agreement B {_pct(p['three_way_boundary'])}, "
            f"S {_pct(p['three_way_semantics'])}.",
            f"Replay status: {doc['replay']['status']}.",
            *_snapshot_lines(doc["replay"]),
            f"Pearson r(RSR, final accuracy) over {r['n_models']} models: {rs}.", ""]  # fmt: skip
    return "\n".join(out)


def _snapshot_lines(rep: dict[str, Any]) -> list[str]:
    """Which state gave y_c (recorded snapshot or replay) and how often replay agreed with the
    snapshots where both exist; nothing for runs recorded without snapshots."""
    src = rep.get("source") or {}
    fid = rep.get("snapshot_fidelity") or {}
    untrusted, conflicts = (
        rep.get("snapshot_untrusted", 0),
        (rep.get("status") or {}).get("state_conflict", 0),
    )
    if not src.get("snapshot") and not untrusted:
        return []
    line = (f"Candidate states: {src.get('snapshot', 0)} from recorded snapshots, "
            f"{src.get('replay', 0)} by replay.")  # fmt: skip
    if untrusted:
        line += (f" {untrusted} recorded snapshots were not believed (the run's manifest or the "
                 "archive did not check out; see snapshot_untrusted) and were replayed.")  # fmt: skip
    if conflicts:
        line += (f" {conflicts} snapshots gave another verdict than their replay: state_conflict, "
                 "left out of y_c.")  # fmt: skip
    if fid.get("compared"):
        line += (f" Replay checked against the snapshots: y_c agrees in {fid['y_c_agree']}/"
                 f"{fid['y_c_compared']}, files agree in {fid['files_agree']}/"
                 f"{fid['files_compared']}.")  # fmt: skip
    return [line]


def metrics_text(m: dict[str, Any]) -> str:
    """``scvd metrics`` without ``--json``: tab-separated %, one row per model, macro and its CI."""
    cols = SUMMARY_METRICS
    out = ["model\t" + "\t".join(cols)]
    for model, vals in [*m["per_model"].items(), ("macro", m["macro"])]:
        out.append(model + "\t" + "\t".join(_fmt(vals[c]) for c in cols))
    if "cis" in m:
        out.append("macro 95% CI\t" + "\t".join(_fmt_ci(m["cis"]["macro"][c]) for c in cols))
    return "\n".join(out) + "\n"


def _span(ci: list[float] | None) -> str:
    return "NA" if ci is None else f"{100 * ci[0]:.0f}–{100 * ci[1]:.0f}"


def calibration_text(doc: dict[str, Any]) -> str:
    """``scvd calibrate`` without ``--json``: every number the JSON has, in %."""
    lab = doc["labels"]
    extra = f", split {lab['split']}" if lab.get("split", "all") != "all" else ""
    if lab.get("missing_files"):
        extra += f"; {lab['missing_files']} labelled files not found under the data roots, skipped"
    for batch, n in sorted((lab.get("withheld") or {}).items()):
        extra += f"; {n} labels of {batch} withheld (held out, not scored yet)"
    out = [
        f"labels: {lab['path']} ({lab['n']} trajectories, {3 * lab['n']} pooled decisions{extra})",
        "",
    ]
    if doc.get("seats"):
        out.append("seats: " + ", ".join(f"{k} ({v})" for k, v in doc["seats"].items()))
        out.append("")
    out.append("judge\tpooled\tstrict\tI_c\tI_v\tz\tboundary exact\t±1 call\tabstained")
    for name, r in [*doc["judges"].items(), *doc.get("panels", {}).items()]:
        f = r["per_field"]
        vals = [r["pooled_accuracy"], r["strict_accuracy"], f["candidate_formed"],
                f["verification_triggered"], f["z"], r["boundary_exact"], r["boundary_within_1"]]  # fmt: skip
        out.append("\t".join([name, *map(_fmt, vals), str(r["abstained"])]))
    out += ["", "95% Wilson intervals (pooled | I_c | I_v | z | boundary exact | ±1 call)"]
    for name, r in [*doc["judges"].items(), *doc.get("panels", {}).items()]:
        ci = r.get("ci95") or {}
        f = ci.get("per_field", {})
        spans = [ci.get("pooled_accuracy"), f.get("candidate_formed"), f.get("verification_triggered"),
                 f.get("z"), ci.get("boundary_exact"), ci.get("boundary_within_1")]  # fmt: skip
        out.append(f"{name}\t" + " | ".join(_span(x) for x in spans))
    for name, r in doc["judges"].items():
        conf = r["z_confusion"]
        cols = list(next(iter(conf.values())))
        out += ["", f"z confusion for {name} (rows: label, columns: judge)",
                "label\\judge\t" + "\t".join(cols)]  # fmt: skip
        out += [f"{z}\t" + "\t".join(str(row[c]) for c in cols) for z, row in conf.items()]
    alpha = {k: "NA" if v is None else f"{v:.3f}" for k, v in doc["krippendorff_alpha"].items()}
    for name, r in doc.get("panels", {}).items():
        a = r.get("agreement")
        if a:
            out += ["", f"agreement in {name}: three-way on the boundary {_fmt(a['three_way_boundary'])}, "
                    f"on the semantics {_fmt(a['three_way_semantics'])}; resolved by vote "
                    f"{_fmt(a['vote_rate'])}, by the arbiter {_fmt(a['arbiter_rate'])}, unannotated "
                    f"{a['unannotated']}"]  # fmt: skip
            if a.get("alpha"):
                seat_alpha = {k: "NA" if v is None else f"{v:.3f}" for k, v in a["alpha"].items()}
                out.append(f"Krippendorff's alpha among its seats (nominal): {seat_alpha}")
    out += ["", f"Krippendorff's alpha (nominal): {alpha}",
            f"arbiter (highest pooled accuracy): {doc['arbiter']}", ""]  # fmt: skip
    return "\n".join(out)


def write_outputs(run_dir: Path, doc: dict, lines: list[dict]) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(run_dir / "metrics.json", orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    atomic_write(run_dir / "records.jsonl", _jsonl(lines))
    answers = []
    for line in lines:
        for jr in line["judges"]:
            for k, raw in zip(jr["request_keys"], jr["raw"], strict=False):
                if raw is not None:
                    answers.append(
                        {"judge": jr["judge"], "case_id": line["case_id"], "key": k, "raw": raw}
                    )
    atomic_write(run_dir / "judge_answers.jsonl", _jsonl(answers))
    atomic_write(run_dir / "summary.md", summary_markdown(doc).encode())
