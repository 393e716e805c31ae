"""Data types of the security area: a security task, a grade, a behaviour annotation.

Layer: model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Label = Literal["none", "generic", "target_aligned"]
BEHAVIOURS = ("planning", "coding", "testing")
LABELS = ("none", "generic", "target_aligned")
GradeStatus = Literal[
    "ok",  # the candidate was applied and both test runs gave a verdict
    "unusable",  # it does not import or its server does not start
    "patch_failed",  # no apply strategy worked
    "no_patch",  # nothing submitted, or a directory identical to the starter
    "empty_patch",  # an empty diff
    "invalid_patch",  # text with no file section and hunk
    "tests_only",  # every file section touched tests (stripped)
    "aborted",  # infrastructure error or timeout: reward 0, group dropped
]


@dataclass(frozen=True)
class SecurityTask:
    """A bundled security task. Host paths are absolute; the candidate lives in ``/app``.

    ``sink`` and ``security_test`` form the hidden reference the agent never sees; ``hints``
    holds the task-specific L3/L4 texts (L1/L2 come from the CWE ids, see hints.py).
    """

    id: str
    path: Path
    kind: str  # "web" | "library"
    cwes: tuple[int, ...]
    entry: str
    instruction: str
    sink: str
    security_test: str
    hints: dict[str, str]
    environment_dir: Path
    tests_dir: Path
    harness: Path
    references: dict[str, Path] = field(default_factory=dict)  # "secure"/"vulnerable" → dir

    def reference(self) -> dict[str, Any]:
        """The hidden reference shown to judges (spec b.2)."""
        return {"cwes": list(self.cwes), "sink": self.sink, "security_test": self.security_test}


@dataclass
class Grade:
    """What grading said about one candidate (spec b.6, b.9)."""

    task_id: str
    status: GradeStatus
    func: bool | None
    sec: bool | None
    reward: float
    aborted: bool = False
    patch_applied: bool | None = None
    patch_valid: bool | None = None
    apply_strategy: str | None = None
    sec_inconclusive: bool = False
    stripped_test_files: list[str] = field(default_factory=list)
    detail: str = ""
    duration_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["duration_s"] = round(self.duration_s, 3)
        return out
