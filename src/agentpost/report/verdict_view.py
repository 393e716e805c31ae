"""The verdict in words: plain lines for ``agentpost summary`` and the report's first section.

Both views say the same sentences; the HTML one links every example to the trajectory viewer
(``#traj=ID&turn=N`` opens that trajectory at that turn).

Layer: pure.
"""

from __future__ import annotations

from html import escape
from typing import Any

from agentpost.intervals import MIN_N, UNKNOWN
from agentpost.report.html import Section, note
from agentpost.report.svg import fmt_num

TITLE = "Verdict: what holds each agent back, and what to build next"
EXPLAIN = (
    "Shares are of the agent's tokens (prompt + completion of each model call) unless marked as "
    f"turns. Rates (resolution, self-verification, FuncPass, SecPass) carry 95% Wilson intervals; "
    f"shares of tokens and mean tokens 95% bootstrap intervals over its trajectories; below "
    f"{MIN_N} runs or tasks no interval is given ('too few'). 'Resolved with − without' is the "
    "resolution rate of runs showing the behaviour minus that of runs without it (Newcombe's "
    "interval): an association, not proof that the behaviour causes failures. Commands run from "
    "the folder that holds the run directory; names in <angle brackets> are yours to fill in."
)


def pct(v: float | None) -> str:
    return UNKNOWN if v is None else f"{v:.0%}" if abs(v) >= 0.01 or v == 0 else f"{v:.1%}"


def ci(c: list[float] | None, note: str | None = None) -> str:
    """`` (95% CI a to b)``, or the reason there is none (`` (too few runs ...)``)."""
    if c:
        return f" (95% CI {pct(c[0])} to {pct(c[1])})"
    return f" ({note})" if note else ""


def _diff(d: dict[str, Any]) -> str:
    if d.get("value") is None:
        if not d.get("n_with") and not d.get("n_without"):
            return "outcomes not recorded"
        return "no contrast (every run or none shows it)"
    c = d.get("ci")
    rng = (
        f", 95% CI {c[0]:+.2f} to {c[1]:+.2f}"
        if c
        else f" ({d['ci_note']})"
        if d.get("ci_note")
        else ""
    )
    return f"resolved with − without {d['value']:+.2f}{rng}"


def _behaviour_line(b: dict[str, Any]) -> str:
    return (
        f"{b['label']}: {pct(b['share'])} of its {b['share_of']}"
        f"{ci(b['share_ci'], b.get('share_ci_note'))}, "
        f"in {pct(b['prevalence'])} of runs; {_diff(b['resolved_diff'])}"
    )


def _head(a: dict[str, Any]) -> str:
    if a["kind"] == "security":
        return (
            f"{a['agent']} (security suite, {a['tasks']} tasks): FuncPass {pct(a['func_pass'])}"
            f"{ci(a['func_pass_ci'], a.get('func_pass_ci_note'))}, SecPass {pct(a['sec_pass'])}"
            f"{ci(a['sec_pass_ci'], a.get('sec_pass_ci_note'))}, "
            f"security gap {pct(a['security_gap'])}"
        )
    if a["mean_tokens"] is None:
        cost = (f"tokens not recorded; {pct(a['unproductive_turn_rate'])} of its turns are "
                "unproductive")  # fmt: skip
    elif a.get("unproductive_share_of") == "turns":
        cost = (f"at {fmt_num(a['mean_tokens'])} tokens per run; "
                f"{pct(a['unproductive_turn_rate'])} of its turns are unproductive (too few "
                "turns report their tokens to share tokens out)")  # fmt: skip
    else:
        cost = (f"at {fmt_num(a['mean_tokens'])} tokens per run; "
                f"{pct(a['unproductive_token_share'])} of its tokens go to unproductive turns")  # fmt: skip
    return (
        f"{a['agent']} ({a['trajectories']} trajectories): resolves {pct(a['resolution_rate'])}"
        f"{ci(a['resolution_ci'], a.get('resolution_ci_note'))} {cost}"
    )


def _scvd_lines(v: dict[str, Any] | None) -> list[str]:
    if not v:
        return []
    out = [
        f"self-verification: {pct(v['unverified'])} of {v['candidates']} candidate solutions "
        f"left unverified{ci(v['unverified_ci'], v.get('unverified_ci_note'))}"
    ]
    if v["wrong_candidates"]:
        out.append(
            f"self-verification: {pct(v['missed_errors'])} of {v['wrong_candidates']} wrong "
            f"candidates not flagged as errors by its own checks"
            f"{ci(v['missed_errors_ci'], v.get('missed_errors_ci_note'))}"
        )
    return out


def _check_runs(a: dict[str, Any]) -> list[str]:
    c = a.get("check_runs") or {}
    if not c.get("turns"):
        return []
    return [f"check runs: {c['turns']} turns in {c['runs']} runs ran a script it wrote and failed, "
            "by design (reproductions and checks: not counted as tool errors)"]  # fmt: skip


def _not_measured(s: dict[str, Any]) -> list[str]:
    return [f"{m['what']}: not measured: run `{m['command']}`" for m in s.get("not_measured") or []]


SCRIPTED_NOTE = (
    "a scripted reference policy, not a model to train: the advice only illustrates the rule"
)


def _signal_line(s: dict[str, Any]) -> str:
    tag = f" ({SCRIPTED_NOTE})" if s.get("scripted") else ""
    if not s.get("method"):
        head = "not decided" if s.get("not_measured") else "nothing"
        return f"build next{tag}: {head} ({s['why']})"
    return f"build next{tag}: {s['title']}, because {s['why']}: `{s['command']}`"


def lines(doc: dict[str, Any]) -> list[str]:
    """The verdict as plain text, one agent per block."""
    out: list[str] = []
    for a in doc["agents"]:
        out.append(_head(a))
        shown = [b for b in a.get("behaviours") or [] if b["share"]]
        out += [f"  - {_behaviour_line(b)}" for b in shown] or (
            ["  - no unproductive behaviour seen"] if a["kind"] == "terminal" else []
        )
        out += [f"  - {x}" for x in _check_runs(a)]
        out += [f"  - {x}" for x in _scvd_lines(a.get("verification"))]
        out += [f"  - {x}" for x in _not_measured(a["signal"])]
        examples = _examples(a)
        if examples:
            shown = ", ".join(i + ("" if t is None else f" turn {t}") for _, i, t in examples[:3])
            out.append(f"  - examples: {shown}")
        out.append(f"  {_signal_line(a['signal'])}")
    return out


def _examples(a: dict[str, Any]) -> list[tuple[str, str, Any]]:
    ex = [(b["label"], e["id"], e["turn"]) for b in a.get("behaviours") or [] if b["share"]
          for e in b["examples"]]  # fmt: skip
    v = a.get("verification") or {}
    ex += [("unverified", e["id"], e["turn"]) for e in v.get("examples_unverified") or []]
    ex += [("missed error", e["id"], e["turn"]) for e in v.get("examples_missed") or []]
    ex += [("insecure", e["id"], None) for e in a.get("examples_insecure") or [] if e["id"]]
    seen: set[str] = set()
    return [e for e in ex if not (e[1] in seen or seen.add(e[1]))]  # one example per trajectory


def link(traj_id: str, turn: Any = None, text: str | None = None) -> str:
    """A link that opens ``traj_id`` (at ``turn``) in the trajectory viewer."""
    frag = f"traj={traj_id}" + (f"&turn={turn}" if turn is not None else "")
    return f'<a class="tlink" href="#{escape(frag, quote=True)}">{escape(text or traj_id)}</a>'


def _card(a: dict[str, Any]) -> str:
    items = [escape(_behaviour_line(b)) for b in a.get("behaviours") or [] if b["share"]]
    items += [escape(x) for x in _check_runs(a)]
    items += [escape(x) for x in _scvd_lines(a.get("verification"))]
    items += [
        f"{escape(m['what'])}: not measured: run <code>{escape(m['command'])}</code>"
        for m in a["signal"].get("not_measured") or []
    ]
    ex = _examples(a)
    if ex:
        items.append("examples: " + ", ".join(
            link(i, t, f"{i.split('::')[0]} ({lab}{'' if t is None else f', turn {t}'})")
            for lab, i, t in ex[:4]))  # fmt: skip
    lis = "".join(f"<li>{x}</li>" for x in items) or "<li>no unproductive behaviour seen</li>"
    s = a["signal"]
    tag = f" <i>({escape(SCRIPTED_NOTE)})</i>" if s.get("scripted") else ""
    head = "not decided" if s.get("not_measured") else "nothing"
    sig = (
        f"<p><b>Build next: {escape(s['title'])}</b>{tag}, because {escape(s['why'])}.<br>"
        f"<code>{escape(s['command'])}</code></p>"
        if s.get("method")
        else f"<p><b>Build next:</b>{tag} {head} ({escape(s['why'])}).</p>"
    )
    return (
        f'<div class="agent" data-agent="{escape(a["agent"], quote=True)}">'
        f"<h3>{escape(_head(a))}</h3><ul>{lis}</ul>{sig}</div>"
    )


def section(doc: dict[str, Any] | None) -> Section | None:
    if not doc or not doc["agents"]:
        return None
    body = note(EXPLAIN) + "".join(_card(a) for a in doc["agents"])
    prov = [f"agentpost.report.verdict, {doc['n_boot']} bootstrap resamples, seed {doc['seed']}"]
    return Section("verdict", TITLE, body, provenance=prov)
