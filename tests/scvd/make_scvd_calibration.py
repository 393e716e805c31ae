"""Build src/agentpost/scvd/data/calibration.jsonl (run by hand, not a test).

    agentpost run --policy all -o /tmp/pol
    python tests/scvd/make_scvd_calibration.py /tmp/pol/trajectories.jsonl

Labels for the reference-policy trajectories follow from how each policy acts (the policies are
scripted, so the truth is known): the candidate is the call that writes and runs the first
solution script (``/tmp/agent/solution`` or ``/tmp/agent/candidate``), clean; ``hasty`` never
checks; the others run the task's check next, whose outcome is read from its recorded exit
status and output (printed below for a human to confirm). The edge cases carry the labels
written beside them in ``agentpost.scvd.examples``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from agentpost.scvd.examples import EDGE_CASES, edge_case, label
from agentpost.scvd.heuristic import call_views
from agentpost.trajectory.io import iter_jsonl

TASKS = ("c-fix-build", "extract-emails", "tar-backup", "rename-spaces", "fix-pagination")
OUT = Path(__file__).resolve().parents[2] / "src/agentpost/scvd/data/calibration.jsonl"


def policy_label(traj) -> dict:
    views = call_views(traj)
    k = next(i for i, v in enumerate(views) if "/tmp/agent/solution/solve.sh" in v.text
             or "/tmp/agent/candidate/solve.sh" in v.text)  # fmt: skip
    c = views[k]
    if traj.model == "scripted/hasty":
        return label(traj.id, traj.task_id, c.step, c.index, "clean", False, None)
    check = views[k + 1]
    print(f"{traj.id}: check exit {check.obs.exit_code}: {(check.obs.text or '')[:160]!r}")
    out = "supports_pass" if check.obs.exit_code == 0 else "exposes_error"
    return label(traj.id, traj.task_id, c.step, c.index, "clean", True, out)


def main(path: str) -> None:
    rows = []
    for traj in iter_jsonl(path):
        if traj.task_id in TASKS:
            rows.append((traj, policy_label(traj)))
    rows += [edge_case(name) for name in EDGE_CASES]
    with open(OUT, "wb") as f:
        for traj, lab in rows:
            order = [[v.step, v.index] for v in call_views(traj)]
            line = {**lab, "call_order": order, "trajectory": traj.model_dump(mode="json")}
            f.write(orjson.dumps(line) + b"\n")
    print(f"wrote {len(rows)} labelled trajectories to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
