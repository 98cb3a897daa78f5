"""OutputPerturbedSGD (Yang et al. 2021, Alg. 2): kernel against the literal O(T²) reference, eq. (5),
the released noise, and the estimator API."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats

import naive_sgd
from onpair.batch._sgd_kernels import _pairwise_sgd
from onpair.batch.output_perturbation import OutputPerturbedSGD, paper_sensitivity, paper_sigma
from onpair.core.losses import get_loss
from onpair.privacy.conversions import eps_from_rho
from onpair.privacy.exceptions import PrivacyWarning
from tiers import by_tier


def _records(n, d, seed):
    """Records in the unit ball (so norm_bound=1 clips nothing), both labels present."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * 1.01
    signs = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
    signs[0], signs[1] = 1, -1
    return X, signs


def _kernel(X, signs, indices, eta, radius, loss):
    T = len(indices) - 1
    iterate_sum = np.zeros(X.shape[1])
    last = _pairwise_sgd(X, signs, np.asarray(indices, dtype=np.int64), T, eta, radius, get_loss(loss).code,
                         iterate_sum)
    return last, iterate_sum / T


# -- kernel = literal algorithm ---------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["hinge", "square"])
@pytest.mark.parametrize("binding", [False, True], ids=["free", "projection-binds"])
def test_kernel_matches_naive(loss, binding):
    n, d, T = 12, 4, 150
    X, signs = _records(n, d, seed=1)
    indices = np.random.default_rng(2).integers(0, n, size=T + 1)
    radius, eta = (0.05, 0.5) if binding else (1e6, 0.05)
    iterates, w_bar = naive_sgd.pairwise_sgd(X, signs, indices, eta, radius, loss)
    last, kernel_bar = _kernel(X, signs, indices, eta, radius, loss)
    np.testing.assert_allclose(kernel_bar, w_bar, rtol=0, atol=1e-10)
    np.testing.assert_allclose(last, iterates[T - 1], rtol=0, atol=1e-10)  # w_T
    norms = np.linalg.norm(iterates, axis=1)
    if binding:
        assert np.sum(np.isclose(norms, radius, rtol=1e-12)) > T // 2  # the ball binds most of the time
    else:
        assert norms.max() < 1e-3 * radius and np.abs(w_bar).max() > 1e-3  # moved, never near the edge


@pytest.mark.parametrize("indices", [
    [3, 5],                                  # T = 1: w̄ = w_1 = 0
    [0, 2, 4, 6, 8, 1, 1, 3, 0, 7, 7, 7],    # a run of draws of one label before the first of the other
    [1] * 8 + [0] * 8,                       # one record drawn again and again, then another
])
@pytest.mark.parametrize("loss", ["hinge", "square"])
def test_kernel_matches_naive_on_chosen_draws(indices, loss):
    X, _ = _records(10, 3, seed=3)
    signs = np.where(np.arange(10) % 2 == 0, 1, -1).astype(np.int8)  # even records positive
    iterates, w_bar = naive_sgd.pairwise_sgd(X, signs, indices, 0.3, 0.5, loss)
    last, kernel_bar = _kernel(X, signs, indices, 0.3, 0.5, loss)
    np.testing.assert_allclose(kernel_bar, w_bar, rtol=0, atol=1e-10)
    np.testing.assert_allclose(last, iterates[len(indices) - 2], rtol=0, atol=1e-10)


def test_estimator_runs_the_kernel_on_its_own_draws():
    """The non-private twin's coef_ is the literal algorithm's w̄_T on the draws of child 0 of the seed."""
    n, d, T, eta, seed = 12, 3, 90, 0.02, 7
    X, signs = _records(n, d, seed=4)
    est = OutputPerturbedSGD(norm_bound=1.0, T=T, eta=eta, private=False, random_state=seed).fit(X, signs)
    sampling_seq, _ = np.random.SeedSequence(seed).spawn(2)
    indices = np.random.Generator(np.random.PCG64(sampling_seq)).integers(0, n, size=T + 1)
    Z, _ = est.bounds_.transform(X)
    _, w_bar = naive_sgd.pairwise_sgd(Z, signs, indices, eta, 1.0, "hinge")
    np.testing.assert_allclose(est.coef_, w_bar, rtol=0, atol=1e-10)


# -- eq. (5) ----------------------------------------------------------------------------------------
def test_sigma_matches_eq5_by_hand():
    # n = 10, T = 100, η = 0.01, G = 2 (hinge), ε = 0.5, δ = 1e-3:
    #   8η²G² ln(2.5/δ)/ε² = 8 · 1e-4 · 4 · ln(2500) / 0.25 = 3.2e-3 · 7.824046010856292 / 0.25
    #                      = 0.10014778893896054
    #   T + 3T² ln²(eT) ln²(2/δ)/n² = 100 + 3 · 1e4 / 100 · (1 + ln 100)² · ln²(2000)
    #                      = 100 + 300 · 31.41793281388978 · 57.773718199472874 = 544639.2390398921
    #   σ² = 0.10014778893896054 · 544639.2390398921 = 54544.41555924...
    sigma = paper_sigma(n=10, T=100, eta=0.01, lipschitz=2.0, epsilon=0.5, delta=1e-3)
    assert sigma**2 == pytest.approx(0.10014778893896054 * 544639.2390398921, rel=1e-12)
    assert sigma**2 == pytest.approx(54544.41555924, rel=1e-10)
    # The sensitivity eq. (5) implies for the classic mechanism at δ/2: Δ₅ = σε/√(2 ln(2.5/δ)),
    # i.e. Δ₅² = 4η²G²(…) = 4 · 1e-4 · 4 · 544639.2390398921.
    delta5 = paper_sensitivity(n=10, T=100, eta=0.01, lipschitz=2.0, delta=1e-3)
    assert delta5**2 == pytest.approx(1.6e-3 * 544639.2390398921, rel=1e-12)
    assert delta5 == pytest.approx(sigma * 0.5 / math.sqrt(2 * math.log(2500)), rel=1e-12)


def test_report_carries_eq5():
    X, signs = _records(30, 4, seed=5)
    est = OutputPerturbedSGD(norm_bound=1.0, epsilon=0.7, delta=1e-4, loss="square", radius=0.5, random_state=0).fit(X, signs)
    report = est.privacy_report_
    G = 4.0 * (1.0 + 2.0 * 0.5)
    (release,) = report["releases"]
    assert report["lipschitz"] == G and report["T"] == 900 and report["eta"] == 30**-1.5
    assert release["round"] == 900
    assert release["sigma"] == paper_sigma(30, 900, 30**-1.5, G, 0.7, 1e-4)
    assert release["sensitivity"] == paper_sensitivity(30, 900, 30**-1.5, G, 1e-4)
    assert report["sensitivity_in_proof"] == pytest.approx(math.sqrt(math.e) * release["sensitivity"])
    assert report["sigma_in_proof"] == pytest.approx(math.sqrt(math.e) * release["sigma"])
    assert report["claim_probability"] == 1.0 - 1e-4 / 2
    assert report["sensitivity_diameter"] == 1.0
    rho_diameter = 0.5 * (1.0 / release["sigma"]) ** 2
    assert report["epsilon_diameter"] == eps_from_rho(rho_diameter, 1e-4, method="gaussian")
    assert report["epsilon_diameter"] < 0.7  # eq. (5)'s σ is far above what diam(W) needs here


# -- the released noise -----------------------------------------------------------------------------
def test_released_noise_has_the_calibrated_std():
    """coef_ − twin's w̄ (same seed, hence same draws) over 300 seeds (100 in the fast tier): pooled z-scores
    ~ N(0, 1).

    The radius is large, so the final projection never binds and coef_ − w̄ is exactly the noise u.
    KS for the shape, and Σz² ~ χ²(N) for the scale (KS alone would miss a 5 % error in σ at N = 6000).
    """
    X, signs = _records(20, 20, seed=6)
    params = dict(epsilon=2.0, delta=1e-3, radius=1e6, norm_bound=1.0)
    z = []
    for seed in range(by_tier(fast=100, full=300)):
        private = OutputPerturbedSGD(**params, random_state=seed).fit(X, signs)
        twin = OutputPerturbedSGD(**params, private=False, random_state=seed).fit(X, signs)
        sigma = private.privacy_report_["releases"][0]["sigma"]
        assert np.linalg.norm(private.coef_) < 0.01 * params["radius"]  # the final projection is inactive
        z.append((private.coef_ - twin.coef_) / sigma)
    z = np.concatenate(z)
    alpha = 1e-3
    assert stats.kstest(z, "norm").pvalue > alpha
    chi2 = float(np.sum(z**2))
    tail = min(stats.chi2.cdf(chi2, z.size), stats.chi2.sf(chi2, z.size))
    assert 2.0 * tail > alpha


# -- estimator API ----------------------------------------------------------------------------------
REPORT_KEYS = {
    "algorithm", "mode", "accounting", "epsilon", "delta", "n_seen", "status", "curator_only",
    "epsilon_spent", "releases", "n_clipped", "private", "T", "eta", "loss", "lipschitz", "radius",
    "privacy_claim", "claim_probability", "sensitivity_in_proof", "sigma_in_proof", "sensitivity_diameter",
    "epsilon_diameter",
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(8)
    X = rng.uniform(0.0, 1.0, size=(40, 3))
    y = np.where(X[:, 0] + 0.2 * rng.standard_normal(40) > 0.5, "yes", "no")
    return X, y


def test_shapes_and_predictions(data):
    X, y = data
    est = OutputPerturbedSGD(bounds=(0, 1), random_state=0).fit(X, y)
    assert est.coef_.shape == (3,) and est.n_features_in_ == 3
    assert list(est.classes_) == ["no", "yes"]
    assert np.linalg.norm(est.coef_) <= 1.0 + 1e-12
    assert est.decision_function(X[:7]).shape == (7,)
    assert est.predict_proba(X[:7]).shape == (7, 2)
    assert set(est.predict(X)) <= {"no", "yes"}
    assert 0.0 <= est.score(X, y) <= 1.0


def test_privacy_report(data):
    X, y = data
    est = OutputPerturbedSGD(epsilon=0.5, delta=1e-6, bounds=(0, 1), random_state=0).fit(X, y)
    report = est.privacy_report_
    assert REPORT_KEYS <= set(report)
    assert report["accounting"] == report["mode"] == "paper"
    assert report["epsilon"] == report["paper_epsilon"] == 0.5 and report["delta"] == 1e-6
    # What is proven for this σ, computed here independently with the exact Gaussian curve
    # (Balle & Wang): δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), solved for ε by bisection.
    from scipy.stats import norm

    sigma = report["releases"][0]["sigma"]

    def eps_for(mu, delta):
        lo, hi = 0.0, 200.0
        for _ in range(200):
            mid = (lo + hi) / 2
            if norm.cdf(-mid / mu + mu / 2) - math.exp(mid) * norm.cdf(-mid / mu - mu / 2) > delta:
                lo = mid
            else:
                hi = mid
        return hi

    eps_proof = eps_for(report["sensitivity_in_proof"] / sigma, 1e-6 / 2)
    eps_diameter = eps_for(2 * est.radius / sigma, 1e-6)
    assert report["epsilon_spent"] == pytest.approx(min(eps_proof, eps_diameter), rel=1e-6, abs=1e-9)
    assert "paper_epsilon" in report["privacy_claim"]
    # An (ε, δ) claim, not zCDP: no ρ keys (the rule of onpair.privacy.reports; NaN before), one (ε, δ) row.
    assert not {"rho_budget", "rho_spent", "rho_remaining"} & set(report)
    (release,) = report["releases"]
    assert release["event"] == "approximate_dp" and "rho" not in release
    assert (release["epsilon"], release["delta"]) == (report["epsilon_spent"], 1e-6)
    assert report["private"] is True and report["n_clipped"] == 0


def test_defaults_follow_corollary_2(data):
    X, y = data
    n = X.shape[0]
    est = OutputPerturbedSGD(bounds=(0, 1), random_state=3).fit(X, y)
    assert est.T is None and est.eta is None  # parameters stay as given
    assert est.privacy_report_["T"] == n * n and est.privacy_report_["eta"] == n ** -1.5
    explicit = OutputPerturbedSGD(bounds=(0, 1), T=n * n, eta=n ** -1.5, random_state=3).fit(X, y)
    np.testing.assert_array_equal(est.coef_, explicit.coef_)


def test_random_state_reproducibility(data):
    X, y = data
    first = OutputPerturbedSGD(bounds=(0, 1), random_state=11).fit(X, y)
    again = OutputPerturbedSGD(bounds=(0, 1), random_state=11).fit(X, y)
    other = OutputPerturbedSGD(bounds=(0, 1), random_state=12).fit(X, y)
    np.testing.assert_array_equal(first.coef_, again.coef_)
    assert not np.array_equal(first.coef_, other.coef_)
    twin = OutputPerturbedSGD(bounds=(0, 1), private=False, random_state=11).fit(X, y)
    twin_other = OutputPerturbedSGD(bounds=(0, 1), private=False, random_state=12).fit(X, y)
    assert not np.array_equal(twin.coef_, twin_other.coef_)  # the seed also drives the draws


def test_no_global_random_state_touched(data):
    X, y = data
    np.random.seed(0)
    before = np.random.get_state()[1].copy()
    OutputPerturbedSGD(bounds=(0, 1), random_state=0).fit(X, y)
    np.testing.assert_array_equal(np.random.get_state()[1], before)


def test_non_private_twin(data):
    X, y = data
    twin = OutputPerturbedSGD(bounds=(0, 1), private=False, random_state=0).fit(X, y)
    report = twin.privacy_report_
    assert report["private"] is False and report["releases"] == [] and report["epsilon_spent"] == math.inf
    assert twin.score(X, y) > 0.8  # the SGD itself learns; only the noise of eq. (5) drowns it


def test_short_run_warns():
    X, signs = _records(30, 3, seed=9)
    with pytest.warns(PrivacyWarning, match="T >= n"):
        OutputPerturbedSGD(norm_bound=1.0, T=10, random_state=0).fit(X, signs)


BAD_PARAMS = [
    ("epsilon", 0), ("epsilon", -1.0), ("epsilon", math.nan), ("epsilon", math.inf), ("epsilon", "1"),
    ("epsilon", True), ("delta", 0.0), ("delta", 1.0), ("delta", 2), ("delta", None),
    ("loss", "logistic"), ("loss", "Hinge"), ("loss", None),
    ("radius", 0.0), ("radius", -1), ("radius", math.inf),
    ("T", 0), ("T", -5), ("T", 2.5), ("T", 100.0), ("T", "100"), ("T", True),
    ("eta", 0.0), ("eta", -0.1), ("eta", math.nan), ("eta", "auto"),
    ("private", "yes"), ("private", 1), ("private", None),
]


@pytest.mark.parametrize("name,value", BAD_PARAMS, ids=[f"{n}={v!r}" for n, v in BAD_PARAMS])
def test_bad_parameter_is_named_and_nothing_is_fitted(data, name, value):
    X, y = data
    est = OutputPerturbedSGD(bounds=(0, 1), random_state=0, **{name: value})
    with pytest.raises(ValueError, match=re.escape(name)) as info:
        est.fit(X, y)
    assert repr(value) in str(info.value)
    assert not hasattr(est, "coef_") and not hasattr(est, "privacy_report_")
    # A fitted estimator keeps its fitted state when a refit with a bad parameter fails.
    fitted = OutputPerturbedSGD(bounds=(0, 1), random_state=0).fit(X, y)
    coef, report = fitted.coef_, fitted.privacy_report_
    fitted.set_params(**{name: value})
    with pytest.raises(ValueError, match=re.escape(name)):
        fitted.fit(X, y)
    assert fitted.coef_ is coef and fitted.privacy_report_ is report


@pytest.mark.parametrize("X_bad,y_bad,fragment", [
    (np.array([[0.1, math.nan], [0.2, 0.3]]), [0, 1], "finite"),
    (np.array([[0.1, 0.2], [0.2, 0.3], [0.5, 0.5]]), [1, 1, 1], "2 classes"),
    (np.array([[0.1, 0.2]]), [1], "at least 2 records"),
])
def test_bad_data_is_rejected_and_nothing_is_fitted(X_bad, y_bad, fragment):
    est = OutputPerturbedSGD(norm_bound=1.0, random_state=0)
    with pytest.raises(ValueError, match=fragment):
        est.fit(X_bad, y_bad)
    assert not hasattr(est, "coef_")


def test_get_params_are_verbatim():
    est = OutputPerturbedSGD(norm_bound=1.0, epsilon=2, T=50, eta=0.1, loss="square")
    params = est.get_params()
    assert params["epsilon"] == 2 and type(params["epsilon"]) is int
    assert params["T"] == 50 and params["eta"] == 0.1 and params["loss"] == "square"
    assert params["bounds"] is None and params["random_state"] is None
    assert repr(est) == "OutputPerturbedSGD(T=50, epsilon=2, eta=0.1, loss='square', norm_bound=1.0)"
