"""Teacher-only hints at levels L1–L4 (spec b.7; each level includes the previous one).

| level | reveals |
|---|---|
| L1 | CWE id(s) only |
| L2 | + CWE name and description (``security.cwe.load_names``: the package's own text, or MITRE's official text from a catalog you pass) |
| L3 | + where and how: the sink and the missing check (task.toml ``hints.L3``) |
| L4 | + a concrete triggering input, the expected secure behaviour and the defence (``hints.L4``) |

L2 and L3 are the spec's proposed definitions (the sources leave them undefined).

Layer: pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

LEVELS = ("L1", "L2", "L3", "L4")


def hint(
    level: str,
    cwes: Sequence[int],
    task_hints: Mapping[str, str],
    cwe_names: Mapping[str, Mapping[str, str]],
) -> str:
    """The hint text at ``level`` for a task with ``cwes``; ValueError on an unknown level or a
    task without the L3/L4 text the level needs."""
    if level not in LEVELS:
        raise ValueError(f"hint level must be one of {LEVELS}, got {level!r}")
    k = LEVELS.index(level)
    parts = [", ".join(f"CWE-{c}" for c in cwes)]
    if k >= 1:
        for c in cwes:
            info = cwe_names.get(str(c))
            if info:
                parts.append(f"CWE-{c} {info['name']}: {info['description']}")
    for needed in LEVELS[2 : k + 1]:
        text = task_hints.get(needed)
        if not text:
            raise ValueError(f"task has no {needed} hint text")
        parts.append(text)
    return "\n".join(parts)


def hints_for(
    cwes: Sequence[int], task_hints: Mapping[str, str], cwe_names: Mapping[str, Mapping[str, str]]
) -> dict[str, str]:
    """``{L1..L4}`` for one task, as stored per task (spec b.7)."""
    return {lv: hint(lv, cwes, task_hints, cwe_names) for lv in LEVELS}


def rl_record(
    task_id: str, instruction: str, cwes: Sequence[int], teacher_hint: str | None = None,
    task_type: str = "security_coding",
) -> dict:  # fmt: skip
    """One RL/OPD prompt record in the release contract ``{prompt, label, metadata: {task_type,
    …, teacher_hint?}}`` (spec c). The hint is teacher-only: it must never occur in the prompt."""
    if teacher_hint and teacher_hint in instruction:
        raise ValueError(f"{task_id}: the teacher hint occurs in the student prompt")
    meta: dict = {"task_type": task_type, "cwes": list(cwes)}
    if teacher_hint:
        meta["teacher_hint"] = teacher_hint
    return {"prompt": instruction, "label": task_id, "metadata": meta}
