"""Export HERO advantages computed offline (from recorded trajectories) for TRL and verl.

One row per rollout, the conversation as chat messages plus the advantage of every assistant
turn (all tokens of a turn share it, spec HERO b.6):

- ``trl``: JSONL in TRL's conversational prompt-completion form: ``prompt`` (system and user
  messages), ``completion`` (the assistant and tool messages), ``advantages`` aligned with
  ``completion`` (a number on assistant messages, null on tool messages, which carry no loss),
  plus ``turn_advantages``, ``group``, ``id``, ``resolved``, ``tokens``, ``gate``, ``p``.
  ``datasets.load_dataset("json", data_files=...)`` reads it.
- ``verl``: Parquet in verl's RL dataset layout: ``data_source``, ``prompt`` (messages),
  ``ability``, ``reward_model`` {style, ground_truth}, and ``extra_info`` holding the response
  messages and the HERO fields above. verl has no standard column for precomputed per-turn
  advantages, so they ride in ``extra_info`` (its custom reward / advantage hooks read it;
  ``train.verl_hero`` is the online estimator).

Departure: these are advantages of *recorded* rollouts (off-policy for any later checkpoint);
HERO as trained in the paper recomputes them on fresh rollouts each step (``train.trl_hero``,
``train.verl_hero``). Offline rows serve advantage-weighted fine-tuning and inspection.

Layer: io.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentpost.trajectory.model import Trajectory

FORMATS = ("trl", "verl")


def messages(traj: Trajectory) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[int]]:
    """(prompt, completion, turn index of each completion message or -1 for tool messages)."""
    prompt: list[dict[str, Any]] = []
    if traj.system_prompt:
        prompt.append({"role": "system", "content": traj.system_prompt})
    prompt.append({"role": "user", "content": traj.instruction or ""})
    completion: list[dict[str, Any]] = []
    owner: list[int] = []
    for k, t in enumerate(traj.turns):
        m: dict[str, Any] = {"role": "assistant", "content": t.text or ""}
        if t.tool_calls:
            m["tool_calls"] = [
                {"id": c.id or f"call_{t.index}_{j}", "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(
                     c.arguments if c.arguments is not None else {"command": c.command})}}
                for j, c in enumerate(t.tool_calls)
            ]  # fmt: skip
        completion.append(m)
        owner.append(k)
        for j, o in enumerate(t.observations):
            cid = o.call_id or (m["tool_calls"][j]["id"] if j < len(t.tool_calls) else None)
            completion.append({"role": "tool", "tool_call_id": cid, "content": o.text or ""})
            owner.append(-1)
    return prompt, completion, owner


def rows(trajs: list[Trajectory], advantages: dict[str, Any]) -> list[dict[str, Any]]:
    """TRL rows for every rollout of the ``agentpost.hero-advantages/1`` document that has an
    ``id`` among ``trajs``. Raises ``ValueError`` when a rollout's turn count differs."""
    by_id = {t.id: t for t in trajs}
    out = []
    for r in advantages["rollouts"]:
        t = by_id.get(r.get("id"))
        if t is None:
            continue
        adv = r["turn_advantages"]
        if len(adv) != len(t.turns):
            raise ValueError(f"{t.id}: {len(adv)} advantages for {len(t.turns)} turns")
        prompt, completion, owner = messages(t)
        out.append({
            "id": t.id, "group": r["group"], "prompt": prompt, "completion": completion,
            "advantages": [adv[k] if k >= 0 else None for k in owner],
            "turn_advantages": adv, "resolved": r["resolved"], "tokens": r["tokens"],
            "gate": r["gate"], "p": r["p"],
        })  # fmt: skip
    return out


def verl_row(row: dict[str, Any], task_id: str | None) -> dict[str, Any]:
    extra = {k: row[k] for k in ("id", "group", "advantages", "turn_advantages", "resolved",
                                 "tokens", "gate", "p")}  # fmt: skip
    return {
        "data_source": "agentpost",
        "prompt": row["prompt"],
        "ability": "agentic-coding",
        "reward_model": {"style": "rule", "ground_truth": json.dumps({"task_id": task_id})},
        "extra_info": {**extra, "task_id": task_id, "response": json.dumps(row["completion"])},
    }


def write(out_rows: list[dict[str, Any]], path: Path, fmt: str, trajs: list[Trajectory]) -> None:
    """Write ``out_rows`` as ``fmt`` to ``path`` (``documents.write.atomic_write``)."""
    from agentpost.documents.write import atomic_write, write_lines

    if fmt == "trl":
        write_lines(path, out_rows)
    else:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:  # comes with the train extra (datasets) and with verl
            from agentpost.errors import InputError

            raise InputError(None, "--export", "verl needs pyarrow: pip install pyarrow") from None

        task = {t.id: t.task_id for t in trajs}
        # prompt messages differ in keys; verl reads lists of {role, content}
        table = pa.Table.from_pylist([verl_row(r, task.get(r["id"])) for r in out_rows])
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        atomic_write(path, sink.getvalue().to_pybytes())
