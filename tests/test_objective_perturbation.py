"""Objective perturbation and AMP (onpair.objective.functions, onpair.objective.estimators).

Kernels and objectives against the record-by-record twins of tests/naive_objective.py and finite
differences; the privacy constants (gradient change, its subspace, the Jacobian's determinant ratio)
against sampled and adversarial neighbours; the whole guarantee, independently of its proof, by the
exact output densities of one-dimensional problems; the noise recovered from released models; the
stopping rules; the conditions on the regulariser; the estimators' API and validation.
"""

import math

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import expit

import naive_objective as naive
from onpair import ApproxMinimaPerturbedLogistic, ObjectivePerturbedLogistic, PrivacyWarning
from onpair.objective._kernels import _logistic_point_terms, _pair_logistic_block
from onpair.objective.functions import (PairwiseLogistic, PointwiseLogistic, SolverDidNotConverge, curvature_epsilon,
                                        minimise, noise_quantile, objective_noise_sigma, smallest_regulariser)
from onpair.privacy import gaussian_sigma
from tiers import by_tier

OBJECTIVES = ["pointwise", "pairwise"]
ESTIMATORS = [ObjectivePerturbedLogistic, ApproxMinimaPerturbedLogistic]


def _ball(rng, n, d):
    """n records uniform in the unit ball of R^d (what the public bounds map produces)."""
    x = rng.standard_normal((n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True) * rng.uniform(0, 1, (n, 1)) ** (1.0 / d)


def _data(seed=0, n=40, d=3):
    rng = np.random.default_rng(seed)
    Z = _ball(rng, n, d)
    signs = np.where(Z[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    signs[:2] = [1, -1]
    return Z, signs


def _objective(kind, Z, signs, intercept=False):
    return PointwiseLogistic(Z, signs, intercept) if kind == "pointwise" else PairwiseLogistic(Z, signs)


# -- kernels and objectives against the twins --------------------------------------------------------
def test_point_terms_kernel_matches_the_twin_including_extreme_margins():
    margins = np.array([-800.0, -40.0, -1.5, -1e-9, 0.0, 1e-9, 0.7, 35.0, 800.0])
    slope, curvature = np.empty_like(margins), np.empty_like(margins)
    total = _logistic_point_terms(margins, slope, curvature)
    ref_total, ref_slope, ref_curvature = naive.point_terms(margins)
    assert total == pytest.approx(ref_total, rel=1e-14)
    np.testing.assert_allclose(slope, ref_slope, rtol=1e-14, atol=0)
    np.testing.assert_allclose(curvature, ref_curvature, rtol=1e-12, atol=1e-300)


def test_pair_block_kernel_matches_the_twin():
    rng = np.random.default_rng(1)
    s, t = rng.normal(0, 3, 17), np.concatenate([rng.normal(0, 3, 9), [400.0, -400.0]])
    slope, curvature, rows = (np.empty((17, 11)), np.empty((17, 11)), np.empty(17))
    _pair_logistic_block(s, t, slope, curvature, rows)
    ref_slope, ref_curvature, ref_rows = naive.pair_block(s, t)
    np.testing.assert_allclose(slope, ref_slope, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(curvature, ref_curvature, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(rows, ref_rows, rtol=1e-13)


@pytest.mark.parametrize("kind, intercept", [("pointwise", True), ("pointwise", False), ("pairwise", False)])
@pytest.mark.parametrize("norm", [0.0, 0.8, 30.0])
def test_objective_terms_match_the_twin(kind, intercept, norm):
    Z, signs = _data(2, n=23, d=3)
    p = 3 + intercept
    theta = np.random.default_rng(3).standard_normal(p)
    theta *= norm / max(np.linalg.norm(theta), 1e-300)
    value, gradient, hessian = _objective(kind, Z, signs, intercept).terms(theta)
    ref = naive.terms(kind, Z, signs, theta, intercept)
    assert value == pytest.approx(ref[0], rel=1e-12)
    np.testing.assert_allclose(gradient, ref[1], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(hessian, ref[2], rtol=1e-10, atol=1e-10)


def test_pairwise_blocks_add_up(monkeypatch):
    import onpair.objective.functions as po

    Z, signs = _data(4, n=50, d=2)
    theta = np.array([0.4, -1.1])
    whole = PairwiseLogistic(Z, signs).terms(theta)
    monkeypatch.setattr(po, "PAIR_BLOCK", 3)  # many blocks, an uneven tail
    blocked = PairwiseLogistic(Z, signs).terms(theta)
    for a, b in zip(whole, blocked):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", OBJECTIVES)
def test_twin_derivatives_agree_with_finite_differences(kind):
    # The twins' hand-written derivatives, checked against their own values: an independent check.
    Z, signs = _data(5, n=12, d=2)
    theta = np.array([0.7, -0.4])
    h = 1e-5
    _, gradient, hessian = naive.terms(kind, Z, signs, theta)
    for k in range(2):
        e = np.zeros(2)
        e[k] = h
        plus, minus = naive.terms(kind, Z, signs, theta + e), naive.terms(kind, Z, signs, theta - e)
        assert (plus[0] - minus[0]) / (2 * h) == pytest.approx(gradient[k], rel=1e-6, abs=1e-8)
        np.testing.assert_allclose((plus[1] - minus[1]) / (2 * h), hessian[:, k], rtol=1e-6, atol=1e-8)


# -- the privacy constants against sampled and adversarial neighbours -----------------------------------
def _neighbour(rng, Z, signs, d):
    k = int(rng.integers(len(Z)))
    Z2, s2 = Z.copy(), signs.copy()
    Z2[k] = _ball(rng, 1, d)[0] if rng.random() < 0.7 else -Z[k] / max(np.linalg.norm(Z[k]), 1e-12)
    s2[k] = -signs[k] if rng.random() < 0.5 else signs[k]
    return Z2, s2


@pytest.mark.parametrize("kind, intercept", [("pointwise", True), ("pointwise", False), ("pairwise", False)])
def test_sampled_gradient_changes_stay_within_the_sensitivity_and_its_subspace(kind, intercept):
    rng = np.random.default_rng(6)
    d, n = 3, 9
    bound = _objective(kind, *_data(0, n=n, d=d), intercept).gradient_sensitivity
    worst = 0.0
    for _ in range(300):
        Z, signs = _data(int(rng.integers(10**6)), n=n, d=d)
        Z2, s2 = _neighbour(rng, Z, signs, d)
        theta = rng.standard_normal(d + intercept) * 10.0 ** rng.uniform(-2, 2)
        g = naive.terms(kind, Z2, s2, theta, intercept)[1] - naive.terms(kind, Z, signs, theta, intercept)[1]
        worst = max(worst, np.linalg.norm(g))
        if kind == "pointwise":
            # g lies in span{x̃_k, x̃'_k}: the projection's residual vanishes.
            k = int(np.flatnonzero((Z != Z2).any(axis=1) | (signs != s2))[0])
            basis = naive.augmented(np.vstack([Z[k], Z2[k]]), intercept).T
            coef, *_ = np.linalg.lstsq(basis, g, rcond=None)
            assert np.linalg.norm(basis @ coef - g) <= 1e-9 * max(1.0, np.linalg.norm(g))
    assert worst <= bound * (1 + 1e-12)


def test_pointwise_gradient_change_approaches_two_c():
    # x̃ = (1, 1) with y = +1 against x̃' = (1 − η, 1) with y' = −1, θ = (−T, T(1 − η/2)): both margins are
    # −Tη/2 → −∞, both |φ'| → 1, and the gradients point almost opposite ways: ‖g‖ → 2√2.
    eta, T = 1e-4, 1e7
    theta = np.array([-T, T * (1 - eta / 2)])
    g = (naive.pointwise_terms([[1 - eta]], [-1], theta, intercept=True)[1]
         - naive.pointwise_terms([[1.0]], [1], theta, intercept=True)[1])
    bound = PointwiseLogistic(np.zeros((2, 1)), [1, -1], intercept=True).gradient_sensitivity
    assert bound == pytest.approx(2 * math.sqrt(2)) and 0.999 * bound <= np.linalg.norm(g) <= bound


def test_pairwise_gradient_change_approaches_its_bound():
    # Everyone else at −u (label −1); the record moves from −u to +u (label +1), θ = −T·u: each of its n − 1
    # pairs goes from v = 0 (no gradient) to v = 2u with ℓ' → −2: the change is 4(n − 1)·u in the limit.
    n, d = 8, 2
    u = np.ones(d) / math.sqrt(d)
    Z = np.tile(-u, (n, 1))
    signs = -np.ones(n, dtype=int)
    signs[-1] = 1
    Z2 = Z.copy()
    Z2[-1] = u
    theta = -20.0 * u
    g = naive.pairwise_terms(Z2, signs, theta)[1] - naive.pairwise_terms(Z, signs, theta)[1]
    bound = PairwiseLogistic(Z, signs).gradient_sensitivity
    assert bound == 4 * (n - 1) and 0.999 * bound <= np.linalg.norm(g) <= bound


def _determinant_ratio(kind, D, D2, theta, regulariser, intercept=False):
    H = naive.terms(kind, *D, theta, intercept)[2]
    H2 = naive.terms(kind, *D2, theta, intercept)[2]
    eye = np.eye(H.shape[0])
    return np.linalg.slogdet(H + regulariser * eye)[1] - np.linalg.slogdet(H2 + regulariser * eye)[1]


@pytest.mark.parametrize("kind, intercept", [("pointwise", True), ("pointwise", False), ("pairwise", False)])
def test_sampled_determinant_ratios_stay_within_the_curvature_bound(kind, intercept):
    rng = np.random.default_rng(7)
    d, n = 2, 7
    objective = _objective(kind, *_data(0, n=n, d=d), intercept)
    for regulariser in (0.05, 1.0, 30.0):
        bound = curvature_epsilon(regulariser, objective.curvature_rank, objective.curvature_trace)
        for _ in range(150):
            Z, signs = _data(int(rng.integers(10**6)), n=n, d=d)
            Z2, s2 = _neighbour(rng, Z, signs, d)
            theta = rng.standard_normal(d + intercept) * 10.0 ** rng.uniform(-2, 1)
            ratio = _determinant_ratio(kind, (Z, signs), (Z2, s2), theta, regulariser, intercept)
            assert abs(ratio) <= bound * (1 + 1e-10)


@pytest.mark.parametrize("kind", OBJECTIVES)
def test_determinant_ratio_reaches_the_bound_in_one_dimension(kind):
    # One dimension, θ = 0, no curvature from the other records: the bound is attained exactly.
    n, lam = 6, 0.3
    Z = np.zeros((n, 1)) if kind == "pointwise" else -np.ones((n, 1))
    signs = -np.ones(n, dtype=int)
    signs[-1] = 1
    D_far = (np.vstack([Z[:-1], [[1.0]]]), signs)   # the record at the far end: full curvature
    D_near = (Z, signs)                              # at 0 (pointwise) or beside the others (pairwise)
    objective = _objective(kind, *D_far)
    expected = curvature_epsilon(lam, objective.curvature_rank, objective.curvature_trace)
    hand = math.log1p(0.25 / lam) if kind == "pointwise" else math.log1p(4 * (n - 1) / lam)
    assert expected == pytest.approx(hand, rel=1e-12)
    assert _determinant_ratio(kind, D_far, D_near, np.zeros(1), lam) == pytest.approx(expected, rel=1e-12)


def test_curvature_and_regulariser_formulas_invert_each_other_and_match_hand_values():
    assert smallest_regulariser(math.log(2.0), 1, 0.25) == pytest.approx(0.25, rel=1e-12)  # 1 + T/Λ = 2
    assert curvature_epsilon(1.0, 2, 2.0) == pytest.approx(2 * math.log(2.0), rel=1e-12)   # (1 + 2/2)²
    for rank, trace, eps in [(1, 0.5, 0.05), (8, 2452.0, 0.1), (30, 1816.0, 2.0)]:
        lam = smallest_regulariser(eps, rank, trace)
        assert curvature_epsilon(lam, rank, trace) == pytest.approx(eps, rel=1e-10)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("kind", OBJECTIVES)
@pytest.mark.parametrize("epsilon", [1e-8, 1e4])
def test_extreme_epsilons_fit_within_their_claim(cls, kind, epsilon):
    # ε = 10⁴: e^(ε_curv/r) overflows, Λ takes its floor 10⁻¹²·T (valid: ε_curv only falls); ε = 10⁻⁸: huge b.
    X, y = _data(21, n=30, d=2)
    if cls is ApproxMinimaPerturbedLogistic and epsilon == 1e-8:
        with pytest.raises(ValueError, match="output_share"):  # 5 % of 10⁻⁸ cannot be calibrated
            cls(epsilon=epsilon, delta=1e-4, objective=kind, norm_bound=1.0, random_state=0).fit(X, y)
        return
    r = cls(epsilon=epsilon, delta=1e-4, objective=kind, norm_bound=1.0, random_state=0).fit(X, y).privacy_report_
    assert np.all(np.isfinite(r["releases"][0]["sigma"])) and r["epsilon_spent"] <= epsilon * (1 + 1e-9)
    assert r["epsilon_curvature"] <= 0.05 * epsilon * (1 + 1e-9) and r["regulariser_sum_units"] > 0


def test_noise_quantile_and_sigma_against_closed_forms():
    # χ²₂: P(X > x) = e^(−x/2), so q² = 2 log(1/δ); χ²₁: q is the two-sided normal quantile.
    for delta in (1e-2, 1e-5, 1e-9):
        assert noise_quantile(delta, 2) ** 2 == pytest.approx(2 * math.log(1 / delta), rel=1e-10)
        assert noise_quantile(delta, 1) == pytest.approx(stats.norm.isf(delta / 2), rel=1e-10)
    q = math.sqrt(2 * math.log(1e5))
    sigma = objective_noise_sigma(3.0, 0.7, 1e-5, 2)
    s = 3.0 / sigma
    assert s * s / 2 + s * q == pytest.approx(0.7, rel=1e-12)


# -- the whole guarantee, by the exact densities of one-dimensional problems ----------------------------
def _density_1d(kind, Z, signs, grid, regulariser, sigma):
    """p(θ) = ν(b(θ))·(F''(θ) + Λ), b(θ) = −F'(θ) − Λθ, from the scalar derivatives (vectorised twins)."""
    x = np.asarray(Z, dtype=float)[:, 0]
    if kind == "pointwise":
        m = np.outer(grid, signs * x)                       # (grid, n) margins
        first = (-expit(-m) * (signs * x)).sum(axis=1)
        second = (expit(m) * expit(-m) * x ** 2).sum(axis=1)
    else:
        v = np.array([x[i] - x[j] for i in range(len(x)) for j in range(len(x)) if signs[i] > 0 > signs[j]])
        u = 2.0 * np.outer(grid, v)
        first = (-2.0 * expit(-u) * v).sum(axis=1)
        second = (4.0 * expit(u) * expit(-u) * v ** 2).sum(axis=1)
    b = -first - regulariser * grid
    return stats.norm.pdf(b, scale=sigma) * (second + regulariser)


def _hockey_stick(p, q, epsilon, step):
    return float(np.maximum(p - math.exp(epsilon) * q, 0.0).sum() * step)


NEIGHBOURS_1D = {
    # name: (kind, D's records, D′'s records, labels of D, labels of D′)
    "pointwise, record flips side": ("pointwise", [0, 0, 0, 0, 1.0], [0, 0, 0, 0, -1.0], [-1, -1, 1, 1, 1],
                                      [-1, -1, 1, 1, 1]),
    "pointwise, record leaves the origin": ("pointwise", [0, 0, 0, 0, 0.0], [0, 0, 0, 0, 1.0], [-1, -1, 1, 1, 1],
                                            [-1, -1, 1, 1, 1]),
    "pointwise, label flips": ("pointwise", [0.2, -0.5, 0.9, -1, 1.0], [0.2, -0.5, 0.9, -1, 1.0],
                               [1, -1, 1, -1, 1], [1, -1, 1, -1, -1]),
    "pairwise, record crosses": ("pairwise", [-1, -1, -1, -1, -1.0], [-1, -1, -1, -1, 1.0], [-1, -1, -1, -1, 1],
                                 [-1, -1, -1, -1, 1]),
    "pairwise, label flips": ("pairwise", [-1, 0.3, -0.2, 1, 1.0], [-1, 0.3, -0.2, 1, 1.0], [-1, 1, -1, 1, 1],
                              [-1, 1, -1, 1, -1]),
}


def _exact_epsilon(name, epsilon, delta, regulariser_factor=1.0):
    """The exact ε at δ of the released θ on the neighbours ``name`` (densities on a fine grid), with the
    estimator's σ and its Λ times ``regulariser_factor``; also the two densities' masses."""
    kind, x, x2, s, s2 = NEIGHBOURS_1D[name]
    X, X2 = np.array(x)[:, None], np.array(x2)[:, None]
    s, s2 = np.array(s), np.array(s2)
    report = ObjectivePerturbedLogistic(epsilon=epsilon, delta=delta, objective=kind, fit_intercept=False,
                                        norm_bound=1.0, random_state=0).fit(X, s).privacy_report_
    regulariser = report["regulariser_sum_units"] * regulariser_factor
    sigma = report["releases"][0]["sigma"]
    reach = (14 * sigma + report["gradient_sensitivity"] * len(x)) / regulariser
    grid, step = np.linspace(-reach, reach, 400_001, retstep=True)
    p = _density_1d(kind, X, s, grid, regulariser, sigma)
    q = _density_1d(kind, X2, s2, grid, regulariser, sigma)
    exact = max(optimize.brentq(lambda e: _hockey_stick(a, b, e, step) - delta, 0.0, 50.0)
                if _hockey_stick(a, b, 0.0, step) > delta else 0.0 for a, b in ((p, q), (q, p)))
    return exact, p.sum() * step, q.sum() * step


@pytest.mark.parametrize("name", list(NEIGHBOURS_1D))
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_exact_output_densities_satisfy_the_claim(name, epsilon):
    exact, mass_p, mass_q = _exact_epsilon(name, epsilon, 1e-3)
    assert mass_p == pytest.approx(1.0, abs=1e-6) and mass_q == pytest.approx(1.0, abs=1e-6)
    # Within the claim, and not vacuously: a sizeable part of it (the analysis is loosest pointwise, where
    # the exact ε is about a quarter of the claim).
    assert epsilon / 10 < exact <= epsilon


@pytest.mark.parametrize("name", ["pointwise, record leaves the origin", "pairwise, record crosses"])
def test_a_regulariser_below_the_condition_breaks_the_claim(name):
    # The same noise with Λ a hundredth of the condition: the Jacobian's change alone exceeds the budget.
    exact, _, _ = _exact_epsilon(name, 0.5, 1e-3, regulariser_factor=0.01)
    assert exact > 1.0  # measured 1.16 and 1.19: more than twice the claim


# -- the released noise ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", OBJECTIVES)
def test_noise_recovered_from_released_models_has_the_calibrated_scale(kind):
    # At the exact minimiser b = −∇F(θ) − Λθ: recover b from each release and test b/σ ~ N(0, 1), over 150
    # seeds (50 in the fast tier).
    Z, signs = _data(8, n=30, d=2)
    X = Z  # already in the unit ball: norm_bound = 1 maps it to itself
    draws = []
    for seed in range(by_tier(fast=50, full=150)):
        est = ObjectivePerturbedLogistic(epsilon=1.0, delta=1e-4, objective=kind, norm_bound=1.0,
                                         random_state=seed).fit(X, signs)
        theta = np.append(est.coef_, est.intercept_) if kind == "pointwise" else est.coef_
        report = est.privacy_report_
        gradient = naive.terms(kind, Z, signs, theta, kind == "pointwise")[1]
        b = -gradient - report["regulariser_sum_units"] * theta
        draws.append(b / report["releases"][0]["sigma"])
    draws = np.concatenate(draws)
    assert stats.kstest(draws, "norm").pvalue > 1e-3
    assert stats.chi2.sf(np.sum(draws ** 2), draws.size) > 5e-4 and stats.chi2.cdf(np.sum(draws ** 2), draws.size) > 5e-4


# -- stopping rules ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", OBJECTIVES)
@pytest.mark.parametrize("tolerance", [1e-3, 1e-6, 1e-11])
def test_minimise_meets_its_stopping_rule_on_the_twin_gradient(kind, tolerance):
    Z, signs = _data(9, n=35, d=3)
    objective = _objective(kind, Z, signs)
    linear = np.array([3.0, -1.0, 0.5])
    lam = 2.0 / objective.scale * 0.01
    theta, steps, norm = minimise(objective, lam, linear, tolerance)
    twin = naive.terms(kind, Z, signs, theta)[1] + lam * theta + linear
    assert objective.scale * np.linalg.norm(twin) <= tolerance * (1 + 1e-6) and norm <= tolerance
    if tolerance == 1e-11:  # the exact minimiser, found independently
        ref = optimize.minimize(lambda w: naive.terms(kind, Z, signs, w)[0] + lam / 2 * w @ w + linear @ w,
                                np.zeros(3), jac=lambda w: naive.terms(kind, Z, signs, w)[1] + lam * w + linear,
                                method="BFGS", options={"gtol": 1e-10})
        np.testing.assert_allclose(theta, ref.x, atol=1e-6)


def test_minimise_refuses_to_return_a_point_that_misses_the_rule():
    Z, signs = _data(10, n=20, d=2)
    with pytest.raises(SolverDidNotConverge, match="nothing was released"):
        minimise(PointwiseLogistic(Z, signs, True), 1.0, np.ones(3), 1e-12, max_steps=1)


@pytest.mark.parametrize("kind", OBJECTIVES)
def test_amp_stops_at_gamma_and_adds_output_noise_for_twice_gamma_over_lambda(kind):
    X, y = _data(11, n=60, d=3)
    est = ApproxMinimaPerturbedLogistic(epsilon=2.0, delta=1e-4, objective=kind, gradient_tol=1e-4,
                                        output_share=0.1, norm_bound=1.0, random_state=3).fit(X, y)
    r = est.privacy_report_
    assert r["gradient_norm"] <= 1e-4 and r["stopping_rule"] == "‖∇J(θ)‖ ≤ 0.0001"
    assert len(r["releases"]) == 2
    out = r["releases"][1]
    assert out["sensitivity"] == pytest.approx(2e-4 / r["lam"], rel=1e-12)
    assert out["sigma"] == pytest.approx(gaussian_sigma(out["sensitivity"], 0.2, 5e-5), rel=1e-9)
    assert r["epsilon_output"] == pytest.approx(0.2) and r["delta_objective"] == r["delta_output"] == 5e-5
    assert r["epsilon_spent"] == pytest.approx(2.0, rel=1e-12)


def test_objective_perturbation_reaches_the_exact_minimiser_rule():
    X, y = _data(12, n=50, d=3)
    r = ObjectivePerturbedLogistic(epsilon=1.0, delta=1e-4, norm_bound=1.0, random_state=0).fit(X, y).privacy_report_
    assert r["gradient_norm"] <= 1e-10 and r["solver_steps"] >= 1


# -- conditions on the regulariser ------------------------------------------------------------------------
@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("kind", OBJECTIVES)
def test_the_default_regulariser_is_the_smallest_valid_one(cls, kind):
    X, y = _data(13, n=40, d=3)
    r = cls(epsilon=1.5, delta=1e-4, objective=kind, norm_bound=1.0, random_state=0).fit(X, y).privacy_report_
    epsilon_objective = 1.5 - r["epsilon_output"]
    assert r["epsilon_curvature"] == pytest.approx(0.05 * epsilon_objective, rel=1e-10) and not r["lam_raised"]
    assert r["epsilon_curvature"] + r["epsilon_noise"] + r["epsilon_output"] <= 1.5 * (1 + 1e-12)
    n = 40
    trace, rank = (0.5, 1) if kind == "pointwise" else (4.0 * (n - 1), 3)  # c² = 2 with the intercept
    assert r["curvature_trace"] == pytest.approx(trace, rel=1e-12) and r["curvature_rank"] == rank
    assert r["regulariser_sum_units"] == pytest.approx(trace / (rank * math.expm1(0.05 * epsilon_objective / rank)),
                                                       rel=1e-10)


@pytest.mark.parametrize("kind", OBJECTIVES)
def test_a_regulariser_below_the_condition_is_raised_and_reported(kind):
    X, y = _data(14, n=40, d=3)
    est = ObjectivePerturbedLogistic(epsilon=1.0, delta=1e-4, objective=kind, lam=1e-9, norm_bound=1.0,
                                     random_state=0)
    with pytest.warns(UserWarning, match="raised"):
        r = est.fit(X, y).privacy_report_
    assert r["lam_raised"] and r["lam_requested"] == 1e-9 and r["lam"] > 1e-9
    assert r["epsilon_curvature"] == pytest.approx(0.05, rel=1e-10)  # the default share of ε = 1


@pytest.mark.parametrize("kind", OBJECTIVES)
def test_a_larger_regulariser_leaves_more_budget_to_the_noise(kind):
    X, y = _data(15, n=40, d=3)
    base = ObjectivePerturbedLogistic(epsilon=1.0, delta=1e-4, objective=kind, norm_bound=1.0, random_state=0)
    small = base.fit(X, y).privacy_report_
    big = ObjectivePerturbedLogistic(**dict(base.get_params(), lam=10 * small["lam"])).fit(X, y).privacy_report_
    assert big["epsilon_curvature"] < small["epsilon_curvature"] and big["epsilon_noise"] > small["epsilon_noise"]
    assert big["releases"][0]["sigma"] < small["releases"][0]["sigma"] and not big["lam_raised"]
    assert big["epsilon_curvature"] + big["epsilon_noise"] == pytest.approx(1.0, rel=1e-12)


# -- estimators: API, twins, validation --------------------------------------------------------------------
@pytest.mark.parametrize("kind", OBJECTIVES)
def test_non_private_twin_is_the_exact_regularised_minimiser(kind):
    X, y = _data(16, n=40, d=2)
    # λ = 5 lies above the smallest valid value at ε = 1 (the twin uses the private fit's λ, raised alike).
    est = ObjectivePerturbedLogistic(private=False, objective=kind, lam=5.0, norm_bound=1.0).fit(X, y)
    theta = np.append(est.coef_, est.intercept_) if kind == "pointwise" else est.coef_
    scale = naive.scale(kind, 40)
    ref = optimize.minimize(lambda w: scale * naive.terms(kind, X, y, w, kind == "pointwise")[0] + 2.5 * w @ w,
                            np.zeros(theta.size), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(theta, ref.x, atol=1e-5)
    assert est.privacy_report_["epsilon_spent"] == math.inf and est.privacy_report_["releases"] == []


def test_decision_function_uses_the_intercept_and_the_public_map():
    X, y = _data(17, n=50, d=2)
    X = (X + 1.0) * 5.0  # in the box [0, 10]²
    est = ObjectivePerturbedLogistic(epsilon=2.0, delta=1e-4, bounds=(0.0, 10.0), random_state=0).fit(X, y)
    Z, _ = est.bounds_.transform(X)
    np.testing.assert_allclose(est.decision_function(X), Z @ est.coef_ + est.intercept_, rtol=1e-14)
    assert est.coef_.shape == (2,) and isinstance(est.intercept_, float)
    pair = ObjectivePerturbedLogistic(epsilon=2.0, delta=1e-4, objective="pairwise", bounds=(0.0, 10.0),
                                      random_state=0).fit(X, y)
    assert pair.intercept_ == 0.0 and pair.coef_.shape == (2,)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_same_seed_same_release_and_delta_above_one_over_n_warns(cls):
    X, y = _data(18, n=30, d=2)
    a = cls(norm_bound=1.0, epsilon=1.0, delta=1e-4, random_state=5).fit(X, y).coef_
    b = cls(norm_bound=1.0, epsilon=1.0, delta=1e-4, random_state=5).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    with pytest.warns(PrivacyWarning, match="1/n"):
        cls(norm_bound=1.0, epsilon=1.0, delta=0.1, random_state=5).fit(X, y)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("params, word", [
    (dict(objective="hinge"), "objective"), (dict(objective="pairwise", fit_intercept=True), "fit_intercept"),
    (dict(fit_intercept="yes"), "fit_intercept"), (dict(lam=-1.0), "lam"), (dict(lam=float("nan")), "lam"),
    (dict(curvature_share=1.0), "curvature_share"), (dict(curvature_share=True), "curvature_share"),
    (dict(private="no"), "private"), (dict(epsilon=0.0), "epsilon"), (dict(delta=1.0), "delta")])
def test_bad_parameters_are_value_errors_that_change_nothing(cls, params, word):
    X, y = _data(19, n=30, d=2)
    est = cls(norm_bound=1.0, epsilon=1.0, delta=1e-4, random_state=0).fit(X, y)
    before = est.coef_.copy()
    with pytest.raises(ValueError, match=word):
        est.set_params(**params).fit(X[::-1], y[::-1])
    np.testing.assert_array_equal(est.coef_, before)


@pytest.mark.parametrize("params, word", [(dict(gradient_tol=0.0), "gradient_tol"),
                                          (dict(gradient_tol="1"), "gradient_tol"),
                                          (dict(output_share=0.0), "output_share")])
def test_bad_amp_parameters_are_value_errors(params, word):
    X, y = _data(20, n=30, d=2)
    with pytest.raises(ValueError, match=word):
        ApproxMinimaPerturbedLogistic(norm_bound=1.0, **params).fit(X, y)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("epsilon, delta", [(0.3, 1e-6), (0.5, 1e-5), (1.0, 1e-5), (1.5, 1e-5), (3.0, 1e-6)])
def test_epsilon_spent_never_exceeds_the_asked_epsilon_and_a_budget_of_exactly_it_pays(cls, epsilon, delta):
    """AMP once spent 1.0000000000000009 for ε = 1 (the shares and the Gaussian root finder round up), and a
    shared (ε, δ) budget of exactly (1, 1e-5) refused the fit: the noises are planned a margin below their
    shares (PLANNING_MARGIN, 1e-12 relative)."""
    from onpair.privacy import ZCDPAccountant

    X, y = _data(21, n=200, d=4)
    budget = ZCDPAccountant.from_dp(epsilon, delta)
    est = cls(epsilon=epsilon, delta=delta, norm_bound=1.0, random_state=0, accountant=budget).fit(X, y)
    assert est.privacy_report_["epsilon_spent"] <= epsilon
    assert est.privacy_report_["epsilon_spent"] == pytest.approx(epsilon, rel=1e-9)  # the margin costs nothing
    assert budget.report()["epsilon_spent"] <= epsilon
