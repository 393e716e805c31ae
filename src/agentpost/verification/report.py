"""Write a diagnosis run's outputs: ``metrics.json``, ``records.jsonl``, ``judge_answers.jsonl``
(every raw judge answer keyed by its request, replayable with a ``recorded`` judge) and a
readable ``summary.md``.

Files are written to a temporary name and renamed, so a killed run never leaves half a file.

Layer: io.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

SUMMARY_METRICS = ("ICA", "final_acc_all", "VTR", "VOR", "EDR", "ESP", "CPR", "VPR", "RSR",
                   "W2R", "R2W", "net_gain")  # fmt: skip


def _atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _jsonl(rows) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def _fmt(v) -> str:
    return "NA" if v is None else f"{100 * v:.1f}"


def summary_markdown(doc: dict[str, Any], heuristic_only: bool) -> str:
    m = doc["metrics"]
    cols = SUMMARY_METRICS
    out = ["# SCVD diagnosis", "",
           f"Judges: {', '.join(doc['judges']['ids'])} (arbiter {doc['judges']['arbiter']}); "
           f"prompt {doc['judges']['prompt_version']}.", ""]  # fmt: skip
    if heuristic_only:
        out += ["Note: every judge is a variant of the offline heuristic annotator. They share",
                "most rules, so their agreement overstates what independent judges would give;",
                "see `agentpost scvd calibrate` for the heuristic's measured accuracy.", ""]  # fmt: skip
    out += ["Metrics in % (per run, mean over runs, macro over models; NA = empty denominator).", "",
            "| model | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]  # fmt: skip
    for model, vals in m["per_model"].items():
        out.append(f"| {model} | " + " | ".join(_fmt(vals[c]) for c in cols) + " |")
    out.append("| **macro** | " + " | ".join(_fmt(m["macro"][c]) for c in cols) + " |")
    out += ["", "Coverage (pooled over runs):", "",
            "| model | trajectories | annotated | candidates | replays | valid replays |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    for model, c in m["coverage"].items():
        out.append(f"| {model} | {c['trajectories']} | {c['annotated']} | {c['candidates']} | "
                   f"{c['replays']} | {c['replays_valid']} |")  # fmt: skip
    p, r = doc["panel"], m["pearson_rsr_final_acc"]
    rs = "NA" if r["r"] is None else f"{r['r']:.2f}"
    out += ["", f"Panel: vote {_fmt(p['vote_rate'])}%, arbiter {_fmt(p['arbiter_rate'])}%, "
            f"unannotated {p['unannotated']}; three-way agreement B {_fmt(p['three_way_boundary'])}%, "
            f"S {_fmt(p['three_way_semantics'])}%.",
            f"Replay status: {doc['replay']['status']}.",
            f"Pearson r(RSR, final accuracy) over {r['n_models']} models: {rs}.", ""]  # fmt: skip
    return "\n".join(out)


def write_outputs(run_dir: Path, doc: dict, lines: list[dict], panel) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    _atomic(run_dir / "metrics.json", orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    _atomic(run_dir / "records.jsonl", _jsonl(lines))
    answers = []
    for line in lines:
        for jr in line["judges"]:
            for k, raw in zip(jr["request_keys"], jr["raw"], strict=False):
                if raw is not None:
                    answers.append(
                        {"judge": jr["judge"], "case_id": line["case_id"], "key": k, "raw": raw}
                    )
    _atomic(run_dir / "judge_answers.jsonl", _jsonl(answers))
    heuristic_only = all(j.fingerprint.get("kind") == "heuristic" for j in panel.judges)
    _atomic(run_dir / "summary.md", summary_markdown(doc, heuristic_only).encode())
