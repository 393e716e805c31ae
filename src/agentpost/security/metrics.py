"""SecPass metrics of spec b.9, over graded samples; aborted samples never enter a mean.

```
FuncPass     = mean(func)                 SecPass = mean(func ∧ sec)   (unconditional)
security_gap = FuncPass − SecPass         insec   = gap / FuncPass (NA when FuncPass = 0)
pass@k       = 1 − C(n−c, k) / C(n, k)    (unbiased; c successes of n samples)
```
A sample is a mapping with ``task``, ``func``, ``sec``, optional ``cwes`` and ``aborted``.
A sample whose status is not ``ok`` (unusable, no patch: func = sec = None) counts as func =
sec = false. ``func = None`` with a security verdict means the task has no functional test; it
counts as a functional pass ("vacuous if none", spec b.1), so SecPass is then the sec rate.

Layer: pure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from math import comb
from typing import Any


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021). Requires 0 ≤ c ≤ n and 1 ≤ k ≤ n."""
    if not (0 <= c <= n) or not (1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def _func(s: Mapping[str, Any]) -> bool:
    if s.get("func") is None:
        return s.get("sec") is not None and s.get("status", "ok") == "ok"
    return bool(s["func"])


def _secpass(s: Mapping[str, Any]) -> bool:
    return _func(s) and bool(s.get("sec"))


def _valid(samples: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [s for s in samples if not s.get("aborted")]


def summary(samples: Iterable[Mapping[str, Any]], ks: tuple[int, ...] = (1,)) -> dict[str, Any]:
    """FuncPass, SecPass, gap, insec and pass@k (per task, averaged) over non-aborted samples."""
    all_samples = list(samples)
    valid = _valid(all_samples)
    n = len(valid)
    inconclusive = sum(bool(s.get("sec_inconclusive")) for s in valid)  # counted as sec ✓ (b.9)
    out: dict[str, Any] = {
        "n": n,
        "aborted": len(all_samples) - n,
        "sec_inconclusive": inconclusive,
    }
    if n == 0:
        out.update(func_pass=None, sec_pass=None, security_gap=None, insec=None)
        return out
    f = sum(map(_func, valid)) / n
    sp = sum(map(_secpass, valid)) / n
    out.update(func_pass=f, sec_pass=sp, security_gap=f - sp, insec=(f - sp) / f if f > 0 else None)
    by_task: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for s in valid:
        by_task[str(s.get("task"))].append(s)
    for k in ks:
        for name, ok in (("func", _func), ("sec", _secpass)):
            vals = [pass_at_k(len(g), sum(map(ok, g)), k) for g in by_task.values() if len(g) >= k]
            out[f"{name}_pass@{k}"] = sum(vals) / len(vals) if vals else None
    return out


def per_cwe(samples: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``summary`` per CWE id (a sample with several CWEs counts under each)."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for s in samples:
        for c in s.get("cwes") or ["unknown"]:
            groups[f"CWE-{c}" if isinstance(c, int) else str(c)].append(s)
    return {k: summary(v) for k, v in sorted(groups.items())}


def by_agent(samples: Iterable[Mapping[str, Any]], ks: tuple[int, ...] = (1,)) -> dict[str, Any]:
    """``summary`` per ``agent`` field (``all`` when absent), agents in sorted order."""
    rows = list(samples)
    agents = sorted({str(r.get("agent", "all")) for r in rows})
    return {a: summary([r for r in rows if str(r.get("agent", "all")) == a], ks) for a in agents}
