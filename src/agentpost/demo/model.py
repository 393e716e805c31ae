"""The demo's shared types: what every stage gets (``Demo``) and how a stage says it finished with
some items failed (``PartialStage``). Apart from ``pipeline`` so that the stages and the pipeline
that chains them import it, not each other.

Layer: model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Progress = Callable[[str], None]


@dataclass
class Demo:
    """What every stage gets: the output directory, the options and the sandbox backend
    (``backend`` by name, ``box`` the instance), the progress printer, and ``state`` (input
    hashes of the cheap stages, kept in ``demo.json``)."""

    out: Path
    attempts: int = 1
    limit: int | None = None
    backend: str = "bwrap"
    box: Any = None
    progress: Progress = print
    state: dict[str, Any] = field(default_factory=dict)


class PartialStage(Exception):
    """A stage finished with some items failed; ``value`` is still usable downstream."""

    def __init__(self, message: str, value: Any):
        super().__init__(message)
        self.value = value
