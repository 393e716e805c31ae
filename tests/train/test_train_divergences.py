"""Each distillation surrogate against the objective it is meant to optimise, on small categorical
distributions: the surrogate's autograd gradient with respect to the student logits, averaged
exactly over every token weighted by its sampling probability, must equal a central finite
difference of the exact objective (float64). Off-policy samples come from π_old and are
reweighted by the clipped ratio, as in the release."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from agentpost.train.divergences import (  # noqa: E402
    DIVERGENCES,
    d_lambda_exact,
    js_skew,
    js_sym_value,
    k1,
    k1_value,
    k2,
    k3,
    k3_value,
    kl_exact,
    skew_coefficient,
    skew_kl_exact,
    token_loss,
)

V = 6


def logits(seed: int, scale: float = 1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(V, generator=g, dtype=torch.float64) * scale


def surrogate_grad(kind, theta, logq, lam=0.5, theta_old=None):
    """Σ_y π_old(y)·∇_θ loss(s_y, s_old_y, u_y): the expected gradient of the surrogate when y is
    drawn from π_old (π_θ itself when ``theta_old`` is None)."""
    th = theta.clone().requires_grad_(True)
    s = torch.log_softmax(th, -1)
    s_old = s.detach() if theta_old is None else torch.log_softmax(theta_old, -1)
    w = torch.exp(s_old).detach()
    (g,) = torch.autograd.grad((w * token_loss(kind, s, s_old, logq, lam)).sum(), th)
    return g


def fd_grad(objective, theta, h=1e-6):
    """Central finite differences of a scalar function of the logits."""
    out = torch.zeros_like(theta)
    for i in range(theta.numel()):
        e = torch.zeros_like(theta)
        e[i] = h
        out[i] = (objective(theta + e) - objective(theta - e)) / (2 * h)
    return out


def objective(kind, theta, logq, lam):
    """The objective each surrogate's gradient should match, as a function of the logits."""
    if kind == "js_skew":  # KL(π_θ ‖ m_λ) with m_λ = λπ_T + (1−λ)π_θ held fixed at θ
        log_m = torch.logaddexp(
            math.log(lam) + logq, math.log(1 - lam) + torch.log_softmax(theta, -1)
        ) if lam < 1 else logq  # fmt: skip
        return lambda t: float(kl_exact(torch.log_softmax(t, -1), log_m))
    if kind == "js_sym":
        return lambda t: float(d_lambda_exact(torch.log_softmax(t, -1), logq, lam))
    return lambda t: float(kl_exact(torch.log_softmax(t, -1), logq))  # k1, k2, k3: reverse KL


@pytest.mark.parametrize("kind", DIVERGENCES)
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("lam", [0.2, 0.5, 1.0])
def test_on_policy_gradient_is_the_gradient_of_the_stated_objective(kind, seed, lam):
    theta, logq = logits(seed), torch.log_softmax(logits(seed + 100), -1)
    got = surrogate_grad(kind, theta, logq, lam)
    ref = fd_grad(objective(kind, theta, logq, lam), theta)
    assert torch.allclose(got, ref, atol=1e-8), (kind, got, ref)
    assert float(ref.abs().max()) > 1e-3  # not a vacuous comparison


@pytest.mark.parametrize("kind", ["js_skew", "k1", "k3", "js_sym"])
@pytest.mark.parametrize("seed", range(3))
def test_off_policy_samples_reweighted_by_the_ratio_keep_the_gradient(kind, seed):
    theta, logq = logits(seed), torch.log_softmax(logits(seed + 100), -1)
    theta_old = theta + 0.3 * logits(seed + 200)  # ratios well inside the clip
    got = surrogate_grad(kind, theta, logq, 0.5, theta_old)
    ref = fd_grad(objective(kind, theta, logq, 0.5), theta)
    assert torch.allclose(got, ref, atol=1e-8), (kind, got, ref)


def test_k2_weighs_off_policy_samples_by_the_squared_ratio_as_the_release_does():
    theta, logq = logits(1), torch.log_softmax(logits(101), -1)
    theta_old = theta + 0.3 * logits(201)
    got = surrogate_grad("k2", theta, logq, 0.5, theta_old)
    th = theta.clone().requires_grad_(True)
    s, s_old = torch.log_softmax(th, -1), torch.log_softmax(theta_old, -1)
    rho = torch.exp(s - s_old).detach()
    # Σ π_old ρ² (s − u) ∇s = Σ π_θ ρ (s − u) ∇s: a ρ-weighted reverse-KL gradient, biased
    (closed,) = torch.autograd.grad((torch.exp(s_old) * rho**2 * (s - logq).detach() * s).sum(), th)
    assert torch.allclose(got, closed, atol=1e-12)
    ref = fd_grad(objective("k2", theta, logq, 0.5), theta)
    assert not torch.allclose(got, ref, atol=1e-4)


def test_k3_descends_the_reverse_kl_and_its_pathwise_derivative_the_forward_kl():
    theta, logq = logits(4), torch.log_softmax(logits(104), -1)
    reverse = fd_grad(lambda t: float(kl_exact(torch.log_softmax(t, -1), logq)), theta)
    forward = fd_grad(lambda t: float(kl_exact(logq, torch.log_softmax(t, -1))), theta)
    assert not torch.allclose(reverse, forward, atol=1e-2)  # the two directions differ here
    got = surrogate_grad("k3", theta, logq)
    assert torch.allclose(got, reverse, atol=1e-8)
    assert not torch.allclose(got, forward, atol=1e-2)
    # the earlier form, k3 differentiated through s alone, follows the forward KL instead
    th = theta.clone().requires_grad_(True)
    s = torch.log_softmax(th, -1)
    (pathwise,) = torch.autograd.grad((torch.exp(s).detach() * k3_value(s, logq)).sum(), th)
    assert torch.allclose(pathwise, forward, atol=1e-8)
    # one small step along −∇ lowers the reverse KL
    before = float(kl_exact(torch.log_softmax(theta, -1), logq))
    assert float(kl_exact(torch.log_softmax(theta - 1e-2 * got, -1), logq)) < before


def test_js_skew_at_lambda_one_has_k1s_gradient():
    theta, logq = logits(5), torch.log_softmax(logits(105), -1)
    theta_old = theta + 0.2 * logits(205)
    for old in (None, theta_old):
        a = surrogate_grad("js_skew", theta, logq, 1.0, old)
        b = surrogate_grad("k1", theta, logq, 1.0, old)
        assert torch.allclose(a, b, atol=1e-12)


def test_the_ratio_is_clipped_at_100_detached_in_js_skew_and_live_in_k1_and_k3():
    s = torch.tensor([-1.0], dtype=torch.float64, requires_grad=True)
    s_old = torch.tensor([-1.0 - math.log(200.0)], dtype=torch.float64)  # e^{s − s_old} = 200
    u = torch.tensor([-2.0], dtype=torch.float64)
    (g,) = torch.autograd.grad(js_skew(s, s_old, u, 0.5).sum(), s)
    c = -math.log(0.5 * math.exp(-1.0) + 0.5)
    assert float(g) == pytest.approx(100.0 * c, rel=1e-12)  # sg[ρ] clipped to 100, still scales
    for fn in (k1, k3):  # the clip's flat region: no gradient through ρ
        (g,) = torch.autograd.grad(fn(s, s_old, u).sum(), s)
        assert float(g) == pytest.approx(0.0 if fn is k1 else 100.0 * (1.0 - math.exp(-1.0)))
    # the teacher/student ratio inside c is clipped at 100 too
    coef = skew_coefficient(torch.tensor([-20.0]), torch.tensor([-1.0]), 0.5)
    assert float(coef) == pytest.approx(-math.log(0.5 * 100 + 0.5), rel=1e-6)
    assert not coef.requires_grad
    (g,) = torch.autograd.grad(k2(s, s_old, u).sum(), s)
    assert float(g) == pytest.approx(100.0**2 * 1.0, rel=1e-12)  # ρ² (s − u), ρ detached


def test_values_estimate_their_divergences():
    logp, logq = torch.log_softmax(logits(7, 2), -1), torch.log_softmax(logits(8, 2), -1)
    p = torch.exp(logp)
    rev = float(kl_exact(logp, logq))
    assert float((p * k1_value(logp, logq)).sum()) == pytest.approx(rev, rel=1e-10)
    assert float((p * k3_value(logp, logq)).sum()) == pytest.approx(rev, rel=1e-10)
    for lam in (0.1, 0.5, 0.9, 1.0):
        exact = float(d_lambda_exact(logp, logq, lam))
        assert float((p * js_sym_value(logp, logq, lam)).sum()) == pytest.approx(exact, rel=1e-9)
    assert float(skew_kl_exact(logp, logq, 1.0)) == pytest.approx(rev, rel=1e-12)
    pp, q = torch.tensor([0.7, 0.2, 0.1]).double(), torch.tensor([0.1, 0.3, 0.6]).double()
    m = (pp + q) / 2
    js = 0.5 * float((pp * (pp / m).log()).sum()) + 0.5 * float((q * (q / m).log()).sum())
    assert float(d_lambda_exact(pp.log(), q.log(), 0.5)) == pytest.approx(js, rel=1e-12)


@pytest.mark.parametrize("kind", DIVERGENCES)
def test_a_teacher_equal_to_the_student_gives_no_gradient(kind):
    theta = logits(9)
    g = surrogate_grad(kind, theta, torch.log_softmax(theta, -1))
    assert torch.allclose(g, torch.zeros_like(g), atol=1e-12)


def test_bad_arguments():
    x = torch.zeros(2)
    with pytest.raises(ValueError, match="divergence"):
        token_loss("kl", x, x, x)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="λ"):
        js_skew(x, x, x, 0.0)
    assert math.isfinite(float(js_sym_value(torch.tensor(-30.0), torch.tensor(-1.0))))
