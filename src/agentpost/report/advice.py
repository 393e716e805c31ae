"""What the verdict tells an agent's owner to build next, and the command that builds it.

The rule: among the gaps the data *measured* and can *act on* (all shares, 0..1), the largest
one of at least ``MIN_GAP`` names the method. A gap the data cannot act on is named with its
reason instead of being recommended:

- HERO needs the outcome of every rollout (its resolution term) and groups of 2 or more rollouts
  of one task (its advantage is group-relative, spec HERO b.3). One rollout per task and agent
  is pooled across the agents that ran the task (``--pool-agents``) when that forms groups;
  else HERO is not recommended, and the verdict says why.
- A gap nobody measured (self-verification before ``agentpost diagnose`` ran) is never read as
  "nothing to build": the verdict says "not measured" and gives the command that measures it.
- A scripted reference policy (a name starting ``scripted/``) is no model anyone trains: its
  advice is marked as an illustration of what the rule would say.

Every command carries ``--agent`` (and names the trajectory file and the suite), so it acts on
this agent only. A command with a ``<placeholder>`` is a template (the run does not say the
value); ``runnable`` is False for it. Tests run every runnable command (tests/report).

Layer: pure.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

MIN_GAP = 0.05  # below this no signal is recommended: the agent has no gap worth a training run
SCRIPTED = "scripted/"  # the prefix of every scripted reference policy's name
TITLES = {
    "hero": "HERO (hierarchical efficiency RL advantage)",
    "scvd": "SCVD (student-conditioned verification distillation)",
    "securevibe": "SecureVibe (security planning and testing SFT / GRPO)",
}
GAP_NAMES = {"hero": "unproductive share", "scvd": "self-verification gap",
             "securevibe": "security gap"}  # fmt: skip
FILE = "<trajectories.jsonl>"
SUITE = "<suite of these tasks>"


def is_scripted(agent: str) -> bool:
    return agent.startswith(SCRIPTED)


def slug(agent: str) -> str:
    """A file-name-safe form of an agent name: ``scripted/hasty`` → ``scripted-hasty``."""
    return re.sub(r"[^A-Za-z0-9._]+", "-", agent).strip("-") or "agent"


def hero_groups(rows: list[dict[str, Any]], agent: str) -> tuple[str | None, str]:
    """How HERO groups this agent's rollouts: ``"agent"`` (2+ rollouts of a task by the agent),
    ``"pooled"`` (only with the other agents' rollouts of its tasks), or None with the reason.
    ``rows`` are every agent's rows of the same trajectory file (``agent``, ``task_id``,
    ``resolved``, ``tokens``); a rollout without outcome or tokens cannot join a group."""
    ok = [r for r in rows if r.get("resolved") is not None and r.get("tokens") is not None]
    mine = [r for r in ok if r["agent"] == agent]
    if not mine:
        if all(r.get("resolved") is None for r in rows if r["agent"] == agent):
            return None, ("no run records whether it resolved its task, and HERO's advantage "
                          "needs that outcome (grade the runs first)")  # fmt: skip
        return None, "no graded run records its token counts, which HERO's efficiency term needs"
    per_task: dict[str, int] = {}
    for r in mine:
        per_task[str(r["task_id"])] = per_task.get(str(r["task_id"]), 0) + 1
    if max(per_task.values()) >= 2:
        return "agent", ""
    pooled: dict[str, int] = {}
    for r in ok:
        pooled[str(r["task_id"])] = pooled.get(str(r["task_id"]), 0) + 1
    if any(pooled[t] >= 2 for t in per_task):
        return "pooled", ""
    return None, (
        f"each of its {len(per_task)} tasks has one rollout, and HERO's advantage compares 2 or "
        "more rollouts of one task (a group); record several per task (agentpost run "
        "--group-size N) to make it usable"
    )


def commands(agent: str, file: str | None, suite: str | None) -> dict[str, str]:
    """The command of each method for ``agent``, and ``measure`` (``agentpost diagnose``)."""
    f, s, a = shlex.quote(file) if file else FILE, suite or SUITE, shlex.quote(agent)
    name = slug(agent)
    return {
        "hero": f"agentpost hero advantages {f} --agent {a} --export trl -o hero-{name}.jsonl",
        "scvd": f"agentpost scvd collect {f} --agent {a} --suite {s} -o scvd-{name}",
        "measure": f"agentpost diagnose {f} --agent {a} --suite {s} -o diagnose-{name}",
    }


def security_command(agent: str, tasks: list[str]) -> str:
    """``security route`` probing this agent on the tasks it was graded on."""
    picked = "".join(f" --task {shlex.quote(t)}" for t in tasks)
    if is_scripted(agent):
        return f"agentpost security route --suite secure --policy {shlex.quote(agent)}{picked}"
    return (f"agentpost security route --suite secure{picked} --base-url <URL serving it> "
            f"--model {shlex.quote(agent)}")  # fmt: skip


def runnable(command: str | None) -> bool:
    return bool(command) and "<" not in command  # type: ignore[operator]


def signal(
    gaps: dict[str, float | None],
    cmds: dict[str, str],
    *,
    blocked: dict[str, str] | None = None,
    agent: str = "",
) -> dict[str, Any]:
    """``{"method", "title", "command", "runnable", "why", "gaps", "blocked", "not_measured",
    "scripted"}``. ``gaps``: method → gap (None: not measured); ``blocked``: method → why the
    data cannot act on its gap; ``cmds``: method → command (``measure``: diagnose)."""
    blocked = dict(blocked or {})
    measured = {k: v for k, v in gaps.items() if v is not None}
    usable = {k: v for k, v in measured.items() if k not in blocked}
    unmeasured = [k for k, v in gaps.items() if v is None]
    out: dict[str, Any] = {"method": None, "gaps": gaps, "blocked": blocked,
                           "scripted": is_scripted(agent), "not_measured": []}  # fmt: skip
    if "scvd" in unmeasured:
        cmd = cmds.get("measure")
        out["not_measured"].append({"what": "self-verification (SCVD)", "command": cmd,
                                    "runnable": runnable(cmd)})  # fmt: skip
    best = max(usable, key=lambda k: usable[k]) if usable else None
    if best is not None and usable[best] >= MIN_GAP:
        out.update(method=best, title=TITLES[best], command=cmds.get(best),
                   why=f"its {GAP_NAMES[best]} ({usable[best]:.0%}) is the largest of "
                       f"{len(measured)} measured")  # fmt: skip
        out["runnable"] = runnable(out["command"])
        return out
    why = [f"{TITLES[k].split(' ')[0]}'s {GAP_NAMES[k]} ({measured[k]:.0%}) cannot be acted on: "
           f"{blocked[k]}" for k in blocked if k in measured and measured[k] >= MIN_GAP]  # fmt: skip
    if not why:
        why = [f"no measured gap reaches {MIN_GAP:.0%}"]
    if unmeasured:
        why.append("not measured: " + ", ".join(
            "self-verification" if k == "scvd" else GAP_NAMES[k] for k in unmeasured))  # fmt: skip
    out["why"] = "; ".join(why)
    return out
