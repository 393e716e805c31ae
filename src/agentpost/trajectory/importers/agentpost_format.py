"""agentpost's own canonical JSONL (``agentpost.trajectory/1``): validated, kept as it is, so
re-importing an export gives identical output.

Layer: io.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentpost.trajectory.importers import _common as c
from agentpost.trajectory.model import Trajectory

NAME = "agentpost"


def convert_lines(lines: list[tuple[int, Any]], ctx: c.Ctx, keep_raw: bool = False) -> list:
    out = []
    for lineno, obj in lines:
        try:
            out.append(Trajectory.model_validate(obj))
        except ValidationError as e:
            err = e.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise c.InputError(ctx.path, f"line {lineno}: $.{where}", err["msg"]) from None
    return out
