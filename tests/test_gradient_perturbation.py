"""Kang et al. Alg. 1 (GradientPerturbedGD) and its full-batch kernels (onpair.batch._kernels).

Kernels against the pair-by-pair definitions of tests/naive_batch.py; block grids; thread-count
independence; the noise scale against Theorem 1 and the zCDP split worked out by hand; the released
noise's distribution; the estimator's API, report, reproducibility and input validation.
"""

import copy
import math

import numba
import numpy as np
import pytest
from numba import njit
from scipy import optimize, stats

import naive_batch
from onpair.batch import _kernels as bk
from onpair.core.bounds import FeatureBounds
from onpair.batch.gradient_perturbation import GradientPerturbedGD
from onpair.core.losses import LOSSES
from onpair import evaluation
from onpair.evaluation import roc_auc
from onpair.privacy import PrivacyWarning
from tiers import by_tier

LOSS_NAMES = ["logistic", "hinge", "square"]


def _records(seed, n_pos, n_neg, d=4):
    """Records of a diameter-2 domain (the unit ball), positives shifted a little."""
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1, 1, size=(n_pos, d)) / np.sqrt(d)
    neg = rng.uniform(-1, 1, size=(n_neg, d)) / np.sqrt(d)
    pos[:, 0] = np.clip(pos[:, 0] + 0.2, -1 / np.sqrt(d), 1 / np.sqrt(d))
    return pos, neg


def _weight(seed, d, norm):
    w = np.random.default_rng(seed).standard_normal(d)
    return w * (norm / np.linalg.norm(w))


def _block(pos, neg, w, loss):
    A, B = np.empty(len(pos)), np.empty(len(neg))
    return bk._pairwise_gradient_block(pos, neg, w, LOSSES[loss].code, A, B), A, B


# -- kernels against the definitions -----------------------------------------------------------------
@pytest.mark.parametrize("loss", LOSS_NAMES)
@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (70, 37), (3, 2101)])
def test_block_kernel_matches_pair_by_pair_sum(loss, shape):
    # (70, 37): two chunks of positives, odd counts; (3, 2101): three tiles of negatives, an odd tail.
    pos, neg = _records(1, *shape)
    w = _weight(2, pos.shape[1], 0.7)
    partial, A, B = _block(pos, neg, w, loss)
    np.testing.assert_allclose(partial, naive_batch.pairwise_gradient_sum(loss, pos, neg, w), rtol=0, atol=1e-10)
    A_ref, B_ref = naive_batch.coefficient_sums(loss, pos, neg, w)
    np.testing.assert_allclose(A, A_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(B, B_ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("loss", LOSS_NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_full_gradient_and_risk_match_the_definition_over_ordered_pairs(loss, seed):
    rng = np.random.default_rng(seed)
    n, d = 31, 3
    X = rng.uniform(-1, 1, size=(n, d)) / np.sqrt(d)
    signs = np.where(rng.random(n) < 0.4, 1, -1)
    w = _weight(seed, d, 0.9)
    pos, neg = bk.split_by_label(X, signs)
    np.testing.assert_allclose(bk.pairwise_gradient(pos, neg, w, loss),
                               naive_batch.pairwise_gradient(loss, X, signs, w), rtol=0, atol=1e-10)
    assert bk.pairwise_risk(pos, neg, w, loss) == pytest.approx(naive_batch.pairwise_risk(loss, X, signs, w),
                                                                rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_compiled_risk_agrees_with_the_numpy_risk_of_onpair_metrics(loss):
    rng = np.random.default_rng(14)
    X = rng.uniform(-1, 1, size=(300, 5)) / np.sqrt(5)
    signs = np.where(rng.random(300) < 0.3, 1, -1)
    w = _weight(15, 5, 0.8)
    pos, neg = bk.split_by_label(X, signs)
    assert bk.pairwise_risk(pos, neg, w, loss, block=64) == pytest.approx(evaluation.pairwise_risk(w, X, signs, loss),
                                                                        rel=1e-12)


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_partial_sums_over_an_uneven_grid_add_up_to_the_whole(loss):
    pos, neg = _records(3, 40, 55)
    w = _weight(4, 4, 0.5)
    whole, _, _ = _block(pos, neg, w, loss)
    total = np.zeros(4)
    for p0, p1 in [(0, 5), (5, 23), (23, 40)]:
        for q0, q1 in [(0, 1), (1, 30), (30, 55)]:
            total += _block(np.ascontiguousarray(pos[p0:p1]), np.ascontiguousarray(neg[q0:q1]), w, loss)[0]
    # Only the order of the additions differs: agreement to rounding, relative to the sum's size.
    np.testing.assert_allclose(total, whole, rtol=1e-12, atol=1e-12)
    for block in (1, 7, 64):
        np.testing.assert_allclose(bk.pairwise_gradient_sum(pos, neg, w, loss, block=block), whole,
                                   rtol=1e-12, atol=1e-12)


def test_empty_blocks_give_zero():
    pos, neg = _records(5, 6, 0)
    for loss in LOSS_NAMES:
        np.testing.assert_array_equal(_block(pos, neg, _weight(0, 4, 0.3), loss)[0], np.zeros(4))
        np.testing.assert_array_equal(_block(neg, pos, _weight(0, 4, 0.3), loss)[0], np.zeros(4))


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_result_does_not_depend_on_the_thread_count(loss):
    pos, neg = _records(6, 300, 257)
    w = _weight(7, 4, 0.4)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _block(pos, neg, w, loss)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = _block(pos, neg, w, loss)
    finally:
        numba.set_num_threads(before)
    for a, b in zip(one, many):
        np.testing.assert_array_equal(a, b)  # fixed chunks, not threads: the same bits


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_prange_kernel_equals_a_serially_compiled_twin(loss):
    pos, neg = _records(8, 200, 150)
    w = _weight(9, 4, 0.6)
    # The same source compiled without parallel=True (prange becomes range), and not cached: its cache
    # entry would sit beside the parallel kernel's.
    serial = njit(nogil=True)(getattr(bk._coefficient_sums, "py_func", bk._coefficient_sums))
    s, t = pos @ w, neg @ w
    A1, B1 = np.empty(len(s)), np.empty(len(t))
    A2, B2 = np.empty(len(s)), np.empty(len(t))
    bk._coefficient_sums(s, t, LOSSES[loss].code, A1, B1)
    serial(s, t, LOSSES[loss].code, A2, B2)
    np.testing.assert_allclose(A1, A2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(B1, B2, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm", [60.0, 500.0])
def test_logistic_near_and_beyond_the_factorisation_range(norm):
    # ‖w‖ = 60: scores span up to ~120 (factorised); ‖w‖ = 500: beyond 160, the scalar fallback.
    pos, neg = _records(10, 9, 11)
    w = _weight(11, 4, norm)
    with np.errstate(over="ignore"):
        expected = naive_batch.pairwise_gradient_sum("logistic", pos, neg, w)
    partial, _, _ = _block(pos, neg, w, "logistic")
    np.testing.assert_allclose(partial, expected, rtol=1e-12, atol=1e-12)


def test_nan_weight_gives_nan_gradient():
    pos, neg = _records(12, 5, 5)
    w = np.array([np.nan, 0.0, 0.0, 0.0])
    for loss in ("logistic", "square"):
        assert np.isnan(_block(pos, neg, w, loss)[0]).all()


def test_kernel_wrappers_reject_mismatched_shapes_and_bad_blocks():
    pos, neg = _records(13, 4, 4)
    with pytest.raises(ValueError, match="shapes"):
        bk.pairwise_gradient_sum(pos, neg[:, :3], np.zeros(4))
    with pytest.raises(ValueError, match="block"):
        bk.pairwise_gradient_sum(pos, neg, np.zeros(4), block=0)
    with pytest.raises(ValueError, match="loss"):
        bk.pairwise_gradient_sum(pos, neg, np.zeros(4), loss="cosh")


# -- the noise scale, by hand ------------------------------------------------------------------------
def _balanced(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    y = np.repeat([0, 1], n // 2)
    return X, y


def test_paper_sigma_is_theorem_1_by_hand():
    # Logistic with R = ln(3)/4: G = 4/(1 + e^(−4R)) = 4/(1 + 1/3) = 3. n = 100, ε = 2, δ = e^(−9), T = 4:
    # σ = 8·G·√(T·log(1/δ))/(n·ε) = 8·3·√(4·9)/(100·2) = 8·3·6/200 = 0.72.
    X, y = _balanced(100)
    est = GradientPerturbedGD(epsilon=2.0, delta=math.exp(-9.0), radius=math.log(3.0) / 4, T=4, mode="paper",
                              bounds=(0, 1), random_state=0).fit(X, y)
    report = est.privacy_report_
    assert [r["sigma"] for r in report["releases"]] == pytest.approx([0.72] * 4, rel=1e-12)
    assert report["paper_sigma"] == pytest.approx(0.72, rel=1e-12)
    assert report["paper_epsilon"] == 2.0 and report["paper_delta"] == pytest.approx(math.exp(-9.0))
    # Hinge: G = 2 → σ = 8·2·6/200 = 0.48.
    est = GradientPerturbedGD(epsilon=2.0, delta=math.exp(-9.0), loss="hinge", T=4, mode="paper",
                              bounds=(0, 1), random_state=0).fit(X, y)
    assert est.privacy_report_["releases"][0]["sigma"] == pytest.approx(0.48, rel=1e-12)


def test_paper_mode_reports_the_zcdp_accounting_of_its_noise():
    # Same settings: Δ_1 = 2·Γ(0)/n = 2·2/100 = 0.04, Δ_t = 2·G(R)/n = 2·3/100 = 0.06 (t ≥ 2);
    # ρ_t = Δ_t²/(2σ²) with σ = 0.72: 0.0016/1.0368 and 0.0036/1.0368.
    X, y = _balanced(100)
    est = GradientPerturbedGD(epsilon=2.0, delta=math.exp(-9.0), radius=math.log(3.0) / 4, T=4, mode="paper",
                              bounds=(0, 1), random_state=0).fit(X, y)
    report = est.privacy_report_
    rhos = [0.0016 / 1.0368] + [0.0036 / 1.0368] * 3
    assert [r["sensitivity"] for r in report["releases"]] == pytest.approx([0.04, 0.06, 0.06, 0.06], rel=1e-12)
    assert [r["rho"] for r in report["releases"]] == pytest.approx(rhos, rel=1e-12)
    assert report["rho_spent"] == pytest.approx(sum(rhos), rel=1e-12)
    # epsilon_spent is the exact Gaussian (μ-GDP, μ = √(2ρ)) curve at δ: Balle & Wang's profile.
    mu, eps = math.sqrt(2.0 * sum(rhos)), report["epsilon_spent"]
    delta = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
    assert delta == pytest.approx(math.exp(-9.0), rel=1e-6)
    assert eps < report["paper_epsilon"]


def test_ledger_sigma_by_hand_with_lemma3_accounting():
    # Lemma 3: √ρ = √(log(1/δ) + ε) − √(log(1/δ)); ε = 7, δ = e^(−9): √16 − √9 = 1, so ρ = 1.
    # T = 4: ρ_t = 1/4 and σ_t = Δ_t/√(2ρ_t) = Δ_t·√2. n = 100, logistic from θ_0 = 0: Δ_1 = 4/n = 0.04;
    # then Δ_t = 2·G(R)/n = 0.06 with R = ln(3)/4 (G = 3).
    X, y = _balanced(100)
    est = GradientPerturbedGD(epsilon=7.0, delta=math.exp(-9.0), radius=math.log(3.0) / 4, T=4,
                              accounting="lemma3", bounds=(0, 1), random_state=0).fit(X, y)
    releases = est.privacy_report_["releases"]
    assert [r["round"] for r in releases] == [1, 2, 3, 4]
    assert [r["sensitivity"] for r in releases] == pytest.approx([0.04, 0.06, 0.06, 0.06], rel=1e-12)
    assert [r["sigma"] for r in releases] == pytest.approx([0.04 * math.sqrt(2)] + [0.06 * math.sqrt(2)] * 3,
                                                           rel=1e-8)
    assert [r["rho"] for r in releases] == pytest.approx([0.25] * 4, rel=1e-10)
    assert est.privacy_report_["rho_budget"] == pytest.approx(1.0, rel=1e-12)


def _gaussian_rho(epsilon, delta):
    """ρ = μ²/2 of the μ-GDP curve through (ε, δ): Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = δ (Balle & Wang)."""
    def excess(mu):
        profile = stats.norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * stats.norm.cdf(-epsilon / mu - mu / 2)
        return profile - delta
    mu = optimize.brentq(excess, 1e-6, 50.0, xtol=1e-15)
    return mu * mu / 2


@pytest.mark.parametrize("T", [1, 5])
def test_ledger_sigma_with_the_default_gaussian_accounting(T):
    # σ_t = Δ_t/√(2ρ/T), Δ_1 = 4/n for the logistic loss from the origin.
    n, epsilon, delta = 80, 1.3, 1e-4
    X, y = _balanced(n)
    est = GradientPerturbedGD(epsilon=epsilon, delta=delta, T=T, bounds=(0, 1), random_state=0).fit(X, y)
    rho = _gaussian_rho(epsilon, delta)
    G = 4.0 / (1.0 + math.exp(-0.4))  # default R = 0.1
    deltas = [4.0 / n] + [2.0 * G / n] * (T - 1)
    sigmas = [r["sigma"] for r in est.privacy_report_["releases"]]
    assert sigmas == pytest.approx([D / math.sqrt(2 * rho / T) for D in deltas], rel=1e-7)
    assert [r["sensitivity"] for r in est.privacy_report_["releases"]] == pytest.approx(deltas, rel=1e-12)


@pytest.mark.parametrize("loss, gamma0", [("hinge", 2.0), ("square", 8.0)])
def test_first_step_sensitivity_of_the_other_losses(loss, gamma0):
    # Γ(0): hinge G = 2; square Γ = 2G(0) = 2·4 = 8. Δ_1 = 2Γ(0)/n.
    X, y = _balanced(50)
    est = GradientPerturbedGD(loss=loss, T=2, bounds=(0, 1), random_state=0).fit(X, y)
    assert est.privacy_report_["releases"][0]["sensitivity"] == pytest.approx(2 * gamma0 / 50, rel=1e-12)


# -- the released noise ------------------------------------------------------------------------------
def test_released_noise_has_the_calibrated_standard_deviation():
    # T = 1, η = 1, a radius the projection never reaches: coef = −(∇L(0) + σ z), the twin's θ_1 = −∇L(0),
    # so (twin − coef)/(ησ) = z ~ N(0, I) for every seed. Pooled over 300 seeds (100 in the fast tier) and the
    # d coordinates.
    X, y = _balanced(60, d=3, seed=1)
    common = dict(epsilon=1.0, delta=1e-4, T=1, step_sizes=1.0, radius=1e6, bounds=(0, 1))
    twin = GradientPerturbedGD(private=False, **common).fit(X, y).coef_
    z = []
    for seed in range(by_tier(fast=100, full=300)):
        est = GradientPerturbedGD(random_state=seed, **common).fit(X, y)
        sigma = est.privacy_report_["releases"][0]["sigma"]
        z.append((twin - est.coef_) / (1.0 * sigma))
    z = np.concatenate(z)
    assert stats.kstest(z, "norm").pvalue > 1e-3
    # KS is weak against a wrong scale alone; Σz² ~ χ²(N) is not (a 10 % error in σ is > 4 sd off).
    chi2 = float(np.sum(z * z))
    p_two_sided = 2 * min(stats.chi2.cdf(chi2, z.size), stats.chi2.sf(chi2, z.size))
    assert p_two_sided > 1e-3


# -- the estimator -----------------------------------------------------------------------------------
def _noise(random_state, T, d):
    """The estimator's noise: a standard normal (T, d) block from the first child of its SeedSequence."""
    child = np.random.SeedSequence(random_state).spawn(1)[0]
    return np.random.Generator(np.random.PCG64(child)).standard_normal((T, d))


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_private_false_is_the_noise_free_iteration(loss):
    X, y = _balanced(40, seed=2)
    est = GradientPerturbedGD(loss=loss, lam=0.5, radius=0.05, T=6, step_sizes=[0.3, 0.2, 0.5, 0.1, 0.4, 0.2],
                              bounds=(0, 1), private=False).fit(X, y)
    Z, _ = FeatureBounds(0, 1).transform(X)
    signs = np.where(y == 1, 1, -1)
    steps = [0.3, 0.2, 0.5, 0.1, 0.4, 0.2]
    iterates = naive_batch.gradient_perturbed_gd(loss, Z, signs, 0.5, 0.05, steps, np.zeros(6), np.zeros((6, 3)))
    np.testing.assert_allclose(est.coef_, iterates[-1], rtol=0, atol=1e-10)
    report = est.privacy_report_
    assert report["releases"] == [] and math.isinf(report["epsilon_spent"]) and report["private"] is False


@pytest.mark.parametrize("loss", LOSS_NAMES)
@pytest.mark.parametrize("radius", [0.1, 50.0])
def test_private_run_is_algorithm_1_with_the_reported_sigmas(loss, radius):
    X, y = _balanced(30, seed=3)
    T = 4
    est = GradientPerturbedGD(epsilon=2.0, loss=loss, lam=0.1, radius=radius, T=T, bounds=(0, 1),
                              random_state=11).fit(X, y)
    sigmas = [r["sigma"] for r in est.privacy_report_["releases"]]
    Z, _ = FeatureBounds(0, 1).transform(X)
    steps = est.privacy_report_["step_sizes"]
    G = LOSSES[loss].lipschitz(radius)
    assert steps == pytest.approx([radius / (G + 0.1 * radius)] * T, rel=1e-15)
    iterates = naive_batch.gradient_perturbed_gd(loss, Z, np.where(y == 1, 1, -1), 0.1, radius, steps, sigmas,
                                                 _noise(11, T, 3))
    np.testing.assert_allclose(est.coef_, iterates[-1], rtol=0, atol=1e-10)
    assert np.linalg.norm(est.coef_) <= radius * (1 + 1e-12)


def test_api_shapes_and_report_keys():
    X, y = _balanced(60, seed=4)
    labels = np.where(y == 1, "sick", "healthy")
    est = GradientPerturbedGD(T=3, bounds=(0, 1), random_state=0)
    assert est.fit(X, labels) is est
    X_new = np.random.default_rng(5).uniform(0, 1, size=(7, 3))
    assert est.decision_function(X_new).shape == (7,)
    assert set(est.predict(X_new)) <= {"sick", "healthy"} and est.predict(X_new).shape == (7,)
    proba = est.predict_proba(X_new)
    assert proba.shape == (7, 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert 0.0 <= est.score(X, labels) <= 1.0
    assert est.coef_.shape == (3,) and est.n_features_in_ == 3 and list(est.classes_) == ["healthy", "sick"]
    report = est.privacy_report_
    for key in ("rho_budget", "rho_spent", "rho_remaining", "epsilon_spent", "releases", "algorithm", "mode",
                "accounting", "epsilon", "delta", "private", "T", "step_sizes", "n_clipped"):
        assert key in report, key
    assert report["algorithm"] == "GradientPerturbedGD" and report["mode"] == "ledger"
    assert [set(r) for r in report["releases"]] == [{"event", "what", "round", "sensitivity", "sigma", "rho"}] * 3


@pytest.mark.parametrize("accounting", ["gaussian", "tight", "lemma3"])
@pytest.mark.parametrize("T", [1, 7])
def test_ledger_spends_the_whole_budget_and_no_more(accounting, T):
    X, y = _balanced(50, seed=6)
    report = GradientPerturbedGD(epsilon=1.5, delta=1e-4, T=T, accounting=accounting, bounds=(0, 1),
                                 random_state=0).fit(X, y).privacy_report_
    assert report["epsilon_spent"] <= 1.5
    assert report["epsilon_spent"] == pytest.approx(1.5, abs=1e-6)
    assert report["rho_spent"] <= report["rho_budget"] and report["accounting"] == accounting


def test_random_state_reproduces_and_seeds_differ():
    X, y = _balanced(40, seed=7)
    a = GradientPerturbedGD(T=3, bounds=(0, 1), random_state=5).fit(X, y).coef_
    b = GradientPerturbedGD(T=3, bounds=(0, 1), random_state=5).fit(X, y).coef_
    c = GradientPerturbedGD(T=3, bounds=(0, 1), random_state=6).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_private_t1_beats_chance_clearly_at_epsilon_2():
    # Separable-ish: the label is a noisy threshold of two of five features in [0, 1] (public box).
    rng = np.random.default_rng(8)
    n, d = 600, 5
    X = rng.uniform(0, 1, size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.2 * rng.standard_normal(n) > 0.75).astype(int)
    est = GradientPerturbedGD(epsilon=2.0, delta=1e-4, T=1, bounds=(0, 1), random_state=0).fit(X[:400], y[:400])
    assert est.score(X[400:], y[400:]) > 0.7


def test_delta_not_below_one_over_n_warns():
    X, y = _balanced(20)
    with pytest.warns(PrivacyWarning, match="delta"):
        GradientPerturbedGD(delta=0.1, bounds=(0, 1), random_state=0).fit(X, y)


def test_get_params_round_trip():
    est = GradientPerturbedGD(norm_bound=1.0, epsilon=0.5, T=3, step_sizes=[0.1, 0.2, 0.3], mode="paper")
    params = est.get_params()
    assert params["T"] == 3 and params["step_sizes"] == [0.1, 0.2, 0.3] and params["mode"] == "paper"
    assert GradientPerturbedGD(**params).get_params() == params


# -- bad input: a ValueError naming what is wrong, and nothing fitted ------------------------------------
BAD_PARAMS = [
    ({"epsilon": 0.0}, "epsilon"), ({"epsilon": -1.0}, "epsilon"), ({"epsilon": math.nan}, "epsilon"),
    ({"epsilon": math.inf}, "epsilon"), ({"epsilon": "1"}, "epsilon"),
    ({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"), ({"delta": -1e-5}, "delta"), ({"delta": math.nan}, "delta"),
    ({"T": 0}, "T"), ({"T": -2}, "T"), ({"T": 2.5}, "T"), ({"T": True}, "T"), ({"T": "3"}, "T"),
    ({"step_sizes": -0.1}, "step_sizes"), ({"step_sizes": 0.0}, "step_sizes"), ({"step_sizes": math.nan}, "step_sizes"),
    ({"step_sizes": math.inf}, "step_sizes"), ({"step_sizes": [0.1, 0.2]}, "step_sizes"),
    ({"step_sizes": [[0.1] * 10]}, "step_sizes"), ({"step_sizes": "fast"}, "step_sizes"),
    ({"T": 10, "step_sizes": [0.1] * 9 + [-1.0]}, r"step_sizes\[9\]"),
    ({"loss": "cosh"}, "loss"), ({"lam": -1.0}, "lam"), ({"radius": 0.0}, "radius"), ({"radius": math.nan}, "radius"),
    ({"mode": "fast"}, "mode"), ({"accounting": "loose"}, "accounting"), ({"private": "yes"}, "private"),
    ({"bounds": (0, 1), "norm_bound": 1.0}, "bounds"),
]


def _fitted_state(est):
    return {k: copy.deepcopy(v) for k, v in vars(est).items() if k.endswith("_")}


@pytest.mark.parametrize("params, name", BAD_PARAMS)
def test_bad_parameters_raise_and_change_nothing(params, name):
    X, y = _balanced(30)
    fresh = GradientPerturbedGD(bounds=(0, 1), random_state=0).set_params(**params)
    with pytest.raises(ValueError, match=name):
        fresh.fit(X, y)
    assert not hasattr(fresh, "coef_")
    fitted = GradientPerturbedGD(bounds=(0, 1), random_state=0).fit(X, y)
    before = _fitted_state(fitted)
    with pytest.raises(ValueError, match=name):
        fitted.set_params(**params).fit(X[::-1], y[::-1])
    after = _fitted_state(fitted)
    assert before.keys() == after.keys()
    np.testing.assert_array_equal(after["coef_"], before["coef_"])
    assert after["privacy_report_"] == before["privacy_report_"]


def _bad_data():
    X, y = _balanced(30)
    X_nan = X.copy()
    X_nan[4, 1] = np.nan
    return [
        (X, np.zeros(30, dtype=int), "2 classes"),
        (X_nan, y, r"X\[4, 1\]"),
        (X[:, 0], y, "2-D"),
        (X, y[:-1], "labels"),
        (X[:1], y[:1], "at least 2"),
    ]


@pytest.mark.parametrize("case", range(5))
def test_bad_data_raises_and_changes_nothing(case):
    X_bad, y_bad, message = _bad_data()[case]
    X, y = _balanced(30)
    fitted = GradientPerturbedGD(bounds=(0, 1), random_state=0).fit(X, y)
    before = _fitted_state(fitted)
    with pytest.raises(ValueError, match=message):
        fitted.fit(X_bad, y_bad)
    np.testing.assert_array_equal(fitted.coef_, before["coef_"])
    assert fitted.privacy_report_ == before["privacy_report_"]
    fresh = GradientPerturbedGD(bounds=(0, 1))
    with pytest.raises(ValueError, match=message):
        fresh.fit(X_bad, y_bad)
    assert not hasattr(fresh, "coef_")


def test_auc_of_the_scores_is_the_estimators_score():
    X, y = _balanced(80, seed=9)
    est = GradientPerturbedGD(T=2, bounds=(0, 1), random_state=1).fit(X, y)
    assert est.score(X, y) == pytest.approx(roc_auc(y == 1, est.decision_function(X)))
