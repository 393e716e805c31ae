"""Harbor job and trial folders, and Terminal-Bench 1 run folders: join a trial's results into
the trajectories its agent logs hold, and recognise the files that are not trajectories.

Harbor writes ``<job>/config.json`` and ``<job>/result.json`` (job stats), and per trial
``<job>/<trial>/config.json``, ``result.json`` (``task_name``, ``agent_info``,
``verifier_result.rewards.reward``, ``agent_result`` tokens, ``exception_info``),
``verifier/ctrf.json`` (test results, CTRF format) and the agent's logs under ``agent/``:
``trajectory.json`` (ATIF) and, for installed agents, the native log it was converted from
(``gemini-cli.trajectory.json``, Claude Code ``sessions/**.jsonl``, Codex ``sessions/**``).
Terminal-Bench 1 writes ``<run>/run_metadata.json``, ``<run>/results.json`` and per trial
``<run>/<task>/<trial>/results.json`` (``is_resolved``, ``parser_results``) beside
``agent-logs/``.

A trajectory read from inside a trial gets, where its own file lacks them: ``task_id`` (the task
name), ``run_id`` (the job folder), ``agent``/``model`` (``agent_info``) and the outcome
(reward, resolved = reward >= 1, per-test statuses from ``ctrf.json`` or ``parser_results``).
The native log beside an ATIF ``trajectory.json`` is skipped, so a trial counts once.

Layer: io. Departure: the trial's run-level token counts (``agent_result``) go to
``metadata.harbor_agent_result`` and never replace per-call usage: they cover the whole trial,
including calls a converter may have dropped.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Outcome, Trajectory

# Formats Harbor converts into agent/trajectory.json: their native copy is a duplicate there.
NATIVE = {"gemini-cli", "claude-code", "codex", "openhands-v0", "openhands-v1", "terminus-episodes"}
MAX_DEPTH = 6  # agent/sessions/projects/<project>/<session>.jsonl is the deepest known log


def _load(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def trial_dir(path: Path) -> tuple[Path, str] | None:
    """The trial folder holding ``path`` and its kind (``harbor`` or ``tb1``), else None.

    The outermost match wins: the agent writes inside ``agent/``, so an ``agent/x/agent/`` with
    a forged ``agent/x/result.json`` beside it must not pass for the trial."""
    folders = os.fspath(path).split(os.sep)[:-1]
    if "agent" not in folders and "agent-logs" not in folders:  # most files: no pathlib at all
        return None
    found = None
    parts = path.parent.parts  # walked as strings: Path.parent per level costs more than the rest
    for depth in range(min(MAX_DEPTH, len(parts))):
        name = parts[len(parts) - 1 - depth]
        if name in _MARKERS:
            trial = Path(*parts[: len(parts) - 1 - depth])
            if (trial / _MARKERS[name][0]).is_file():
                found = trial, _MARKERS[name][1]
    return found


_MARKERS = {"agent": ("result.json", "harbor"), "agent-logs": ("results.json", "tb1")}


def duplicate_of_atif(path: Path, fmt: str) -> bool:
    """A native agent log that Harbor also converted into ``agent/trajectory.json``."""
    if fmt not in NATIVE or path.name == "trajectory.json":
        return False
    found = trial_dir(path)
    return (
        found is not None
        and found[1] == "harbor"
        and (found[0] / "agent" / "trajectory.json").is_file()
    )


def _ctrf_tests(trial: Path) -> dict[str, str]:
    ctrf = _load(trial / "verifier" / "ctrf.json")
    tests = ((ctrf or {}).get("results") or {}).get("tests") if isinstance(ctrf, dict) else None
    out = {}
    for t in tests if isinstance(tests, list) else []:
        if isinstance(t, dict) and isinstance(t.get("name"), str):
            out[t["name"]] = str(t.get("status"))
    return out


def _harbor(trial: Path) -> dict[str, Any]:
    res = _load(trial / "result.json")
    if not isinstance(res, dict):
        return {}
    info = c.as_dict(res.get("agent_info"))
    model = c.as_dict(info.get("model_info"))
    verifier = c.as_dict(res.get("verifier_result"))
    reward = c.as_float((verifier.get("rewards") or {}).get("reward"))
    exc = res.get("exception_info") if isinstance(res.get("exception_info"), dict) else None
    details: dict[str, Any] = {"result": str(trial / "result.json")}
    if exc:
        details["exception"] = exc.get("exception_type")
    return {
        "task_id": c.as_str(res.get("task_name")),
        "run_id": trial.parent.name,
        "agent": c.as_str(info.get("name")),
        "agent_version": c.as_str(info.get("version")),
        "model": c.as_str(model.get("name")),
        "outcome": c.construct(
            Outcome,
            resolved=None if reward is None else reward >= 1.0,
            reward=reward,
            tests=_ctrf_tests(trial),
            evaluator="harbor-verifier" if reward is not None else None,
            details=details,
        ),
        "agent_result": res.get("agent_result"),
    }


def _tb1(trial: Path) -> dict[str, Any]:
    res = _load(trial / "results.json")
    if not isinstance(res, dict):
        return {}
    resolved = res.get("is_resolved") if isinstance(res.get("is_resolved"), bool) else None
    parsed = c.as_dict(res.get("parser_results"))
    return {
        "task_id": c.as_str(res.get("task_id")),
        "run_id": trial.parent.parent.name,
        "outcome": c.construct(
            Outcome,
            resolved=resolved,
            reward=None if resolved is None else float(resolved),
            tests={str(k): str(v) for k, v in parsed.items()},
            evaluator="terminal-bench" if resolved is not None else None,
            details={
                "result": str(trial / "results.json"),
                "failure_mode": res.get("failure_mode"),
            },
        ),
        "agent_result": {
            k: res.get(k) for k in ("total_input_tokens", "total_output_tokens") if k in res
        },
    }


def join(path: Path, trajectories: list[Trajectory]) -> None:
    """Fill task, run, agent, model and outcome from the trial folder ``path`` lies in."""
    found = trial_dir(path)
    if found is None:
        return
    info = _harbor(found[0]) if found[1] == "harbor" else _tb1(found[0])
    if not info:
        return
    for t in trajectories:
        for key in ("task_id", "run_id", "agent", "agent_version", "model"):
            if getattr(t, key) is None and info.get(key) is not None:
                t.__dict__[key] = info[key]
        o = t.outcome
        if o.resolved is None and o.reward is None and not o.tests:
            t.__dict__["outcome"] = info["outcome"].model_copy(
                update={"details": {**o.details, **info["outcome"].details}}
            )
        if info.get("agent_result"):
            t.metadata["harbor_agent_result"] = info["agent_result"]


def companion(name: str, head: Any) -> str | None:
    """Why a Harbor / Terminal-Bench 1 file is not a trajectory (``head`` has ``has``)."""
    has = head.has
    if name == "config.json" and (has(b"job_name") or has(b"trial_name") or has(b"agents")):
        return "Harbor job or trial config"
    if name == "result.json" and (has(b"n_total_trials") or has(b"stats")):
        return "Harbor job result"
    if name == "result.json" and (has(b"trial_name") or has(b"task_name")):
        return "Harbor trial result, joined into its trajectory"
    if name == "ctrf.json" and has(b"results") and has(b"tests"):
        return "verifier test report (CTRF), joined into its trajectory"
    if name in ("reward.json", "run_metadata.json", "tb.lock"):
        return "Harbor / Terminal-Bench run bookkeeping"
    if name == "results.json" and (has(b"is_resolved") or has(b"n_resolved")):
        return "Terminal-Bench results, joined into their trajectories"
    return None
