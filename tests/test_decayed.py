"""Decayed statistics (issue 25): the DecayedBLT mechanism against explicit matrices (tests/naive_blt.py) and an
independent accountant (dp-accounting), its cost independent of the stream length, the error of every release,
and the learners that use it (OnPairStats and the river classifier with ``half_life``)."""

from __future__ import annotations

import math
import warnings

import dp_accounting
import numpy as np
import pytest
from dp_accounting import rdp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import ellipk

import naive_blt as naive
import onpair
from learner_state import assert_same_state, state_of
from onpair import OnPairStats
from onpair.privacy.continual import DecayedBLT, PrefixSumMechanism
from onpair.privacy.continual.decayed import (MAX_HALF_LIFE, MIN_HALF_LIFE, check_half_life, decay_of,
                                              fitted_decayed_parameters)
from onpair.privacy.continual.decayed_fits import DECAYED_FITS, FIT_MAX_BUFFERS, FIT_TOLERANCE
from onpair.statistics.model import released_model
from tiers import by_tier

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=30,
                    suppress_health_check=[HealthCheck.too_slow])
ORDERS = np.array([1.25, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0, 256.0])


def make(dim=3, sensitivity=1.5, rho=0.7, half_life=16.0, **kwargs):
    return DecayedBLT(dim=dim, sensitivity=sensitivity, rho=rho, half_life=half_life, **kwargs)


def data(n, k, seed=0):
    return np.random.default_rng(seed).standard_normal((n, k))


def linear_maps(T, half_life, **kwargs):
    """(data map, noise map, mechanism) over T records, read off the mechanism as linear maps (column q: the
    releases of the unit stream e_q with zero noise; column r: zero data with the r-th normal set to 1)."""
    mech = DecayedBLT(dim=T, sensitivity=1.0, rho=1.0, half_life=half_life, **kwargs)
    out = np.empty((T, T))
    mech._apply(np.eye(T), np.zeros((T, T)), out)
    noise_mech = DecayedBLT(dim=T, sensitivity=1.0, rho=1.0, half_life=half_life, **kwargs)
    noise_out = np.empty((T, T))
    noise_mech._apply(np.zeros((T, T)), np.eye(T), noise_out)
    return out, noise_out, mech


# -- construction -------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, error", [(True, TypeError), ("100", TypeError), (None, TypeError),
                                          (3.9, ValueError), (0, ValueError), (-5, ValueError),
                                          (float("nan"), ValueError), (float("inf"), ValueError),
                                          (2.0**24 + 1, ValueError)])
def test_half_life_refusals(value, error):
    with pytest.raises(error, match="half_life"):
        make(half_life=value)
    if value is not None:  # None: no forgetting, the learners' default
        with pytest.raises(error, match="half_life"):
            OnPairStats(half_life=value)


def test_half_life_needs_the_blt_and_the_stats_learner():
    for mechanism in ("toeplitz", "epochs", "tree"):
        with pytest.raises(ValueError, match="half_life is for mechanism='blt'"):
            OnPairStats(half_life=100, mechanism=mechanism)
    with pytest.raises(ValueError, match="half_life releases decayed sums"):
        OnPairStats(half_life=100, horizon=1000, final_share=0.2)
    from onpair.river import PrivatePairwiseClassifier
    with pytest.raises(ValueError, match="half_life is for learner='stats'"):
        PrivatePairwiseClassifier(learner="onpairstrc", bounds=(0, 1), half_life=100)
    with pytest.raises(ValueError, match="learner_params sets half_life"):
        PrivatePairwiseClassifier(bounds=(0, 1), learner_params={"half_life": 100})


def test_decay_and_half_life():
    for H in (MIN_HALF_LIFE, 7, 1000, 12_345.5, MAX_HALF_LIFE):
        assert math.isclose(decay_of(H) ** H, 0.5, rel_tol=4 * H * 2.0**-52)  # γ rounded: H·ulp
        assert check_half_life(np.float64(H)) == float(H)
    assert check_half_life(np.int64(64)) == 64.0


def test_registered_by_kind_not_as_an_option():
    from onpair.privacy.continual.base import PrefixSumMechanism as Base
    assert Base._registry["decayed_buffered_toeplitz"] is DecayedBLT
    assert "decayed_buffered_toeplitz" not in PrefixSumMechanism.options()
    assert PrefixSumMechanism.for_option("blt") is not DecayedBLT


# -- the stored fits ------------------------------------------------------------------------------------
def sqrt_stationary(gamma):
    """Σ_n γ^{2n} r_n², summed directly (r_n = C(2n, n)/4ⁿ by its recursion), independent of scipy's K."""
    total, r, n, g2 = 0.0, 1.0, 0, gamma * gamma
    terms = []
    while True:
        term = r * r * g2**n
        terms.append(term)
        if term < 1e-18 and n > 10:
            break
        r *= (2 * n + 1) / (2 * n + 2)
        n += 1
    return math.fsum(terms)


def test_elliptic_reference_equals_the_direct_sum():
    for H in (4.0, 64.0, 1000.0):
        g = decay_of(H)
        assert math.isclose(2.0 / math.pi * float(ellipk(g * g)), sqrt_stationary(g), rel_tol=1e-10)


def test_stored_fits_within_the_tolerance_of_the_square_root():
    assert len(DECAYED_FITS) >= 40 and min(DECAYED_FITS) == math.log2(MIN_HALF_LIFE)
    assert max(DECAYED_FITS) == math.log2(MAX_HALF_LIFE)
    for e, (decays, inverse) in DECAYED_FITS.items():
        assert e * 2 == int(e * 2)
        p = onpair.privacy.continual.BLTParameters(decays, inverse)  # valid: interlacing, signs
        assert p.buffers <= FIT_MAX_BUFFERS
        g = decay_of(2.0**e)
        ratio = math.sqrt(p.sensitivity_squared() * p.error_sum(math.inf, g)) / (2 / math.pi * float(ellipk(g * g)))
        assert 1.0 - 1e-9 <= ratio <= 1.0 + FIT_TOLERANCE, (e, ratio)  # the square root is optimal: never below


def test_fit_rule_picks_the_nearest_stored_half_life():
    assert fitted_decayed_parameters(1000)[1] == "half-life 2^10"
    assert fitted_decayed_parameters(2.0**10.25)[1] == "half-life 2^10.5"  # a tie: the larger
    assert fitted_decayed_parameters(2.0**10.2)[1] == "half-life 2^10"
    mech = make(half_life=1000)
    g = decay_of(1000)
    ratio = math.sqrt(mech.kappa2 * mech.parameters.error_sum(math.inf, g)) / sqrt_stationary(g)
    assert ratio < 1.005


# -- the kernel against the explicit matrices -------------------------------------------------------------
@pytest.mark.parametrize("half_life, kwargs", [(4.0, {}), (16.0, {}), (1000.0, {}), (16.0, dict(horizon=40)),
                                               (8.0, dict(decays=[0.97, 0.6, 0.2], inverse_decays=[0.8, 0.3, 0.05]))])
def test_releases_match_the_explicit_matrices(half_life, kwargs):
    T, k = 40, 3
    V, Z = data(T, k, seed=1), data(T, k, seed=2)
    mech = make(half_life=half_life, **kwargs)
    sigma = mech.describe()["sigma"]
    out = np.empty((T, k))
    mech._apply(V.copy(), Z.copy(), out)
    p = mech.parameters
    expected, variances = naive.prefixes(V, p.decays, p.inverse_decays, sigma, Z, decay=decay_of(half_life))
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T + 1)], variances, rtol=1e-9)
    assert np.array_equal(mech.estimate(), out[-1])


@pytest.mark.parametrize("half_life", [4.0, 10.0, 64.0])
def test_cost_by_brute_force_column_norms_on_a_truncated_stream(half_life):
    """The releases are A_γ·V + σ·B·Z: the data map read off the mechanism is A_γ; C = B⁻¹A_γ is what they
    post-process (C·V + σZ); its largest column norm² over the T columns equals Σ_{n<T} c_n², grows with T and
    stays below κ²(∞), the mechanism's: the cost of a truncated stream never exceeds the unbounded one's."""
    previous = 0.0
    for T in (20, 60, 150):
        A_emp, noise_map, mech = linear_maps(T, half_life)
        np.testing.assert_allclose(A_emp, naive.workload(T, decay_of(half_life)), rtol=1e-13, atol=0)
        sigma = mech.describe()["sigma"]
        C = np.linalg.solve(noise_map / sigma, A_emp)
        np.testing.assert_allclose(np.tril(C), C, atol=1e-9)
        p = mech.parameters
        _, C_naive, _ = naive.matrices(T, p.decays, p.inverse_decays, decay_of(half_life))
        np.testing.assert_allclose(C, C_naive, atol=1e-8)
        cut = naive.largest_column_norm2(C_naive)
        assert math.isclose(cut, p.sensitivity_squared(T), rel_tol=1e-9)
        assert previous <= cut <= mech.kappa2
        previous = cut
    # the infinite sum: the explicit coefficients to 20,000 terms plus the closed-form tail
    c = naive.coefficients(p.decays, p.inverse_decays, 3000)
    tail = p.sensitivity_squared() - p.sensitivity_squared(3000)
    assert tail < 1e-6 and math.isclose(mech.kappa2, math.fsum(c**2) + tail, rel_tol=1e-10)


@pytest.mark.parametrize("half_life", [4.0, 100.0, 1000.0, 2.0**20])
def test_cost_by_dp_accounting_and_independent_of_the_stream_length(half_life):
    delta, rho = 2.0, 0.3
    mech = DecayedBLT(dim=2, sensitivity=delta, rho=rho, half_life=half_life)
    d = mech.describe()
    acc = rdp.RdpAccountant(ORDERS)
    acc.compose(dp_accounting.GaussianDpEvent(d["sigma"] / (delta * math.sqrt(d["kappa2"]))))
    assert np.all(acc._rdp <= ORDERS * rho)
    np.testing.assert_allclose(acc._rdp, ORDERS * rho, rtol=1e-8)
    np.testing.assert_allclose(acc._rdp, ORDERS * d["rho_spent_bound"], rtol=1e-12)
    rng = np.random.default_rng(0)
    rows = [mech.privacy_rows()[0]["rho"]]
    for n in (10, 1000, 20_000):
        mech.add_block(np.zeros((n, 2)), rng)
        rows.append(mech.privacy_rows()[0]["rho"])
        assert mech.describe()["kappa2"] == d["kappa2"] and mech.describe()["sigma"] == d["sigma"]
    assert len(set(rows)) == 1 and rows[0] <= rho


def test_learner_cost_is_the_same_for_every_stream_length():
    X, y = np.random.default_rng(0).uniform(0, 1, (3000, 3)), np.arange(3000) % 2 == 0
    short = OnPairStats(half_life=200, bounds=(0, 1), seed=0).learn_many(X[:10], y[:10])
    long = OnPairStats(half_life=200, bounds=(0, 1), seed=0).learn_many(X, y)
    a, b = short.privacy_report(), long.privacy_report()
    assert a["rho_spent"] == b["rho_spent"] <= a["rho_budget"] and a["epsilon_spent"] <= 1.0
    assert a["releases"][0]["rho"] == b["releases"][0]["rho"]
    assert b["releases"][0]["mechanism"] == "decayed_buffered_toeplitz" and b["schedule"]["half_life"] == 200.0


# -- error ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("half_life", [4.0, 16.0, 100.0])
def test_variance_by_brute_force_covariance_and_bounded(half_life):
    T = 80
    _, noise_map, mech = linear_maps(T, half_life)
    brute = (noise_map**2).sum(axis=1)
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T + 1)], brute, rtol=1e-9)
    assert np.all(np.diff(brute) >= -1e-12)
    stationary = mech.stationary_variance()
    assert brute[-1] <= stationary * (1 + 1e-12)
    assert mech.variance(10**9) <= stationary * (1 + 1e-12)
    assert math.isclose(mech.variance(10**9), stationary, rel_tol=1e-9)  # far beyond every pole's memory


def test_empirical_variance_chi_square():
    """Releases of zero data after 50 records, over 400 noise seeds (150 in the fast tier): variance as stated
    (χ², α = 0.001)."""
    draws = []
    for seed in range(by_tier(fast=150, full=400)):
        mech = make(dim=1, half_life=16.0)
        mech.add_block(np.zeros((50, 1)), np.random.default_rng(seed))
        draws.append(mech.estimate()[0])
    statistic = np.sum(np.square(draws)) / mech.variance()
    p = 2 * min(stats.chi2.cdf(statistic, len(draws)), stats.chi2.sf(statistic, len(draws)))
    assert p > 0.001


# -- blocks, states, failures -------------------------------------------------------------------------------
@SETTINGS
@given(cut=st.lists(st.integers(0, 60), max_size=4), seed=st.integers(0, 2**32 - 1),
       half_life=st.sampled_from([4.0, 9.5, 300.0]))
def test_block_splitting_property(cut, seed, half_life):
    V = data(60, 2, seed=seed % 1000)
    whole = make(dim=2, half_life=half_life)
    whole.add_block(V, np.random.default_rng(seed))
    parts = make(dim=2, half_life=half_life)
    rng = np.random.default_rng(seed)
    bounds = [0, *sorted(cut), 60]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi - lo == 1:
            parts.add_one(V[lo], rng)
        else:
            parts.add_block(V[lo:hi], rng)
    assert np.array_equal(whole.estimate(), parts.estimate())
    assert np.array_equal(whole.to_state()[1]["buffers"], parts.to_state()[1]["buffers"])


@SETTINGS
@given(stop=st.integers(0, 50), seed=st.integers(0, 2**32 - 1), half_life=st.sampled_from([4.0, 33.0, 5000.0]))
def test_state_round_trip_property(stop, seed, half_life):
    V = data(50, 2, seed=seed % 997)
    whole = make(dim=2, half_life=half_life)
    rng = np.random.default_rng(seed)
    whole.add_block(V, rng)
    first = make(dim=2, half_life=half_life)
    rng2 = np.random.default_rng(seed)
    first.add_block(V[:stop], rng2)
    scalars, arrays = first.to_state()
    resumed = DecayedBLT.from_state(first.get_params(), scalars, arrays)
    resumed.add_block(V[stop:], rng2)
    assert np.array_equal(whole.estimate(), resumed.estimate())
    assert resumed.variance() == whole.variance()


def test_a_state_resumes_only_with_its_half_life_and_decays():
    mech = make(half_life=64.0)
    mech.add_block(data(5, 3), np.random.default_rng(0))
    scalars, arrays = mech.to_state()
    other = dict(mech.get_params(), half_life=65.0)
    with pytest.raises(ValueError, match="resumes only with the parameters"):
        DecayedBLT.from_state(other, scalars, arrays)
    prefix = onpair.privacy.continual.BufferedToeplitz(dim=3, sensitivity=1.5, rho=0.7)
    with pytest.raises(ValueError):
        type(prefix).from_state(prefix.get_params(), scalars, arrays)


def test_failed_add_block_changes_nothing():
    mech = make()
    rng = np.random.default_rng(0)
    mech.add_block(data(5, 3), rng)
    before = (mech.to_state(), rng.bit_generator.state)
    bad = data(4, 3)
    bad[2, 1] = np.nan
    with pytest.raises(ValueError):
        mech.add_block(bad, rng)
    after = (mech.to_state(), rng.bit_generator.state)
    assert before[0][0] == after[0][0] and before[1] == after[1]
    assert all(np.array_equal(before[0][1][k], after[0][1][k]) for k in before[0][1])


def test_refuses_copies():
    import copy
    import pickle
    mech = make()
    for f in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError):
            f(mech)


# -- the learners -------------------------------------------------------------------------------------------
def drifting(n=4000, d=3, flip=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, d))
    y = X[:, 0] > 0.5
    y[flip:] = ~y[flip:]
    return X, y


def test_the_decayed_twin_holds_the_exact_decayed_sums_and_the_model_is_computed_from_them():
    """The twin with a half-life: its sums are W_γ·rows (the explicit workload matrix), and its model is the
    unchanged model code applied to the decoded decayed statistics."""
    from onpair.statistics._kernels import statistics_rows
    X, y = drifting(300)
    learner = OnPairStats(private=False, half_life=20, bounds=(0, 1)).learn_many(X, y)
    Z, _ = onpair.FeatureBounds(0.0, 1.0).transform(X)
    rows = statistics_rows(Z, y.astype(np.int64), 2, learner._weights)
    expected = naive.workload(300, decay_of(20))[-1] @ rows
    np.testing.assert_allclose(learner._stats.estimate(), expected, rtol=1e-12, atol=1e-12)
    stats_ = learner.class_statistics()
    assert math.isclose(stats_.counts.sum(), (1 - decay_of(20) ** 300) / (1 - decay_of(20)), rel_tol=1e-9)
    np.testing.assert_allclose(learner.model, released_model("square", stats_, learner.ridge()), rtol=1e-9, atol=1e-12)


def test_a_decayed_model_follows_a_label_flip():
    X, y = drifting(6000, flip=3000)
    test = np.random.default_rng(9).uniform(0, 1, (2000, 3))
    after = test[:, 0] <= 0.5  # the labels after the flip
    from sklearn.metrics import roc_auc_score
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        decayed = OnPairStats(half_life=300, bounds=(0, 1), seed=1).learn_many(X, y)
        cumulative = OnPairStats(bounds=(0, 1), seed=1).learn_many(X, y)
    assert roc_auc_score(after, test @ decayed.model) > 0.9
    assert roc_auc_score(after, test @ cumulative.model) < 0.7


@pytest.mark.parametrize("kwargs", [dict(half_life=50), dict(half_life=50, private=False),
                                    dict(half_life=1000, horizon=500), dict(half_life=50, task="metric", classes=[0, 1])])
def test_learn_one_equals_learn_many_and_snapshots_resume(kwargs, tmp_path):
    X, y = drifting(400)
    X[::17] *= 1.5  # clipped: the general path
    labels = y.astype(int) if kwargs.get("task") == "metric" else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        many = OnPairStats(bounds=(0, 1), seed=3, **kwargs).learn_many(X[:150], labels[:150])
        many.learn_many(X[150:], labels[150:])
        ones = OnPairStats(bounds=(0, 1), seed=3, **kwargs)
        for x, label in zip(X, labels):
            ones.learn_one(x, label.item())
        first = OnPairStats(bounds=(0, 1), seed=3, **kwargs).learn_many(X[:211], labels[:211])
    assert_same_state(state_of(many), state_of(ones))
    first.save(tmp_path / "s.onpair")
    resumed = onpair.load(tmp_path / "s.onpair")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resumed.learn_many(X[211:], labels[211:])
    assert_same_state(state_of(many), state_of(resumed))


def test_failed_learn_changes_nothing():
    X, y = drifting(100)
    learner = OnPairStats(half_life=40, bounds=(0, 1), seed=0).learn_many(X[:50], y[:50])
    before = state_of(learner)
    bad = X[50:60].copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError):
        learner.learn_many(bad, y[50:60])
    with pytest.raises(ValueError):
        learner.learn_one(bad[4], True)
    assert_same_state(before, state_of(learner))


def test_river_classifier_with_a_half_life(tmp_path):
    from onpair.river import PrivatePairwiseClassifier
    X, y = drifting(3000, flip=1500)
    records = [({"a": float(r[0]), "b": float(r[1]), "c": float(r[2])}, bool(label)) for r, label in zip(X, y)]
    model = PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=["a", "b", "c"], seed=0, half_life=100)
    assert model._inner.half_life == 100 and model._refresh_cap == 4
    for x, label in records[:1000]:
        model.predict_proba_one(x)
        model.learn_one(x, label)
    model.save(tmp_path / "m.onpair")
    resumed = PrivatePairwiseClassifier.load(tmp_path / "m.onpair")
    assert resumed.half_life == 100 and resumed._refresh_cap == 4
    for x, label in records[1000:]:
        assert model.predict_proba_one(x) == resumed.predict_proba_one(x)
        model.learn_one(x, label)
        resumed.learn_one(x, label)
    # the model follows the flip: late positives (x_a ≤ 0.5) score higher
    p_low = model.predict_proba_one({"a": 0.1, "b": 0.5, "c": 0.5})[True]
    p_high = model.predict_proba_one({"a": 0.9, "b": 0.5, "c": 0.5})[True]
    assert p_low > p_high
    assert model.clone().half_life == 100


def test_refresh_cap_keeps_decayed_predictions_fresh():
    from onpair.river import PrivatePairwiseClassifier
    model = PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=["a"], seed=0, half_life=1000)
    assert model._refresh_cap == 1 << (9 - model.REFRESH_SHIFT)
    assert PrivatePairwiseClassifier(bounds=(0.0, 1.0), features=["a"])._refresh_cap is None


def test_record_level_cost_of_passes_from_the_encoder():
    """Same-order passes (a record at positions p, p + n, p + 2n): the record-level cost comes from C's columns
    (the workload's γ enters only the post-processing), between k·ρ and the group bound k²ρ, and equal to the
    brute-force largest norm of the sum of the record's three columns of the dense C."""
    X = np.random.default_rng(0).uniform(0, 1, (300, 3))
    y = X[:, 0] > 0.5
    learner = OnPairStats(bounds=(0, 1), seed=0, half_life=100).learn_many(np.vstack([X] * 3), np.concatenate([y] * 3))
    report = learner.privacy_report(passes=3)
    rho = report["rho_per_position"]
    level = report["record_level"]
    assert 3 * rho * (1 - 1e-9) <= level["rho"] <= 9 * rho * (1 + 1e-9)
    # brute force: the largest ‖C(e_p + e_{p+n} + e_{p+2n})‖² over the positions of one record, dense C
    mech = learner._stats.mechanism
    p = mech.parameters
    rows = 5000  # the columns never end (an unbounded stream): long enough for their tails (θ_1^4000 < 1e-20)
    c = naive.coefficients(p.decays, p.inverse_decays, rows)
    assert p.decays[0] ** (rows - 900) < 1e-20

    def norm2(q):
        column = np.zeros(rows)
        for start in (q, q + 300, q + 600):
            column[start:] += c[:rows - start]
        return math.fsum(column**2)

    worst = max(norm2(q) for q in range(300))
    sigma = mech.describe()["sigma"]
    assert math.isclose(level["rho"], mech.sensitivity**2 * worst / (2 * sigma**2), rel_tol=1e-7)  # σ: planning margin


def test_fit_label_survives_get_params_and_given_decays_are_named_given():
    mech = make(half_life=1000)
    assert mech.describe()["fit"] == "half-life 2^10"
    assert DecayedBLT(**mech.get_params()).describe()["fit"] == "half-life 2^10"
    given = make(half_life=1000, decays=[0.97, 0.6], inverse_decays=[0.8, 0.3])
    assert given.describe()["fit"] == "given" and given.parameters.buffers == 2
    with pytest.raises(ValueError, match="both"):
        make(decays=[0.5])


def test_the_multiclass_river_classifier_forgets_with_a_half_life():
    """PrivateClassifier takes half_life= as PrivatePairwiseClassifier does (it was a TypeError, reachable only
    through learner_params, which now refuses it as for the pairwise classifier); its refresh step is capped by
    the public H (a model at most H/64 releases old), so a stream long after the half-life still reads a recent
    release."""
    from onpair.river import PrivateClassifier
    from onpair.core.predictor import decayed_refresh_cap, release_window

    model = PrivateClassifier(classes=[0, 1, 2], bounds=(0.0, 1.0), features=["a", "b"], seed=3, half_life=256)
    assert model._inner.half_life == 256 and model.half_life == 256
    assert model.clone()._inner.half_life == 256
    with pytest.raises(ValueError, match="learner_params sets half_life"):
        PrivateClassifier(classes=[0, 1], bounds=(0, 1), learner_params={"half_life": 100})
    rng = np.random.default_rng(5)
    for _ in range(300):
        x = rng.uniform(size=2)
        model.learn_one({"a": x[0], "b": x[1]}, int(3 * x[0]) % 3)
    assert sorted(model.predict_proba_one({"a": 0.9, "b": 0.5})) == [0, 1, 2]
    cap = decayed_refresh_cap(256)
    assert cap == 4
    start, stop = release_window(100_000, True, cap=cap)
    assert stop - start == 4 and release_window(100_000, True)[1] - release_window(100_000, True)[0] == 1024


def test_a_multiclass_river_classifier_with_a_half_life_resumes_from_its_snapshot(tmp_path):
    """save/load keeps PrivateClassifier's half_life (the wrapper's own parameter), and a snapshot written when
    it went through learner_params (its wrapper fields list it there) loads with half_life set."""
    from onpair.persistence import load_learner
    from onpair.river import PrivateClassifier

    rng = np.random.default_rng(8)
    stream = [({"a": x[0], "b": x[1]}, int(3 * x[0]) % 3) for x in rng.uniform(size=(120, 2))]
    model = PrivateClassifier(classes=[0, 1, 2], bounds=(0.0, 1.0), features=["a", "b"], seed=3, half_life=64)
    twin = PrivateClassifier(classes=[0, 1, 2], bounds=(0.0, 1.0), features=["a", "b"], seed=3, half_life=64)
    for x, y in stream[:80]:
        model.learn_one(x, y)
        twin.learn_one(x, y)
    path = tmp_path / "model.onpair"
    model.save(path)
    resumed = PrivateClassifier.load(path)
    assert resumed.half_life == 64 and resumed.learner_params is None
    for x, y in stream[80:]:
        resumed.learn_one(x, y)
        twin.learn_one(x, y)
    assert resumed.predict_proba_one(stream[0][0]) == twin.predict_proba_one(stream[0][0])
    model.save(path)

    def as_before(learner, extra):  # the fields a model built with learner_params={"half_life": 64} wrote
        return PrivateClassifier.from_persisted(learner, dict(extra, learner_params=["half_life"]), path)

    old = load_learner(path, finish=as_before)
    assert old.half_life == 64 and old.learner_params is None and old._inner.half_life == 64
