"""agentpost's own canonical JSONL (``agentpost.trajectory/1``): validated, kept as it is, so
re-importing an export gives identical output.

Layer: io.
"""

from __future__ import annotations

from typing import Any

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.io import validate

NAME = "agentpost"


def convert_lines(lines: list[tuple[int, Any]], ctx: c.Ctx, keep_raw: bool = False) -> list:
    return [validate(obj, ctx.path, f"line {lineno}") for lineno, obj in lines]
