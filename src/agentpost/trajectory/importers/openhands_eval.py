"""OpenHands evaluation ``output.jsonl``: one benchmark instance per line, its events under
``history``, in any of three layouts (``_history_layout``): OpenHands v0 events (resolver output
too, ``issue`` instead of ``instance_id``), V1 SDK events (the benchmarks repository's
``EvalOutput``: usage per call from ``metrics.token_usages``, read by ``openhands_v1``), and
the 2024 OpenDevin output, whose ``history`` is ``[[action, observation], ...]`` pairs.

The outcome is ``test_result.resolved`` (or ``test_result.report.resolved``) where an
evaluator wrote one; inference output has none. A benchmark's own verdicts (``success`` of the
resolver) stay in details. Cross-check: the turns' usage against the run's own
``metrics.accumulated_token_usage`` (per-call records that do not add up are named).

Layer: io.
"""

from __future__ import annotations

from typing import Any

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.importers.openhands import _Builder
from agentpost.trajectory.model import Outcome

NAME = "openhands-eval"


def _record_id(rec: dict) -> str | None:
    """``instance_id`` (evaluation output), ``id`` or ``question_id`` (2024 OpenDevin
    benchmarks), else ``owner/repo#number`` (resolver output)."""
    for key in ("instance_id", "id", "question_id"):
        if isinstance(rec.get(key), str | int) and not isinstance(rec.get(key), bool):
            return str(rec[key])
    issue = c.as_dict(rec.get("issue"))
    if issue.get("number") is not None:
        return f"{issue.get('owner')}/{issue.get('repo')}#{issue.get('number')}"
    return None


def _flatten_pairs(history: list, lctx: c.Ctx) -> list:
    """2024 OpenDevin output: ``history`` is ``[[action, observation], ...]``; the action's
    observation answers it (``cause``), a ``null`` observation (none) is dropped."""
    events: list = []
    for i, pair in enumerate(history):
        if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], dict):
            raise lctx.fail(f"$.history[{i}]", "expected an [action, observation] pair")
        action, obs = pair
        events.append(action)
        if isinstance(obs, dict) and obs.get("observation") not in (None, "null"):
            ob = dict(obs)
            ob.setdefault("cause", action.get("id"))
            ob.setdefault("source", "environment")
            events.append(ob)
    return events


def _history_layout(history: list) -> str:
    if history and all(isinstance(h, list) for h in history):
        return "opendevin/pairs"
    if any(isinstance(h, dict) and "kind" in h for h in history):
        return "openhands-v1/eval"
    return "openhands-v0/eval"


def _resolved(rec: dict, test_result: dict) -> bool | None:
    r = test_result.get("resolved")
    if not isinstance(r, bool):
        r = c.as_dict(test_result.get("report")).get("resolved")
    return r if isinstance(r, bool) else None


def _eval_model(rec: dict, meta: dict, fallback: Any) -> Any:
    """``metadata.llm_config.model`` (v0), ``metadata.llm.model`` (V1),
    ``metadata.model_name`` (2024), ``metrics.model_name`` (V1 without metadata)."""
    for v in (
        c.as_dict(meta.get("llm_config")).get("model"),
        c.as_dict(meta.get("llm")).get("model"),
        meta.get("model_name"),
        c.as_dict(rec.get("metrics")).get("model_name"),
    ):
        if isinstance(v, str) and v and v != "default":
            return v
    return fallback


def _v1_record(rec: dict, lctx: c.Ctx, history: list) -> tuple[Any, dict]:
    from agentpost.trajectory.importers import openhands_v1

    b = openhands_v1.build_history(history, lctx, rec.get("metrics"))
    return b, b.note("$.metrics.", "openhands-v1/eval")


def convert_lines(lines: list[tuple[int, Any]], ctx: c.Ctx, keep_raw: bool = False) -> list:
    """Evaluation ``output.jsonl``: one instance per line; its ``history`` in any of the three
    layouts (v0 events, V1 SDK events, 2024 OpenDevin pairs)."""
    out = []
    for lineno, rec in lines:
        lctx = c.Ctx(ctx.path, f"line {lineno}")
        history = c.req(lctx, rec, "history", "$", list)
        metrics = c.as_dict(rec.get("metrics"))
        layout = _history_layout(history)
        b: Any
        if layout == "openhands-v1/eval":
            b, note = _v1_record(rec, lctx, history)
        else:
            if layout == "opendevin/pairs":
                history = _flatten_pairs(history, lctx)
            b = _Builder(metrics.get("token_usages"))
            b.feed(history, lctx, "$.history")
            note = c.import_note(layout, b.warnings + _metric_checks(b, metrics))
        meta = c.as_dict(rec.get("metadata"))
        test_result = c.as_dict(rec.get("test_result"))
        outcome = c.construct(
            Outcome,
            resolved=_resolved(rec, test_result),
            tests={},
            evaluator=None,
            details={
                "error": rec.get("error"),
                "git_patch": test_result.get("git_patch") or rec.get("git_patch"),
                "exit_status": getattr(b, "final_state", None),
                **({"resolver_success": rec["success"]} if "success" in rec else {}),
            },
        )
        rid = _record_id(rec)
        model = _eval_model(rec, meta, getattr(b, "model", None))
        out.append(
            c.trajectory(
                lctx,
                NAME,
                id=rid or f"line-{lineno}",
                task_id=rid,
                agent=meta.get("agent_class") or "openhands",
                model=model,
                system_prompt=b.system,
                instruction=c.as_str(rec.get("instruction")) or b.instruction,
                turns=b.turns,
                outcome=outcome,
                keep_raw=keep_raw,
                raw=rec,
                metadata={"max_iterations": meta.get("max_iterations")} | note,
            )
        )
    return out


def _metric_checks(b: _Builder, metrics: dict) -> list[list[str]]:
    """The turns' usage against the run's own ``metrics.accumulated_token_usage``: per-call
    counts that sum to less mean calls without usage; to more, counted twice."""
    acc = c.as_dict(metrics.get("accumulated_token_usage"))
    out: list[list[str]] = []
    for key, field in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        total = c.as_int(acc.get(key))
        got = [getattr(t.usage, field) for t in b.turns if t.usage is not None]
        have = [x for x in got if x is not None]
        if total is None or not have or total == sum(have):
            continue
        out.append(
            [
                f"$.metrics.accumulated_token_usage.{key}",
                f"{total}, but the calls' {field} sum to {sum(have)}",
            ]
        )
    return out
