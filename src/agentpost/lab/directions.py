"""The lab's pre-registered directions, and how a result is judged against each.

Written down (and committed) before the experiments ran: every comparison the lab reports, the
direction the papers lead us to expect (HERO.md (d) "direction checks" and its ablation table;
SCVD.md (d) "direction checks", Table 2 and Fig. 3), and the rule that turns a 95% interval into a
verdict:

- ``greater`` (a − b > 0): ``reproduced`` when the interval of a − b lies above 0, ``reversed``
  when it lies below 0, else ``inconclusive``; ``less`` is the mirror;
- ``noninferior`` (a ≥ b − margin, "keeps R"): ``reproduced`` when the interval's low end is
  above −margin, ``reversed`` when its high end is below −margin, else ``inconclusive``;
- ``below`` (a's own value under a threshold): ``reproduced`` when the interval's high end is
  below it, ``reversed`` when its low end is above it, else ``inconclusive``.

Metric names: HERO ``resolved`` (R), ``tokens`` (C_i per rollout, the paper's C),
``tokens_success`` (C_i per resolved rollout), ``low_entropy_unproductive`` (b.9.2: rate of
unproductive turns among a group's turns with h ≤ q20 minus the rate among the rest); SCVD
``pass1``, ``ICA``, ``W2R``, ``R2W``, ``turns_success``. Arm ``base`` is the policy before
training (the SFT checkpoint, or the SCVD student).

Layer: pure.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

VERDICTS = ("reproduced", "reversed", "inconclusive")
MARGIN = 0.05  # "keeps R": at most 5 points of resolution below


@dataclass(frozen=True)
class Direction:
    name: str
    expected: str
    metric: str
    a: str
    b: str | None  # None: a threshold on a's own value (``below``)
    relation: str  # greater | less | noninferior | below
    bound: float = 0.0  # margin (noninferior) or threshold (below)
    source: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def _r(a: str, b: str, rel: str, expected: str, source: str, metric: str = "resolved",
       bound: float = 0.0) -> Direction:  # fmt: skip
    return Direction(f"{a}_vs_{b}:{metric}", expected, metric, a, b, rel, bound, source)


HERO: tuple[Direction, ...] = (
    _r("grpo", "base", "greater", "GRPO raises resolution over the SFT start", "HERO (d) check 1"),
    _r(
        "grpo",
        "base",
        "greater",
        "GRPO raises tokens per rollout (4.5M → 6.8M)",
        "HERO (d) check 1",
        "tokens",
    ),  # fmt: skip
    _r(
        "hero",
        "grpo",
        "noninferior",
        "HERO resolves at least as much as GRPO",
        "HERO (d) check 2",
        bound=MARGIN,
    ),  # fmt: skip
    _r(
        "hero",
        "grpo",
        "less",
        "HERO uses clearly fewer tokens per rollout than GRPO",
        "HERO (d) check 2",
        "tokens",
    ),  # fmt: skip
    _r(
        "hero",
        "grpo",
        "less",
        "HERO uses fewer tokens per successful rollout than GRPO",
        "HERO (d) check 2 (per success: the lab's reading)",
        "tokens_success",
    ),  # fmt: skip
    _r(
        "no_hpo",
        "hero",
        "less",
        "no-HPO loses resolution (29.2 vs 40.0, the worst variant)",
        "HERO (d) ablations; check 3",
    ),  # fmt: skip
    _r("no_gating", "hero", "less", "no-gating loses resolution (36.0)", "HERO (d) check 3"),
    _r("no_clipping", "hero", "less", "no-clipping loses resolution (37.8)", "HERO (d) check 3"),
    _r(
        "no_calibration",
        "hero",
        "noninferior",
        "no-calibration keeps resolution (38.2)",
        "HERO (d) check 4",
        bound=MARGIN,
    ),  # fmt: skip
    _r(
        "no_calibration",
        "hero",
        "greater",
        "no-calibration loses the token savings (5.9M vs 4.5M)",
        "HERO (d) check 4",
        "tokens",
    ),  # fmt: skip
    _r(
        "no_coarse",
        "hero",
        "noninferior",
        "no-coarse keeps resolution (39.0)",
        "HERO (d) check 4",
        bound=MARGIN,
    ),  # fmt: skip
    _r(
        "no_coarse",
        "hero",
        "greater",
        "no-coarse loses the token savings (6.0M vs 4.5M)",
        "HERO (d) check 4",
        "tokens",
    ),  # fmt: skip
    _r("no_fine", "hero", "less", "no-fine loses resolution (37.8)", "HERO (d) ablations"),
    _r(
        "no_fine",
        "hero",
        "greater",
        "no-fine uses more tokens (4.9M vs 4.5M)",
        "HERO (d) ablations",
        "tokens",
    ),  # fmt: skip
    _r(
        "random_20",
        "hero",
        "less",
        "penalising random turns loses resolution (36.8)",
        "HERO (d) check 5",
    ),  # fmt: skip
    _r(
        "highest_entropy_20",
        "hero",
        "less",
        "penalising the highest-entropy turns loses resolution (36.0)",
        "HERO (d) check 5",
    ),  # fmt: skip
    _r(
        "random_20",
        "highest_entropy_20",
        "greater",
        "random > highest-entropy selection in resolution (36.8 vs 36.0)",
        "HERO (d) check 5",
    ),  # fmt: skip
    Direction(
        "base:low_entropy_unproductive",
        "unproductive turns are over-represented among "
        "a group's low-entropy turns (h ≤ q20) of the SFT policy",
        "low_entropy_unproductive",
        "base",
        None,
        "greater",
        0.0,
        "HERO b.9.2; (d) check 6",
    ),  # fmt: skip
)

SCVD: tuple[Direction, ...] = (
    _r(
        "scvd",
        "ftd",
        "greater",
        "SCVD beats FTD in PASS@1 (+4.5 to +8.6 pp)",
        "SCVD (d) checks; Table 2",
        "pass1",
    ),  # fmt: skip
    _r(
        "ftd",
        "base",
        "greater",
        "FTD improves on the base student (+1.1 to +8.6 pp)",
        "SCVD (d) checks; Table 2",
        "pass1",
    ),  # fmt: skip
    _r(
        "scvd",
        "base",
        "greater",
        "SCVD improves on the base student (+9.7 to +16.9 pp)",
        "SCVD Table 2",
        "pass1",
    ),  # fmt: skip
    _r(
        "scvd",
        "base",
        "greater",
        "SCVD raises W2R (wrong candidates repaired)",
        "SCVD Fig. 3",
        "W2R",
    ),  # fmt: skip
    Direction(
        "scvd:R2W",
        "R2W stays below 2% under SCVD",
        "R2W",
        "scvd",
        None,
        "below",
        0.02,
        "SCVD Fig. 3; (d) checks",
    ),  # fmt: skip
    _r(
        "scvd",
        "base",
        "greater",
        "SCVD raises ICA although its loss never touches the prefix (+5.5 pp)",
        "SCVD (d) decomposition",
        "ICA",
    ),  # fmt: skip
    _r(
        "scvd",
        "base",
        "less",
        "SCVD takes fewer turns than the base on successful rollouts (−12 to −36%)",
        "SCVD Table 7",
        "turns_success",
    ),  # fmt: skip
)


def verdict(d: Direction, ci: list[float] | None) -> str:
    """The verdict of ``d`` given the 95% interval of a − b (or of a, for ``below``)."""
    if ci is None:
        return "inconclusive"
    lo, hi = ci
    if d.relation == "greater":
        return "reproduced" if lo > 0 else "reversed" if hi < 0 else "inconclusive"
    if d.relation == "less":
        return "reproduced" if hi < 0 else "reversed" if lo > 0 else "inconclusive"
    if d.relation == "noninferior":
        m = -d.bound
        return "reproduced" if lo > m else "reversed" if hi < m else "inconclusive"
    if d.relation == "below":
        t = d.bound
        return "reproduced" if hi < t else "reversed" if lo > t else "inconclusive"
    raise ValueError(f"unknown relation {d.relation!r}")
