"""Replay fidelity: how closely replayed observations match the recorded ones.

A diagnostic only (SCVD b.5: never a reason to exclude a replay). Per call: whether the exit
codes match (when both are known) and a normalised text similarity in [0, 1] (difflib ratio
over text with ANSI escapes, carriage returns and trailing blanks removed, capped in length so
a huge output costs O(cap^2) at most).

Layer: pure.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_PROMPT_HOST = re.compile(r"(?m)^[\w.-]+@[\w.-]+:")  # root@CONTAINER_ID:/app# vs root@sandbox:/app#
_BANNERS = {"New Terminal Output:", "Current terminal state:"}  # Terminus observation headers
# Scaffold wrappers around a command's output: mini-swe-agent's tags, SWE-agent's status footer.
_WRAPPERS = re.compile(
    r"</?returncode>\d*(</returncode>)?|</?output>|^\((Open file|Current directory): .*\)$|^bash-\$$",
    re.M,
)
CAP = 2000


def normalize(text: str | None, cap: int = CAP) -> str:
    """Text without ANSI escapes, ``\\r``, trailing spaces, blank lines, Terminus banners,
    prompt host names and scaffold wrappers (mini-swe-agent tags, SWE-agent footers); the last ``cap`` characters (a long output's tail is where the verdict
    usually is)."""
    if not text:
        return ""
    text = _ANSI.sub("", text).replace("\r", "")
    text = _WRAPPERS.sub("", _PROMPT_HOST.sub("@:", text))
    lines = [ln.rstrip() for ln in text.split("\n")]
    out = "\n".join(ln for ln in lines if ln and ln not in _BANNERS)
    return out[-cap:]


def similarity(a: str | None, b: str | None) -> float:
    """Normalised similarity of two observation texts (1.0 when both are empty)."""
    na, nb = normalize(a), normalize(b)
    if not na and not nb:
        return 1.0
    return difflib.SequenceMatcher(None, na, nb, autojunk=False).ratio()


@dataclass(frozen=True)
class CallFidelity:
    exit_match: bool | None  # None: an exit code is missing on either side
    text_similarity: float | None  # None: nothing recorded to compare with


def compare(
    recorded_text: str | None, recorded_exit: int | None, text: str | None, exit_code: int | None
) -> CallFidelity:
    exit_match = None if recorded_exit is None or exit_code is None else recorded_exit == exit_code
    sim = None if recorded_text is None else similarity(recorded_text, text)
    return CallFidelity(exit_match, sim)


def summarize(calls: list[CallFidelity]) -> dict:
    """``{"calls_compared", "exit_code_match", "text_similarity", "exit_codes_compared",
    "exit_codes_matched"}``: fractions and means over the calls that have something to compare
    (None when none has), and the counts behind the exit-code fraction."""
    exits = [c.exit_match for c in calls if c.exit_match is not None]
    sims = [c.text_similarity for c in calls if c.text_similarity is not None]
    return {
        "calls_compared": sum(
            1 for c in calls if c.exit_match is not None or c.text_similarity is not None
        ),
        "exit_code_match": round(sum(exits) / len(exits), 4) if exits else None,
        "text_similarity": round(sum(sims) / len(sims), 4) if sims else None,
        "exit_codes_compared": len(exits),
        "exit_codes_matched": sum(exits),
    }
