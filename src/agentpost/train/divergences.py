"""Per-token distillation losses between the student π_θ and the hinted teacher π_T (spec b.7).

**Training surrogates** (one signature: ``(s, s_old, u, lam) -> loss``, [B, T] → [B, T]) with
s = log π_θ(y_t) (live, differentiable), s_old = its value when y_t was sampled, u = log π_T(y_t)
(the release asks the teacher for ``teacher_topk = 1``) and the clipped importance ratio
ρ = clip(e^{s − s_old}, 0, 100). Each returns the per-token loss whose autograd gradient is the
one the release's trainer uses (``compute_reverse_kl`` in the slime fork the release pins; spec
b.7 "What the release's trainer actually computes"); sg[·] is stop-gradient:

| kind | loss_t | ρ | gradient | E_{y~π_θ} of the gradient |
|---|---|---|---|---|
| ``js_skew`` (default) | sg[c]·sg[ρ]·s, c = −log(λ·clip(e^{u−s}, 0, 100) + 1 − λ) | detached | ρ·c·∇s | ∇ KL(π_θ ‖ m_λ), m_λ = λπ_T + (1−λ)π_θ held fixed |
| ``k1`` | ρ·sg[s − u] | live | ρ·(s − u)·∇s | ∇ KL(π_θ ‖ π_T) |
| ``k2`` | ½·(sg[ρ]·(s − u))² | detached, squared | ρ²·(s − u)·∇s | ∇ KL(π_θ ‖ π_T) |
| ``k3`` | ρ·(clip(e^{u−s}, 0, 100) − 1 + (s − u)) | live | ρ·(s − u)·∇s | ∇ KL(π_θ ‖ π_T) (reverse) |
| ``js_sym`` (alternative) | ρ·D̂_λ(s, u) | live | ρ·(D̂ + ∂D̂/∂s)·∇s | ∇ D_λ (symmetric, below) |

c = s − log m_λ(y_t), so ``js_skew`` is the score-function surrogate of the skew reverse KL and
its gradient equals k1's at λ = 1. For ``k3`` the live ratio carries the score function:
differentiating k3 through s alone gives (1 − e^{u−s})·∇s, whose expectation is the gradient of
the *forward* KL(π_T ‖ π_θ), the wrong direction. Samples drawn from π_old are reweighted by ρ,
so every row but ``k2`` is unbiased off-policy too (up to the clip); ``k2`` weighs by ρ², as the
release does. On-policy (one PPO epoch, s_old = sg[s]) ρ = 1 in value.

``js_sym`` keeps agentpost's earlier objective, the symmetric
D_λ = λ·KL(π_θ ‖ m) + (1−λ)·KL(π_T ‖ m), m = (1−λ)·π_θ + λ·π_T (plain JS at λ 0.5), through its
single-sample estimate D̂_λ = λ·(s − log m) + (1−λ)·e^{u−s}·(u − log m), E_{π_θ}[D̂_λ] = D_λ. It is
not what the release optimises; the live ratio makes its gradient the gradient of D_λ itself
(score function plus pathwise term; a pathwise derivative alone, as agentpost used before, is
not the gradient of any of these objectives).

**Values** for logging and checks: ``k1_value``, ``k2_value``, ``k3_value``, ``js_sym_value``
(the estimators, [B, T]); **exact divergences** over a full support (last axis the vocabulary,
[..., V] → [...]): ``kl_exact``, ``skew_kl_exact`` (KL(p ‖ λq + (1−λ)p)), ``d_lambda_exact``.
Inputs are torch tensors (torch imported lazily).

Layer: pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

Divergence = Literal["js_skew", "k1", "k2", "k3", "js_sym"]
DIVERGENCES = ("js_skew", "k1", "k2", "k3", "js_sym")
RATIO_CLIP = 100.0  # the release's clip on both e^{s − s_old} and e^{u − s}


def _check_lam(lam: float) -> None:
    if not 0.0 < lam <= 1.0:
        raise ValueError(f"js_skew λ must be in (0, 1], got {lam}")


def clipped_ratio(s: Any, s_old: Any) -> Any:
    """ρ = clip(e^{s − s_old}, 0, 100), live (callers detach where the release does)."""
    import torch

    return torch.clamp(torch.exp(s - s_old), 0.0, RATIO_CLIP)


def skew_coefficient(s: Any, u: Any, lam: float = 0.5) -> Any:
    """c = −log(λ·clip(e^{u−s}, 0, 100) + 1 − λ) = s − log m_λ(y_t) (unclipped), detached."""
    import torch

    _check_lam(lam)
    ratio = torch.clamp(torch.exp(u - s), 0.0, RATIO_CLIP)
    return (-torch.log(torch.clamp(lam * ratio + (1.0 - lam), min=1e-8))).detach()


def js_skew(s: Any, s_old: Any, u: Any, lam: float = 0.5) -> Any:
    """The release's default: sg[c]·sg[ρ]·s (module table). [B, T] → [B, T]."""
    return skew_coefficient(s, u, lam) * clipped_ratio(s, s_old).detach() * s


def k1(s: Any, s_old: Any, u: Any, lam: float = 0.5) -> Any:
    """ρ·sg[s − u]; ``lam`` unused (one signature for the family). [B, T] → [B, T]."""
    return clipped_ratio(s, s_old) * (s - u).detach()


def k2(s: Any, s_old: Any, u: Any, lam: float = 0.5) -> Any:
    """½·(sg[ρ]·(s − u))²; ``lam`` unused. [B, T] → [B, T]."""
    return 0.5 * (clipped_ratio(s, s_old).detach() * (s - u)) ** 2


def k3(s: Any, s_old: Any, u: Any, lam: float = 0.5) -> Any:
    """ρ·(clip(e^{u−s}, 0, 100) − 1 + (s − u)), ρ live; ``lam`` unused. [B, T] → [B, T]."""
    import torch

    ratio = torch.clamp(torch.exp(u - s), 0.0, RATIO_CLIP)
    return clipped_ratio(s, s_old) * (ratio - 1.0 + (s - u))


def js_sym(s: Any, s_old: Any, u: Any, lam: float = 0.5) -> Any:
    """ρ·D̂_λ(s, u), ρ live: the gradient of the symmetric D_λ. [B, T] → [B, T]."""
    return clipped_ratio(s, s_old) * js_sym_value(s, u, lam)


SURROGATES: dict[str, Callable[..., Any]] = {
    "js_skew": js_skew, "k1": k1, "k2": k2, "k3": k3, "js_sym": js_sym,
}  # fmt: skip


def token_loss(kind: Divergence, s: Any, s_old: Any, u: Any, lam: float = 0.5) -> Any:
    """The per-token training term for ``kind`` ([B, T] → [B, T])."""
    if kind not in SURROGATES:
        raise ValueError(f"divergence must be one of {DIVERGENCES}, got {kind!r}")
    return SURROGATES[kind](s, s_old, u, lam)


def k1_value(s: Any, u: Any) -> Any:
    """s − u; E_{π_θ} = KL(π_θ ‖ π_T)."""
    return s - u


def k2_value(s: Any, u: Any) -> Any:
    """½(s − u)²."""
    return 0.5 * (s - u) ** 2


def k3_value(s: Any, u: Any) -> Any:
    """e^{u−s} − 1 + (s − u) ≥ 0; E_{π_θ} = KL(π_θ ‖ π_T)."""
    import torch

    return torch.exp(u - s) - 1.0 + (s - u)


def js_sym_value(s: Any, u: Any, lam: float = 0.5) -> Any:
    """D̂_λ = λ·(s − log m) + (1−λ)·e^{u−s}·(u − log m); E_{π_θ} = D_λ. [B, T] → [B, T]."""
    import torch

    _check_lam(lam)
    if lam == 1.0:  # m = π_T: the reverse-KL limit
        return s - u
    log_m = torch.logaddexp(math.log(1.0 - lam) + s, math.log(lam) + u)
    return lam * (s - log_m) + (1.0 - lam) * torch.exp(u - s) * (u - log_m)


def kl_exact(logp: Any, logq: Any) -> Any:
    """KL(p‖q) = Σ_v p_v (log p_v − log q_v) over the last axis. [..., V] → [...]."""
    import torch

    return (torch.exp(logp) * (logp - logq)).sum(-1)


def skew_kl_exact(logp: Any, logq: Any, lam: float = 0.5) -> Any:
    """KL(p ‖ λq + (1−λ)p) over the last axis (``js_skew``'s objective). [..., V] → [...]."""
    import torch

    _check_lam(lam)
    if lam == 1.0:
        return kl_exact(logp, logq)
    return kl_exact(logp, torch.logaddexp(math.log(1.0 - lam) + logp, math.log(lam) + logq))


def d_lambda_exact(logp: Any, logq: Any, lam: float = 0.5) -> Any:
    """D_λ = λ·KL(p‖m) + (1−λ)·KL(q‖m), m = (1−λ)p + λq (``js_sym``'s objective). [..., V] → [...]."""
    import torch

    _check_lam(lam)
    if lam == 1.0:
        return kl_exact(logp, logq)
    log_m = torch.logaddexp(math.log(1.0 - lam) + logp, math.log(lam) + logq)
    return lam * kl_exact(logp, log_m) + (1.0 - lam) * kl_exact(logq, log_m)
