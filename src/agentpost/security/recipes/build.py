"""Build the Security Suite SFT data (spec b.4): for every task and task type, N teacher samples,
each through its execution filter; the kept ones become SFT rows (``agentpost.sft.rows``:
the prompt as context, the teacher's answer as the only target) and the three size-matched
recipes are written as Parquet through ``agentpost.sft.io``.

Kept per (task, type): passing samples de-duplicated by their normalised answer, at most
``cap`` (spec e.10: ≤ 4). Every sample's verdict is counted by reason in the manifest, so a run
says what each filter rejected. With a ``Store`` each (teacher, prompt, sample k) answer and its
verdict is kept, so a rerun after a crash skips what is done (the scripted teacher answers by
request order, so a resumed scripted run may pick different cycle positions for the missing
samples; an endpoint teacher is sampled fresh either way).

Teacher failures after the transport's retries (``ModelUnavailable``, a malformed answer) are
counted as ``teacher_error`` and give no row; a filter's infrastructure error (a sandbox that
does not start, a grading run that aborts) is retried ``retries`` times, then counted as
``infra_error``: apart from the filter verdicts, and never a row.

Layer: io.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agentpost.agent.llm import MalformedResponse, Model, ModelRequestError, ModelUnavailable
from agentpost.documents.formats import fmt, producer
from agentpost.documents.write import write_json
from agentpost.errors import InfraError
from agentpost.sandbox.base import Backend
from agentpost.security.model import SecurityTask
from agentpost.security.recipes.filters import (
    Verdict,
    coding_filter,
    planning_filter,
    security_testing_filter,
)
from agentpost.security.recipes.formats import TASK_TYPES, build_prompt
from agentpost.security.recipes.mixtures import RECIPES, mix_recipes
from agentpost.sft.rows import SFTRow
from agentpost.store import Store

FORMAT = fmt("agentpost.security.suite-build")


def suite_prompts(
    tasks: Sequence[SecurityTask], names: dict, allowed: Sequence[str], types=TASK_TYPES
) -> dict[str, tuple[SecurityTask, str, list[dict]]]:
    """user message → (task, type, messages) for every task and type."""
    out = {}
    for t in tasks:
        for ty in types:
            msgs = build_prompt(ty, t.instruction, t.cwes, names, sink=t.sink,
                                security_test=t.security_test, allowed=allowed)  # fmt: skip
            out[msgs[-1]["content"]] = (t, ty, msgs)
    return out


def _verdict(
    task: SecurityTask, ty: str, text: str, backend: Backend | None, plan: dict
) -> Verdict:
    if ty in ("functional_coding", "security_coding"):
        return coding_filter(task, text, backend)
    if ty == "planning":
        return planning_filter(task, text, plan["mode"], plan["groups"], plan["generic"])
    return security_testing_filter(task, text, backend)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _one(
    task: SecurityTask, ty: str, msgs: list[dict], k: int, teacher: Model, label: str,
    backend: Backend | None, plan: dict, retries: int,
) -> dict[str, Any]:  # fmt: skip
    try:
        text = teacher.complete(list(msgs)).text or ""
    except (ModelUnavailable, MalformedResponse, ModelRequestError) as e:
        return {"text": None, "keep": False, "reason": "teacher_error", "detail": str(e)[:300]}
    for attempt in range(retries + 1):
        try:
            v = _verdict(task, ty, text, backend, plan)
            break
        except InfraError as e:
            if attempt == retries:  # counted apart, never a verdict on the teacher
                return {
                    "text": text,
                    "keep": False,
                    "reason": "infra_error",
                    "detail": str(e)[:300],
                }
    return {"text": text, "keep": v.keep, "reason": v.reason, "detail": v.detail[:300]}


def build_examples(
    tasks: Sequence[SecurityTask],
    teacher: Model,
    label: str,
    *,
    names: dict,
    allowed: Sequence[str],
    plan: dict,
    samples: int = 4,
    cap: int = 4,
    backend: Backend | None = None,
    store: Store | None = None,
    workers: int = 2,
    retries: int = 1,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, list[SFTRow]], dict[str, Counter]]:
    """(type → kept rows, type → Counter of verdict reasons). ``plan`` = {mode, groups,
    generic} for the planning filter."""
    prompts = suite_prompts(tasks, names, allowed)

    def run(item: tuple[SecurityTask, str, list[dict]]) -> tuple[str, list[SFTRow], Counter]:
        task, ty, msgs = item
        rows, reasons, seen = [], Counter(), set()
        for k in range(samples):
            inputs = {"teacher": label, "messages": msgs, "k": k, "plan_mode": plan["mode"]}
            res = (store.get_or_compute("suite-sample", inputs, lambda k=k: _one(
                task, ty, msgs, k, teacher, label, backend, plan, retries))
                if store else _one(task, ty, msgs, k, teacher, label, backend, plan, retries)
            )  # fmt: skip
            reasons[res["reason"]] += 1
            if not res["keep"] or _norm(res["text"]) in seen or len(rows) >= cap:
                if res["keep"]:
                    reasons["duplicate_or_over_cap"] += 1
                continue
            seen.add(_norm(res["text"]))
            messages = [{**m, "train": False} for m in msgs]
            messages.append({"role": "assistant", "content": res["text"], "train": True})
            rows.append(SFTRow(messages=messages, meta={
                "task_id": task.id, "task_type": ty, "cwes": list(task.cwes), "sample": k,
                "teacher": label, "filter": res["reason"], "source": "securevibe-suite"}))  # fmt: skip
        if progress:
            progress(f"{task.id} {ty}: kept {len(rows)} of {samples}")
        return ty, rows, reasons

    pools: dict[str, list[SFTRow]] = {ty: [] for ty in TASK_TYPES}
    stats: dict[str, Counter] = {ty: Counter() for ty in TASK_TYPES}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for ty, rows, reasons in pool.map(run, list(prompts.values())):
            pools[ty] += rows
            stats[ty] += reasons
    return pools, stats


def write_recipes(
    pools: dict[str, list[SFTRow]], stats: dict[str, Counter], out: str | Path, *,
    seed: int = 0, producer_args: dict | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Write ``examples/<type>.parquet``, ``<recipe>.parquet`` and ``manifest.json`` under
    ``out``; returns the manifest."""
    from agentpost.sft.io import write_rows

    out = Path(out)
    (out / "examples").mkdir(parents=True, exist_ok=True)
    for ty, rows in pools.items():
        write_rows(rows, out / "examples" / f"{ty}.parquet")
    mixed = mix_recipes(pools, seed)
    recipes = {}
    for name, rows in mixed.items():
        rows = [r.model_copy(update={"meta": {**r.meta, "recipe": name}}) for r in rows]
        write_rows(rows, out / f"{name}.parquet")
        recipes[name] = {"file": f"{name}.parquet", "size": len(rows),
                         "types": dict(Counter(r.meta["task_type"] for r in rows)),
                         "task_types": list(RECIPES[name])}  # fmt: skip
    manifest = {
        "format": FORMAT,
        "producer": producer(build_examples, **(producer_args or {})),
        "examples": {ty: {"kept": len(pools[ty]), "verdicts": dict(stats[ty])} for ty in pools},
        "recipes": recipes,
        "seed": seed,
    }
    write_json(out / "manifest.json", manifest, default=str)
    return manifest
