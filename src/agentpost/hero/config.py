"""HERO hyperparameters as one dataclass, plus a paper index that maps each paper setting to it.

Every field is a keyword of :func:`agentpost.hero.advantage.hero_advantages`;
``HeroConfig(...).kwargs()`` hands them over. ``ABLATIONS`` names every b.11 variant of the spec
(``../shared/spec/HERO.md``) as a set of switch overrides, so an ablation is data, not a branch.

Layer: model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, get_args

CoarseForm = Literal["tanh", "linear_clip", "log"]
CoarseNorm = Literal["none", "subset_std"]
ResNorm = Literal["std", "none"]
Selection = Literal["low", "random", "highest"]

# The string-valued options of ``hero_advantages`` and the values each accepts.
OPTIONS: dict[str, tuple[str, ...]] = {
    "res_norm": get_args(ResNorm),
    "coarse_norm": get_args(CoarseNorm),
    "coarse_form": get_args(CoarseForm),
    "selection": get_args(Selection),
}


def check_options(**given: str) -> None:
    """``ValueError`` naming the option and its allowed values when a value is not one of them."""
    for name, value in given.items():
        if value not in OPTIONS[name]:
            raise ValueError(f"{name} must be one of {', '.join(OPTIONS[name])}; got {value!r}")


# b.11: each variant is a set of overrides of the switches below (the full HERO is the default).
ABLATIONS: dict[str, dict[str, Any]] = {
    "hero": {},
    "grpo": {"lam": 0.0},
    "no_hpo": {"gating": False, "clipping": False},
    "no_gating": {"gating": False},
    "no_clipping": {"clipping": False},
    "no_calibration": {"calibration": False},
    "no_coarse": {"coarse": False},
    "no_fine": {"fine": False},
    "random_20": {"selection": "random"},
    "highest_entropy_20": {"selection": "highest"},
}


@dataclass(frozen=True)
class HeroConfig:
    """Hyperparameters of the HERO advantage (spec b.3-b.7, b.11) and of the GRPO loss around it.

    Defaults are the paper's 4B/9B setting; the ``[unspecified]`` ones are toolkit choices
    documented in the spec's section (e).
    """

    tau: float = 0.6  # gate threshold on the group resolution rate p            [paper]
    lam: float = 0.3  # gate ceiling λ                                           [paper]
    penalty_percentile: float = 20.0  # low-entropy turn percentile q            [paper]
    coarse_form: CoarseForm = "tanh"  # e = tanh(1 - C/m_y)                      [unspecified]
    coarse_norm: CoarseNorm = "none"
    res_norm: ResNorm = "std"
    eps: float = 1e-6
    # b.11 switches (set through ``ablation`` or one by one)
    gating: bool = True  # False: w ≡ λ for every group
    clipping: bool = True  # False: Γ = identity
    calibration: bool = True  # False: one median over the whole group
    coarse: bool = True  # False: A^traj ≡ 0
    fine: bool = True  # False: P ≡ 0
    selection: Selection = "low"  # which turns get the penalty multiset
    seed: int = 0  # random-20% selection
    # Loss (b.7), used by the trainers only
    clip_low: float = 0.2
    clip_high: float = 0.28
    kl_coef: float = 0.0
    learning_rate: float = 1e-6
    entropy_topk: int = 10
    entropy_renorm: bool = True

    def __post_init__(self) -> None:
        """Out-of-range values fail here, naming the field (the CLI turns the ``ValueError``
        into a one-line input error), not after a run has used them."""
        check_options(res_norm=self.res_norm, coarse_norm=self.coarse_norm,
                      coarse_form=self.coarse_form, selection=self.selection)  # fmt: skip
        rules = {
            "tau": 0.0 <= self.tau <= 1.0,
            "lam": 0.0 <= self.lam < float("inf"),
            "penalty_percentile": 0.0 < self.penalty_percentile <= 100.0,
            "eps": 0.0 < self.eps < float("inf"),
            "clip_low": 0.0 <= self.clip_low < float("inf"),
            "clip_high": self.clip_low <= self.clip_high < float("inf"),
            "kl_coef": 0.0 <= self.kl_coef < float("inf"),
            "learning_rate": 0.0 < self.learning_rate < float("inf"),
            "entropy_topk": self.entropy_topk >= 1,
        }
        bounds = {"tau": "in [0, 1]", "lam": ">= 0", "penalty_percentile": "in (0, 100]",
                  "eps": "> 0", "clip_low": ">= 0", "clip_high": ">= clip_low", "kl_coef": ">= 0",
                  "learning_rate": "> 0", "entropy_topk": ">= 1"}  # fmt: skip
        for name, ok in rules.items():
            if not ok:  # NaN fails every comparison, so it lands here too
                raise ValueError(
                    f"HeroConfig.{name} must be {bounds[name]}, got {getattr(self, name)!r}"
                )

    def with_ablation(self, name: str | None) -> HeroConfig:
        """This config with the b.11 variant ``name`` applied (``None`` or ``"hero"``: as is)."""
        if name is None:
            return self
        if name not in ABLATIONS:
            raise ValueError(f"unknown ablation {name!r}; known: {', '.join(ABLATIONS)}")
        return replace(self, **ABLATIONS[name])

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``hero_advantages``."""
        keys = (
            "tau",
            "lam",
            "penalty_percentile",
            "coarse_form",
            "coarse_norm",
            "res_norm",
            "eps",
            "gating",
            "clipping",
            "calibration",
            "coarse",
            "fine",
            "selection",
            "seed",
        )
        return {k: getattr(self, k) for k in keys}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# Paper index (TRL style): each setting of the paper and the config that reproduces it.
PAPER_INDEX: dict[str, HeroConfig] = {
    "qwen3.5-4b": HeroConfig(tau=0.6, lam=0.3),
    "qwen3.5-9b": HeroConfig(tau=0.6, lam=0.3),
    "qwen3.5-35b-a3b": HeroConfig(tau=0.8, lam=0.1),
    **{f"qwen3.5-4b/{name}": HeroConfig().with_ablation(name) for name in ABLATIONS},
}
