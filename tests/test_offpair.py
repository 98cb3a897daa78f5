"""OffPairStrC / OffPairC: the same kernel as the online learners, one analytic-Gaussian release."""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

import naive
from onpair import OffPairC, OffPairStrC, PairwiseGIGA, PrivacyWarning
from onpair.core.bounds import FeatureBounds
from onpair.privacy import PrivacyWarning as _PW  # noqa: F401  (same class, re-exported)
from tiers import by_tier


def _data(seed, n=200, d=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, d))
    y = (X[:, 0] + 0.3 * rng.standard_normal(n) > 0.5).astype(int)
    return X, y


def _order(random_state, n):
    """The estimator's public order: first child of its SeedSequence (order, init, noise)."""
    order_seq = np.random.SeedSequence(random_state).spawn(3)[0]
    return np.random.Generator(np.random.PCG64(order_seq)).permutation(n)


@pytest.mark.parametrize("output", ["last", "average"])
def test_non_private_twin_is_pairwise_giga_over_the_permuted_data(output):
    X, y = _data(0)
    twin = OffPairStrC(bounds=(0, 1), lam=2.0, output=output, private=False, random_state=7).fit(X, y)
    order = _order(7, len(y))
    Z, _ = FeatureBounds(0, 1).transform(X[order])
    signs = np.where(y[order] == 1, 1, -1)
    steps = PairwiseGIGA(norm_bound=1.0, lam=2.0, radius=0.1, n_features=3)._step_rule.block(0, len(y))
    iterates, _ = naive.giga(Z, signs, steps, 2.0, np.zeros(3), 0.1, "logistic", np.zeros(3))
    expected = iterates[-1] if output == "last" else iterates.mean(axis=0)
    np.testing.assert_allclose(twin.coef_, expected, atol=1e-10)
    assert twin.privacy_report_["releases"] == [] and math.isinf(twin.privacy_report_["epsilon_spent"])


@pytest.mark.parametrize("output", ["last", "average"])
def test_sensitivity_is_the_ledger_and_sigma_the_analytic_gaussian(output):
    X, y = _data(1)
    n = len(y)
    est = OffPairStrC(epsilon=1.5, delta=1e-4, bounds=(0, 1), lam=2.0, output=output, random_state=0).fit(X, y)
    release = est.privacy_report_["releases"][0]
    G = 4.0 / (1.0 + math.exp(-0.4))
    steps = PairwiseGIGA(norm_bound=1.0, lam=2.0, radius=0.1, n_features=3)._step_rule.block(0, n)
    U = naive.ledger(steps, G, 4.0 + 2.0, 2.0, 0.2, pair_change=G)
    expected = U[-1] if output == "last" else U.mean()
    assert release["sensitivity"] == pytest.approx(expected, rel=1e-12)
    # Balle & Wang: δ(ε) of a Gaussian mechanism with Δ/σ = μ is Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).
    mu = release["sensitivity"] / release["sigma"]
    delta = stats.norm.cdf(-1.5 / mu + mu / 2) - math.exp(1.5) * stats.norm.cdf(-1.5 / mu - mu / 2)
    assert delta <= 1e-4 and delta == pytest.approx(1e-4, rel=1e-6)
    assert est.privacy_report_["epsilon_spent"] == pytest.approx(1.5, rel=1e-6)
    assert est.privacy_report_["epsilon_spent"] <= 1.5 + 1e-12


def test_paper_mode_sigma_is_algorithm_3_as_printed():
    n, eps, delta, lam = 300, 0.8, 1.0 / 300, 20.0
    X, y = _data(2, n=n)
    est = OffPairStrC(epsilon=eps, delta=delta, lam=lam, radius=0.1, bounds=(0, 1), mode="paper",
                      output="average", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # T₁ = 16·24²/20² = 23.04 → 24 < n: no warning
        est.fit(X, y)
    G = 4.0 / (1.0 + math.exp(-0.4)) + lam * 0.1
    sigma_sq = 128 * G**2 * math.log(n) ** 2 * math.log(1.25 / delta) / (lam**2 * n**2 * eps**2)
    assert est.privacy_report_["releases"][0]["sigma"] ** 2 == pytest.approx(sigma_sq, rel=1e-12)


def test_paper_mode_with_the_papers_lambda_only_averages_random_points():
    X, y = _data(3)
    with pytest.warns(PrivacyWarning, match="random points"), \
            pytest.warns(PrivacyWarning, match="epsilon = 1.0: Alg. 3's σ is the classic Gaussian mechanism"):
        est = OffPairStrC(lam=1e-3, radius=1.0, bounds=(0, 1), mode="paper", output="average",
                          random_state=0).fit(X, y)
    with pytest.warns(PrivacyWarning):
        twin = OffPairStrC(lam=1e-3, radius=1.0, bounds=(0, 1), mode="paper", output="average",
                           random_state=0, private=False).fit(X[::-1], 1 - y[::-1])
    # Without noise the "model" is the average of data-independent random points: the same for any data.
    same = OffPairStrC(lam=1e-3, radius=1.0, bounds=(0, 1), mode="paper", output="average",
                       random_state=0, private=False)
    with pytest.warns(PrivacyWarning):
        same.fit(X, y)
    np.testing.assert_allclose(twin.coef_, same.coef_, atol=1e-15)
    assert np.linalg.norm(est.coef_) <= 1.0 + 1e-12


def test_released_noise_has_the_calibrated_standard_deviation():
    """coef − twin (same random_state: same order, no noise) over 250 seeds (80 in the fast tier) is N(0, σ²):
    KS, α = 0.001."""
    X, y = _data(4, n=80)
    z = []
    for seed in range(by_tier(fast=80, full=250)):
        private = OffPairStrC(bounds=(0, 1), radius=100.0, lam=2.0, random_state=seed).fit(X, y)
        twin = OffPairStrC(bounds=(0, 1), radius=100.0, lam=2.0, random_state=seed, private=False).fit(X, y)
        z.append((private.coef_ - twin.coef_) / private.privacy_report_["releases"][0]["sigma"])
    z = np.concatenate(z)
    assert stats.kstest(z, "norm").pvalue > 0.001


def test_offpairc_alpha_is_c_over_root_n_and_random_center_is_opt_in():
    X, y = _data(5, n=400)
    est = OffPairC(c=10.0, bounds=(0, 1), random_state=0).fit(X, y)
    assert est.privacy_report_["strong_convexity"] == pytest.approx(10.0 / 20.0)
    a = OffPairC(c=10.0, center="random", bounds=(0, 1), random_state=0, private=False).fit(X, y)
    b = OffPairC(c=10.0, center="zero", bounds=(0, 1), random_state=0, private=False).fit(X, y)
    assert not np.allclose(a.coef_, b.coef_)


def test_failed_fit_leaves_a_fitted_estimator_as_it_was():
    X, y = _data(6)
    est = OffPairStrC(bounds=(0, 1), random_state=0).fit(X, y)
    before = (est.coef_.copy(), est.privacy_report_, est.classes_.copy())
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        est.fit(bad, y)
    with pytest.raises(ValueError, match="2 classes"):
        est.fit(X, np.ones(len(y)))
    est.set_params(epsilon=-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        est.fit(X, y)
    assert np.array_equal(est.coef_, before[0]) and est.privacy_report_ == before[1]


def test_predict_uses_string_classes_and_score_is_auc():
    X, y = _data(7, n=600)
    labels = np.where(y == 1, "sick", "healthy")
    est = OffPairStrC(epsilon=2.0, bounds=(0, 1), random_state=0).fit(X, labels)
    assert est.classes_.tolist() == ["healthy", "sick"]
    assert set(est.predict(X)) <= {"healthy", "sick"}
    assert est.score(X, labels) > 0.8
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert np.all((proba[:, 1] > 0.5) == (est.decision_function(X) > 0))


def test_random_state_reproduces_and_none_is_fresh():
    X, y = _data(8)
    a = OffPairStrC(bounds=(0, 1), random_state=3).fit(X, y).coef_
    b = OffPairStrC(bounds=(0, 1), random_state=3).fit(X, y).coef_
    c = OffPairStrC(bounds=(0, 1)).fit(X, y).coef_
    d = OffPairStrC(bounds=(0, 1)).fit(X, y).coef_
    assert np.array_equal(a, b) and not np.array_equal(c, d)
