"""Words for every number the report shows, placed where the number is first shown.

Layer: pure.
"""

from __future__ import annotations

from typing import Any

from agentpost.report.svg import fmt_num

ACRONYMS = {
    "HERO": "hierarchical efficiency RL: token efficiency and its training advantage",
    "SCVD": "student-conditioned verification distillation: can the agent's self-checks be trusted",
    "SecureVibe": "security planning and testing of generated code",
    "TRS": "token-resolution score = R / sqrt(1 + C), R = resolution rate in %, C = mean tokens "
    "per run in millions",
    "VTR": "verification trigger rate: share of candidate solutions the agent went on to check",
    "EDR": "error detection rate: share of wrong candidates its check flagged as an error",
    "RSR": "repair success rate: share of detected wrong candidates repaired by the end",
    "final acc.": "share of runs whose final state passes the task's tests (PASS@1)",
    "FuncPass": "share of security-suite tasks whose functional tests pass",
    "SecPass": "share of tasks that pass the functional tests and resist every exploit",
    "security gap": "FuncPass − SecPass: working code that is exploitable",
}


def acronyms(keys: list[str]) -> str:
    """'KEY: words; …' for the keys a table uses."""
    return "; ".join(f"{k}: {ACRONYMS[k]}" for k in keys if k in ACRONYMS) + "."


def trs_caveat(models: list[dict[str, Any]]) -> str | None:
    """TRS barely moves when runs use thousands of tokens: sqrt(1 + C) with C in millions is
    ≈ 1 + C/2, so 40k tokens cost 2% of TRS. Say so, with this data's numbers."""
    toks = [m.get("mean_tokens_m") for m in models if m.get("mean_tokens_m") is not None]
    if not toks or max(toks) >= 0.1:
        return None
    lo, hi = min(toks), max(toks)
    ratio = (
        f" although the most costly model uses {hi / lo:.0f}x the tokens of the least" if lo else ""
    )
    return (
        f"Small-token caveat: mean tokens per run here are {fmt_num(lo * 1e6)} to "
        f"{fmt_num(hi * 1e6)}, so sqrt(1 + C in millions) is at most {(1 + hi) ** 0.5:.3f}, and "
        f"TRS differs from the resolution rate by under {100 * (1 - (1 + hi) ** -0.5):.1f} "
        f"points{ratio}. At this scale compare mean tokens, not TRS."
    )


def cost_units(prices: dict[str, Any] | None) -> str:
    """What the cost column counts, from the analysis' prices (per million tokens; documents
    written before ``agentpost.prices`` priced per token and carry no ``per_tokens``)."""
    p = prices or {}
    unit = p.get("unit", "relative")
    per = p.get("per_tokens", 1)
    scale = (
        "a million uncached input tokens cost"
        if per == 1_000_000
        else "an uncached input token costs"
    )
    words = f"relative units ({scale} 1)" if unit == "relative" else f"{unit}"
    return (
        f"Cost per task is Σ (uncached input × {fmt_num(p.get('input', 1.0))} + cached input × "
        f"{fmt_num(p.get('cached', 0.1))} + output × {fmt_num(p.get('output', 1.0))})"
        f"{' / 1M' if per == 1_000_000 else ''} over the run's calls, in {words}; set real prices "
        "(per 1M tokens) with `agentpost efficiency --price-in --price-cached --price-out "
        "--price-unit`."
    )


SCVD_TERMS = (
    "Terms: a candidate is the agent's first complete attempt at the solution; I_c = 1 when "
    "one exists, and t_c is the point where it is complete. I_v = 1 when the agent then checks "
    "it (runs tests, inspects output). y_c is whether the candidate really passes the task's "
    "tests (1) or not (0), measured by replaying the run up to t_c in a fresh sandbox. z is "
    "what the agent's first check concluded: error, no-error, or unresolved. y_f is whether "
    "the final state passes."
)
