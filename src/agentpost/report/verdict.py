"""The verdict: per agent, the behaviours that cost it most and the training signal to build next.

Inputs are the joined rows of ``report.rundata`` (one efficiency row per trajectory with its
``agent``, ``turn_flags`` and ``turn_tokens``), the SCVD record lines, and the security grades.

Per agent and HERO behaviour (spec b.8: repeated call, over-exploration, tool error):

- ``token_share``: tokens of the turns with the behaviour / all tokens of the agent (what it
  costs), with a bootstrap 95% interval over trajectories; the share of turns when no turn
  reports tokens;
- ``prevalence``: the share of trajectories with at least one such turn;
- ``resolved_diff``: resolution rate with the behaviour minus without it (a risk difference,
  bootstrap interval; NA when every or no trajectory shows it). It is an association, not an
  effect the behaviour causes.

Behaviours are ranked by token share. SCVD adds two gaps from the judged records: candidates
left unverified (I_c = 1, I_v = 0) and wrong candidates whose verification did not flag an error
(y_c = 0, z ≠ error). Security adds the security gap FuncPass − SecPass. What to build next is
``report.advice``'s rule (the largest gap the data measured and can act on; a gap not measured
says so and names the command that measures it).

Intervals (``agentpost.intervals``): rates (resolution, the SCVD shares, FuncPass, SecPass) get
Wilson intervals, the resolved-with-minus-without difference Newcombe's; token shares and mean
tokens a bootstrap over trajectories. Below ``intervals.MIN_N`` units, or at zero width, there
is no interval and ``*_ci_note`` says why.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agentpost.intervals import RESAMPLES
from agentpost.report import advice
from agentpost.report.stats import mean_columns, rate_ci, ratio, risk_difference, sums_ci

FORMAT = "agentpost.verdict/1"
BEHAVIOURS = {
    "repeated_call": ("R", "repeated calls",
                      "a tool call repeats an earlier one with no file written in between"),
    "over_exploration": ("O", "over-exploration",
                         "part of a run of 15 or more read-only turns without an edit"),
    "tool_error": ("E", "tool errors",
                   "a call failed (error output, a non-zero exit or a timeout), other than a run "
                   "of a script the agent wrote (a check run, failing by design)"),
}  # fmt: skip
MIN_GAP = advice.MIN_GAP
MIN_COVERAGE = 0.9  # shares are of tokens only when this share of turns reports its tokens


def token_coverage(rows: list[dict[str, Any]]) -> float:
    """The share of turns with a token count (a log with run totals only has none)."""
    toks = [t for r in rows for t in r.get("turn_tokens") or []]
    return sum(t is not None for t in toks) / len(toks) if toks else 0.0


UNPRODUCTIVE = "ROE"  # any of the three: the turn is unproductive (read-only alone is not)


def flag_columns(rows: list[dict[str, Any]], letters: str, tokens: bool) -> np.ndarray:
    """(n, 2) per trajectory: [tokens (or turns) of the turns flagged with any of ``letters``,
    all tokens (or turns)]; turns without a token count are left out of the token sums."""
    out = np.zeros((len(rows), 2))
    for i, r in enumerate(rows):
        toks = r.get("turn_tokens") or []
        for k, f in enumerate(r.get("turn_flags") or []):
            w = (toks[k] if k < len(toks) else None) if tokens else 1
            if w is not None:
                out[i, 1] += w
                out[i, 0] += w if any(c in f for c in letters) else 0
    return out


def _examples(rows: list[dict[str, Any]], letter: str, n: int = 3) -> list[dict[str, Any]]:
    """The trajectories that spent most tokens on the behaviour, with their first such turn."""
    scored = []
    for r in rows:
        turns = [i for i, f in enumerate(r.get("turn_flags") or []) if letter in f]
        if turns:
            toks = r.get("turn_tokens") or []
            spent = sum(toks[i] or 0 for i in turns if i < len(toks))
            scored.append((-spent, -len(turns), str(r["id"]), turns[0], len(turns)))
    return [{"id": i, "turn": t, "turns": k} for _, _, i, t, k in sorted(scored)[:n]]


def behaviour(rows: list[dict[str, Any]], kind: str, *, n_boot: int, seed: int) -> dict:
    letter, label, explain = BEHAVIOURS[kind]
    has_tokens = token_coverage(rows) >= MIN_COVERAGE
    share = sums_ci(flag_columns(rows, letter, has_tokens), ratio, n_boot=n_boot, seed=seed)
    with_b = [
        bool(r["resolved"])
        for r in rows
        if r.get("resolved") is not None and letter in "".join(r.get("turn_flags") or [])
    ]
    without = [bool(r["resolved"]) for r in rows
               if r.get("resolved") is not None and letter not in "".join(r.get("turn_flags") or [])]  # fmt: skip
    hit = sum(letter in "".join(r.get("turn_flags") or []) for r in rows)
    return {
        "kind": kind,
        "label": label,
        "explain": explain,
        "share_of": "tokens" if has_tokens else "turns",
        "share": share["value"],
        "share_ci": share["ci"],
        "share_ci_note": share["ci_note"],
        "prevalence": hit / len(rows) if rows else None,
        "resolved_diff": risk_difference(with_b, without, n_boot=n_boot, seed=seed),
        "examples": _examples(rows, letter),
    }


def _scvd(rows: list[dict[str, Any]], records: dict[str, dict], n_boot: int, seed: int):
    recs = [records[r["id"]] for r in rows if r["id"] in records]
    items = [dict(rec.get("record") or {}, id=rec.get("case_id"),
                  step=(rec.get("decision") or {}).get("candidate_step")) for rec in recs]  # fmt: skip
    if not items:
        return None
    cands = [dict(i, unverified=int(i.get("I_v") is False)) for i in items if i.get("I_c")]
    wrong = [dict(i, missed=int(i.get("z") != "error")) for i in cands if i.get("y_c") == 0]
    unv = rate_ci(sum(i["unverified"] for i in cands), len(cands), "candidates")
    mis = rate_ci(sum(i["missed"] for i in wrong), len(wrong), "wrong candidates")

    def ex(pool: list[dict], key: str) -> list[dict]:
        return [{"id": i["id"], "turn": i.get("step")} for i in pool if i.get(key)][:3]

    return {
        "records": len(items),
        "candidates": len(cands),
        "unverified": unv["value"], "unverified_ci": unv["ci"],
        "unverified_ci_note": unv["ci_note"],
        "wrong_candidates": len(wrong),
        "missed_errors": mis["value"], "missed_errors_ci": mis["ci"],
        "missed_errors_ci_note": mis["ci_note"],
        "examples_unverified": ex(cands, "unverified"),
        "examples_missed": ex(wrong, "missed"),
    }  # fmt: skip


def terminal_agent(rows, records, *, n_boot: int = RESAMPLES, seed: int = 0) -> dict[str, Any]:
    known = [bool(r["resolved"]) for r in rows if r.get("resolved") is not None]
    res = rate_ci(sum(known), len(known), "runs")
    tok = sums_ci(mean_columns([r.get("tokens") for r in rows]), ratio, n_boot=n_boot, seed=seed)
    behaviours = [behaviour(rows, k, n_boot=n_boot, seed=seed) for k in BEHAVIOURS]
    behaviours.sort(key=lambda b: -(b["share"] or 0.0))
    unprod = {"value": float(ratio(flag_columns(rows, UNPRODUCTIVE, False).sum(axis=0))) or 0.0}
    unprod["value"] = None if not rows or np.isnan(unprod["value"]) else unprod["value"]
    scvd = _scvd(rows, records, n_boot, seed)
    with_tokens = ratio(flag_columns(rows, UNPRODUCTIVE, True).sum(axis=0))
    if token_coverage(rows) < MIN_COVERAGE or np.isnan(with_tokens):
        with_tokens = np.nan  # too few turns report tokens: the share of turns stands in
    hero_gap = unprod["value"] if np.isnan(with_tokens) else float(with_tokens)
    return {
        "agent": rows[0]["agent"],
        "file": rows[0].get("file"),
        "kind": "terminal",
        "trajectories": len(rows),
        "resolution_rate": res["value"], "resolution_ci": res["ci"],
        "resolution_ci_note": res["ci_note"], "resolution_n": res["n"],
        "mean_tokens": tok["value"], "mean_tokens_ci": tok["ci"],
        "mean_tokens_ci_note": tok["ci_note"],
        "unproductive_turn_rate": unprod["value"],
        "unproductive_token_share": hero_gap,
        "unproductive_share_of": "turns" if np.isnan(with_tokens) else "tokens",
        "behaviours": behaviours,
        # failed runs of scripts the agent wrote (reproductions, checks): by design, shown apart
        "check_runs": {"turns": sum("C" in f for r in rows for f in r.get("turn_flags") or []),
                       "runs": sum(any("C" in f for f in r.get("turn_flags") or []) for r in rows)},
        "verification": scvd,
        "gaps": {"hero": hero_gap,
                 "scvd": max(scvd.get("unverified") or 0.0, scvd.get("missed_errors") or 0.0)
                 if scvd else None},
    }  # fmt: skip


def _terminal_signal(a: dict[str, Any], file_rows: list[dict], file: str | None,
                     suite: str | None) -> dict[str, Any]:  # fmt: skip
    """The advice for one terminal agent; ``file_rows``: every row of its trajectory file."""
    cmds = advice.commands(a["agent"], file, suite)
    grouping, why = advice.hero_groups(file_rows, a["agent"])
    blocked = {"hero": why} if grouping is None else {}
    if grouping == "pooled":
        cmds["hero"] += " --pool-agents"
    sig = advice.signal(a.pop("gaps"), cmds, blocked=blocked, agent=a["agent"])
    if sig["method"] == "hero" and grouping == "pooled":
        sig["why"] += ("; with one rollout per task, each group pools every agent's rollouts of "
                       "a task (2 or more rollouts per task of this agent make groups of its own)")  # fmt: skip
    return sig


def security_agent(agent: str, grades: list[dict[str, Any]], *, n_boot: int, seed: int) -> dict:
    del n_boot, seed  # FuncPass and SecPass are rates: Wilson intervals, nothing resampled
    items = [dict(g, f=int(bool(g.get("func"))), s=int(bool(g.get("sec")))) for g in grades
             if not g.get("aborted")]  # fmt: skip
    fp = rate_ci(sum(g["f"] for g in items), len(items), "tasks")
    sp = rate_ci(sum(g["s"] for g in items), len(items), "tasks")
    gap = (
        (fp["value"] - sp["value"]) if fp["value"] is not None and sp["value"] is not None else None
    )
    insecure = [{"id": g.get("trajectory"), "task": g.get("task_id")} for g in items
                if g["f"] and not g["s"]]  # fmt: skip
    return {
        "agent": agent,
        "kind": "security",
        "tasks": len(items),
        "func_pass": fp["value"], "func_pass_ci": fp["ci"], "func_pass_ci_note": fp["ci_note"],
        "sec_pass": sp["value"], "sec_pass_ci": sp["ci"], "sec_pass_ci_note": sp["ci_note"],
        "security_gap": gap,
        "examples_insecure": insecure[:3],
        "signal": advice.signal(
            {"securevibe": gap},
            {"securevibe": advice.security_command(
                agent, sorted({str(g.get("task_id")) for g in items if g.get("task_id")}))},
            agent=agent),
    }  # fmt: skip


def verdict(
    rows: list[dict[str, Any]],
    records: dict[str, dict[str, Any]],
    grades: list[dict[str, Any]],
    *,
    n_boot: int = RESAMPLES,
    seed: int = 0,
    trajectories: str | None = None,
    suite: str | None = None,
) -> dict[str, Any]:
    """The ``agentpost.verdict/1`` document (without its producer). A row's ``file`` (the
    trajectory file holding it, as the commands should name it) wins over ``trajectories``
    (else the commands carry a ``<trajectories.jsonl>`` placeholder); ``suite``: the suite
    the run used (else a placeholder)."""
    by_agent: dict[str, list[dict]] = {}
    by_file: dict[Any, list[dict]] = {}
    for r in rows:
        by_agent.setdefault(str(r["agent"]), []).append(r)
        by_file.setdefault(r.get("file") or trajectories, []).append(r)
    by_sec: dict[str, list[dict]] = {}
    for g in grades:
        by_sec.setdefault(str(g["agent"]), []).append(g)
    agents = []
    for rs in by_agent.values():
        a = terminal_agent(rs, records, n_boot=n_boot, seed=seed)
        where = a.pop("file", None) or trajectories
        a["signal"] = _terminal_signal(a, by_file.get(where, rs), where, suite)
        agents.append(a)
    agents += [security_agent(a, gs, n_boot=n_boot, seed=seed) for a, gs in by_sec.items()]
    agents.sort(key=lambda a: (a["kind"] != "terminal", a["agent"]))
    return {"format": FORMAT, "agents": agents, "n_boot": n_boot, "seed": seed}
