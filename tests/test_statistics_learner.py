"""The learners on released class statistics: OnPairStats (continual release) and OffPairStats (one release).

Sensitivity of one record's statistics against sampled and optimised worst cases; kernels against their
NumPy twins; the model is the exact minimiser of the pairwise square loss; blocks equal single records
bit for bit; snapshots resume exactly; failed calls change nothing; the reports' ε against the budget.
"""

from __future__ import annotations

import copy
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import optimize, stats

import naive_statistics as naive
import onpair
from learner_state import assert_same_state, state_of
from onpair import OffPairStats, OnPairStats
from onpair.core.bounds import FeatureBounds, _clip_box_row
from onpair.privacy.continual.normals import NormalBlock
from onpair.privacy.exceptions import PrivacyBudgetExceeded
from onpair.statistics.released import ReleasedStatistics
from onpair.statistics._kernels import _auc_square_model, _cholesky_solve, _decode_statistics, block_length, statistics_rows
from onpair.statistics.model import auto_ridge, class_statistics, pairwise_square_model, within_class_metric
from onpair.privacy.statistics_sensitivity import same_label_sensitivity_squared, statistics_sensitivity
from tiers import by_tier

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=60)
WEIGHTS = (0.8, 1.0, 0.6)


ball = naive.ball


# -- sensitivity --------------------------------------------------------------------------------------
@pytest.mark.parametrize("weights", [(0.8, 1.0, 0.6), (1.0, 1.0, 1.0), (0.3, 1.0, 2.0), (1.0, 0.5, 0.0),
                                     (0.0, 1.0, 0.5), (1.0, 0.2, 1.0)])
def test_sensitivity_bounds_sampled_pairs_and_is_attained(weights):
    delta = statistics_sensitivity(*weights)
    d, C = 4, 3
    assert naive.worst_sampled_difference(naive.contribution, weights, d, C, np.random.default_rng(1)) \
        <= delta * (1 + 1e-12)
    # Attained: by unit records with different labels, or (same label) at the supremum's argument.
    assert math.isclose(naive.attained_difference(naive.contribution, weights, d, C), delta, rel_tol=1e-9)


@pytest.mark.parametrize("b, m", [(1.0, 0.6), *[pytest.param(*bm, marks=pytest.mark.slow) for bm in
                                                   ((1.0, 0.8), (1.0, 1.0), (0.5, 1.0), (1.0, 0.0))],
                                  (0.0, 1.0), (0.3, 2.0)])  # the fast tier: three of the seven points
def test_same_label_supremum_against_an_optimiser(b, m):
    """Maximise b²‖x − x'‖² + m²‖xxᵀ − x'x'ᵀ‖²_F over the unit ball from many starts (the adversary):
    it never exceeds the proven supremum and reaches it."""
    rng = np.random.default_rng(2)
    d = 3
    bound = same_label_sensitivity_squared(b, m)

    def negative(p):
        x, y = p[:d], p[d:]
        x = x / max(1.0, np.linalg.norm(x))
        y = y / max(1.0, np.linalg.norm(y))
        return -(b * b * np.sum((x - y) ** 2) + m * m * np.sum((np.outer(x, x) - np.outer(y, y)) ** 2))

    best = 0.0
    for _ in range(60):
        result = optimize.minimize(negative, rng.uniform(-1, 1, size=2 * d), method="Nelder-Mead",
                                   options={"maxiter": 4000, "xatol": 1e-10, "fatol": 1e-12})
        best = max(best, -result.fun)
    assert best <= bound * (1 + 1e-9)
    assert best >= bound * (1 - 1e-6)


def test_sensitivity_refuses_bad_weights():
    with pytest.raises(TypeError, match="count_weight"):
        statistics_sensitivity("1", 1.0, 1.0)
    with pytest.raises(ValueError, match="moment_weight"):
        statistics_sensitivity(1.0, 1.0, -1.0)
    with pytest.raises(ValueError, match="all be zero"):
        statistics_sensitivity(0.0, 0.0, 0.0)


# -- kernels against their twins ----------------------------------------------------------------------
@pytest.mark.parametrize("d, C", [(1, 2), (3, 2), (6, 3)])
def test_box_map_and_row_match_the_numpy_twin(d, C):
    """The compiled box map of the fused record step (clipping a record outside the box) then the one row
    builder: as the twin computes them, and as FeatureBounds.transform computes the map, bit for bit; a record
    holding NaN or ±inf is refused."""
    rng = np.random.default_rng(40 + d)
    lower, upper = rng.uniform(-2.0, 0.0, size=d), rng.uniform(0.5, 3.0, size=d)
    bounds = FeatureBounds(lower=lower, upper=upper)
    box = bounds.box_rows(d)
    for i in range(60):
        x = rng.uniform(lower, upper)
        if i % 2:
            x[i % d] = [upper[i % d] + 1e-9, lower[i % d] - 1.0, 1e300, -1e300][i % 4]
        code = int(rng.integers(0, C))
        z = np.empty(d)
        assert _clip_box_row(x, *box, z) == i % 2
        row = statistics_rows(z[None, :], np.array([code]), C, WEIGHTS)[0]
        clipped = np.minimum(np.maximum(x, lower), upper)
        twin_z = (2.0 * clipped - lower - upper) / ((upper - lower) * np.sqrt(d))  # the documented map, in NumPy
        np.testing.assert_allclose(z, twin_z, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(row, naive.contribution(twin_z, code, C, WEIGHTS), rtol=1e-12, atol=1e-14)
        mapped, was_clipped = bounds.transform(x[None, :])
        assert z.tobytes() == mapped[0].tobytes() == bounds.map_one(x).tobytes() and was_clipped[0] == i % 2
        for bad in (np.nan, np.inf, -np.inf):
            broken = x.copy()
            broken[i % d] = bad
            assert _clip_box_row(broken, *box, z) == -1


@pytest.mark.parametrize("pooled", [False, True])
@pytest.mark.parametrize("options", [{}, {"horizon": 37, "final_share": 0.2}, {"half_life": 16.0},
                                     {"mechanism": "blocks"}, {"mechanism": "blocks", "horizon": 200}],
                         ids=["blt", "final-share", "decayed", "blocks", "blocks-horizon"])
def test_the_fused_record_step_equals_the_block_path_bit_for_bit(pooled, options):
    """ReleasedStatistics.add_record (box map, row and the BLT's compiled step in one call; for the block
    release the row added to the block's sum, the block released when a record ends it) against the block
    path (FeatureBounds.transform, then ReleasedStatistics.add: the row builder and the mechanism's add_block)
    with the same normals: the same status, state, release and normals left, bit for bit, record after record
    (the normal block refilled on the way: k = 4·(1 + d) + d(d+1)/2 or 4·q does not divide its size), across
    the horizon's final release; a record not finite, or outside the box without clip, changes nothing."""
    d, C = 3, 4
    bounds = FeatureBounds(lower=np.zeros(d), upper=np.ones(d))
    box = bounds.box_rows(d)
    build = dict(dim=d, n_classes=C, weights=WEIGHTS, rho=0.5, pooled=pooled, **options)
    fused, plain = ReleasedStatistics.build(**build), ReleasedStatistics.build(**build)
    assert fused.fused
    fused_block = NormalBlock(np.random.default_rng(8), block=1000)
    plain_block = NormalBlock(np.random.default_rng(8), block=1000)
    rng = np.random.default_rng(9)
    for i in range(options.get("horizon", 60 if "mechanism" not in options else 250)):
        x = rng.uniform(-0.2, 1.2, d)
        code = int(rng.integers(0, C))
        if i % 7 == 3:
            broken = x.copy()
            broken[1] = np.nan
            assert fused.add_record(broken, box, code, fused_block, clip=True) == -1
        mapped, clipped = bounds.transform(x[None, :])
        if clipped[0]:
            assert fused.add_record(x, box, code, fused_block, clip=False) == 1  # refused: nothing changed
            assert fused.mechanism.n_seen == plain.mechanism.n_seen
        assert fused.add_record(x, box, code, fused_block, clip=True) == int(clipped[0])
        plain.add(mapped, np.array([code]), plain_block)
        a, b = fused.mechanism.to_state()[1], plain.mechanism.to_state()[1]
        assert all(a[name].tobytes() == b[name].tobytes() for name in b)
        assert fused.estimate().tobytes() == plain.estimate().tobytes()
        assert fused.n_seen == plain.n_seen == i + 1
        assert fused_block.unconsumed().tobytes() == plain_block.unconsumed().tobytes()
    if options.get("mechanism") == "blocks":  # blocks of 32, 64 and 128 (or the horizon's 104) were released
        assert fused.mechanism.completed() == 3
        assert not np.array_equal(fused.estimate(), np.zeros(fused.width))
    elif "horizon" in options:
        assert fused.mechanism.describe()["final_released"]
    if "horizon" in options:
        with pytest.raises(PrivacyBudgetExceeded):
            fused.add_record(x, box, code, fused_block, clip=True)


@pytest.mark.parametrize("d, C", [(1, 2), (3, 2), (5, 4)])
def test_rows_and_decoding_match_the_numpy_twin(d, C):
    rng = np.random.default_rng(d)
    Z = ball(rng, 50, d)
    codes = rng.integers(0, C, size=50)
    rows = statistics_rows(Z, codes, C, WEIGHTS)
    twin = np.array([naive.contribution(z, c, C, WEIGHTS) for z, c in zip(Z, codes)])
    np.testing.assert_allclose(rows, twin, rtol=1e-14, atol=1e-15)
    assert rows.shape == (50, C * block_length(d))
    estimate = rows.sum(axis=0) + rng.standard_normal(rows.shape[1])
    counts, means, covs = np.empty(C), np.empty((C, d)), np.empty((C, d, d))
    _decode_statistics(estimate, C, d, np.array(WEIGHTS), 3.0, counts, means, covs)
    twin_counts, twin_means, twin_covs = naive.decode(estimate, C, d, WEIGHTS, 3.0)
    np.testing.assert_allclose(counts, twin_counts, rtol=1e-12)
    np.testing.assert_allclose(means, twin_means, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(covs, twin_covs, rtol=1e-10, atol=1e-14)


def test_cholesky_solve_matches_numpy_and_refuses_indefinite():
    rng = np.random.default_rng(3)
    B = rng.standard_normal((6, 6))
    A = B @ B.T + 0.1 * np.eye(6)
    rhs = rng.standard_normal(6)
    out = np.empty(6)
    assert _cholesky_solve(A, rhs, out)
    np.testing.assert_allclose(out, np.linalg.solve(A, rhs), rtol=1e-10)
    assert not _cholesky_solve(np.diag([1.0, -1.0, 2.0]), rhs[:3], np.empty(3))


def test_square_model_is_the_exact_minimiser_of_the_pairwise_square_loss():
    """Exact statistics: the model equals the normal equations' solution, and no perturbation of it
    lowers the loss written pair by pair."""
    rng = np.random.default_rng(4)
    d = 3
    Z = ball(rng, 60, d)
    y = rng.random(60) < 0.4
    rows = statistics_rows(Z, y.astype(np.int64), 2, WEIGHTS)
    stats_ = class_statistics(rows.sum(axis=0), 2, d, WEIGHTS, 0.0)
    lam = 0.05
    w = pairwise_square_model(stats_, lam)
    np.testing.assert_allclose(w, naive.square_model(stats_.means, stats_.covariances, lam), rtol=1e-9)
    loss = naive.pairwise_square_loss(w, Z[y], Z[~y], lam)
    for _ in range(20):
        assert naive.pairwise_square_loss(w + 1e-3 * rng.standard_normal(d), Z[y], Z[~y], lam) > loss
    # the fused kernel of the online learner gives the same model
    out = np.empty(d)
    used = _auc_square_model(rows.sum(axis=0), d, np.array(WEIGHTS), 1.0, 0.0, lam, -1.0, 4.0, out)
    assert used == lam
    np.testing.assert_allclose(out, w, rtol=1e-10)


def test_within_class_metric_is_the_inverse_regularised_pooled_covariance():
    rng = np.random.default_rng(5)
    Z = ball(rng, 90, 3)
    codes = rng.integers(0, 3, size=90)
    stats_ = class_statistics(statistics_rows(Z, codes, 3, WEIGHTS).sum(axis=0), 3, 3, WEIGHTS, 0.0)
    pooled = sum(np.cov(Z[codes == c].T, bias=True) * np.mean(codes == c) for c in range(3))
    np.testing.assert_allclose(within_class_metric(stats_, 0.1), np.linalg.inv(pooled + 0.1 * np.eye(3)),
                               rtol=1e-8)


# -- OnPairStats ---------------------------------------------------------------------------------------
def stream(n, d=4, seed=0, outside=True):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(n, d))
    if outside:
        X[::13] *= 1.7  # clipped to the box: the general path
    y = X[:, 0] + 0.2 * rng.standard_normal(n) > 0.6
    return X, y


MECHANISMS = [dict(), dict(mechanism="epochs"), dict(mechanism="tree"), dict(mechanism="tree", horizon=400),
              dict(mechanism="toeplitz", band=8), dict(mechanism="toeplitz"), dict(private=False),
              dict(horizon=250, final_share=0.3)]


@pytest.mark.parametrize("kwargs", MECHANISMS)
def test_learn_one_equals_learn_many_bit_for_bit(kwargs):
    X, y = stream(300)
    many = OnPairStats(bounds=(0.0, 1.0), seed=3, **kwargs)
    ones = OnPairStats(bounds=(0.0, 1.0), seed=3, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the clipping warning, once per learner
        many.learn_many(X[:100], y[:100]).learn_many(X[100:], y[100:])
        for x, label in zip(X, y):
            ones.learn_one(x, bool(label))
    assert_same_state(state_of(many), state_of(ones))
    assert np.array_equal(many.model, ones.model)


def test_the_non_private_twin_computes_the_exact_statistics():
    X, y = stream(200, outside=False)
    learner = OnPairStats(private=False, bounds=(0.0, 1.0)).learn_many(X, y)
    Z, _ = onpair.FeatureBounds(0.0, 1.0).transform(X)
    exact = sum(naive.contribution(z, int(label), 2, WEIGHTS) for z, label in zip(Z, y))
    counts, means, covs = naive.decode(exact, 2, 4, WEIGHTS, 1.0)
    np.testing.assert_allclose(learner.class_statistics().means, means, rtol=1e-10)
    # the automatic ridge: 10⁻³ relative to the data's own within-class variance (the twin's scale)
    np.testing.assert_allclose(learner.model, naive.square_model(means, covs, 1e-3 * naive.twin_scale(counts, covs)),
                               rtol=1e-8)
    assert learner.privacy_report()["private"] is False


@pytest.mark.parametrize("mechanism, n", [("blt", 40), ("auto", 96)])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_released_noise_has_the_reported_variance(eps, mechanism, n):
    """Zero-signal records from one class: the released count minus the true count, over 300 seeds, has
    the variance the report states (χ² test, α = 0.001; 100 seeds in the fast tier). The default's blocks:
    96 records complete the blocks of 32 and 64, whose size-weighted estimate describes all 96."""
    d = 2
    draws = []
    for seed in range(by_tier(fast=100, full=300)):
        learner = OnPairStats(norm_bound=1.0, epsilon=eps, n_features=d, seed=seed, mechanism=mechanism)
        learner.learn_many(np.zeros((n, d)), np.zeros(n, dtype=bool))
        draws.append(learner._stats.estimate()[0] - WEIGHTS[0] * n)  # negative class count, times a
        sd = learner.privacy_report()["noise_sd"]
    statistic = np.sum(np.square(draws)) / sd ** 2
    p = 2 * min(stats.chi2.cdf(statistic, len(draws)), stats.chi2.sf(statistic, len(draws)))
    assert p > 0.001


@pytest.mark.parametrize("mechanism, released", [("blt", 500), ("auto", 4)])  # auto: blocks ending 32, 96, 224, 480
def test_privacy_report_matches_the_budget_and_an_independent_conversion(mechanism, released):
    from dp_accounting import dp_event, rdp

    learner = OnPairStats(epsilon=1.0, delta=1e-5, bounds=(0.0, 1.0), seed=0, mechanism=mechanism)
    assert learner.privacy_report()["rho_spent"] == 0.0
    learner.learn_many(*stream(500, outside=False))
    report = learner.privacy_report()
    assert report["rho_spent"] <= report["rho_budget"] and report["epsilon_spent"] <= 1.0
    assert report["releases"][0]["nodes_released"] == released and report["mode"] == "continual"
    # The release is one Gaussian mechanism with noise multiplier σ/(Δκ): dp-accounting's RDP accountant
    # gives an ε no smaller than the report's tight GDP conversion, and close to it.
    schedule = report["schedule"]
    multiplier = schedule["sigma"] / (schedule["sensitivity"] * math.sqrt(schedule["kappa2"]))
    accountant = rdp.RdpAccountant()
    accountant.compose(dp_event.GaussianDpEvent(multiplier))
    assert report["epsilon_spent"] <= accountant.get_epsilon(1e-5) <= 1.0 * 1.15


@pytest.mark.parametrize("call, error, words", [
    (lambda L: L.learn_one([0.1, np.nan, 0.2, 0.3], True), ValueError, "finite"),
    (lambda L: L.learn_one([0.1, 0.2, 0.2, 0.3], 2), ValueError, "y[0] = 2"),
    (lambda L: L.learn_many(np.zeros((3, 4)), [1, 0, 7]), ValueError, "y[2] = 7"),
    (lambda L: L.learn_many(np.zeros((3, 5)), [1, 0, 1]), ValueError, "5 features"),
    (lambda L: L.learn_one(np.array(["a", "b", "c", "d"]), True), TypeError, "x"),
])
def test_a_failed_call_changes_nothing(call, error, words):
    learner = OnPairStats(bounds=(0.0, 1.0), seed=1).learn_many(*stream(50, outside=False))
    before = state_of(learner)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")):
            call(learner)
    assert_same_state(before, state_of(learner))


def test_metric_task_needs_public_classes_and_refuses_others():
    with pytest.raises(ValueError, match="classes="):
        OnPairStats(norm_bound=1.0, task="metric")
    learner = OnPairStats(task="metric", classes=["a", "b", "c"], bounds=(0.0, 1.0), seed=0)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 3))
    labels = [["a", "b", "c"][k] for k in (X[:, 0] * 3).astype(int).clip(0, 2)]
    learner.learn_many(X, labels)
    before = state_of(learner)
    with pytest.raises(ValueError, match="not one of the public classes"):
        learner.learn_one(X[0], "d")
    assert_same_state(before, state_of(learner))
    W = learner.model
    assert W.shape == (3, 3) and np.allclose(W, W.T) and np.all(np.linalg.eigvalsh(W) > 0)
    assert learner.transform(X[:2]).shape[0] == 2


def test_horizon_freezes_the_model_with_one_warning():
    learner = OnPairStats(bounds=(0.0, 1.0), mechanism="tree", horizon=100, delta=1e-4, seed=0)
    X, y = stream(150, outside=False)
    learner.learn_many(X[:100], y[:100])
    model = learner.model
    with pytest.warns(onpair.PrivacyWarning, match="horizon of 100 records"):
        learner.learn_many(X[100:], y[100:])
    assert np.array_equal(learner.model, model) and learner.n_seen == 150
    assert learner.privacy_report()["frozen"]


@pytest.mark.parametrize("kwargs", MECHANISMS + [dict(task="metric", classes=[0, 1])])
def test_snapshot_resumes_exactly(kwargs, tmp_path):
    X, y = stream(260)
    labels = y.astype(int) if kwargs.get("task") == "metric" else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = OnPairStats(bounds=(0.0, 1.0), seed=5, **kwargs).learn_many(X, labels)
        first = OnPairStats(bounds=(0.0, 1.0), seed=5, **kwargs).learn_many(X[:111], labels[:111])
    first.save(tmp_path / "s.onpair")
    resumed = onpair.load(tmp_path / "s.onpair")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resumed.learn_many(X[111:], labels[111:])
    assert_same_state(state_of(whole), state_of(resumed))


@pytest.mark.parametrize("mechanism, edited", [("blt", "statistics.buffers"), ("auto", "statistics.current")])
def test_snapshot_with_edited_statistics_is_refused(tmp_path, mechanism, edited):
    from onpair.core.persistence import _parse

    learner = OnPairStats(bounds=(0.0, 1.0), seed=0, mechanism=mechanism).learn_many(*stream(30, outside=False))
    learner.save(tmp_path / "s.onpair")
    data = (tmp_path / "s.onpair").read_bytes()
    document, arrays = _parse(data, "s")
    assert any(key.startswith("statistics.") for key in arrays)
    fresh = OnPairStats(bounds=(0.0, 1.0), seed=0, mechanism=mechanism)
    from onpair.core.snapshot import SnapshotReader

    arrays[edited] = arrays[edited][:-1]
    with pytest.raises(ValueError, match="invalid released statistics"):
        fresh._restore_state(document["state"], SnapshotReader("s", arrays))


def test_a_private_learner_refuses_copies_and_the_twin_copies():
    learner = OnPairStats(norm_bound=1.0, n_features=2, seed=0).learn_one([0.1, 0.2], True)
    for attempt in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be pickled or copied"):
            attempt(learner)
    twin = OnPairStats(norm_bound=1.0, private=False, n_features=2).learn_one([0.1, 0.2], True)
    assert copy.deepcopy(twin).n_seen == 1


@pytest.mark.parametrize("kwargs", [dict(), dict(mechanism="toeplitz", band=4)], ids=["blt", "toeplitz-band4"])
@SETTINGS
@given(cuts=st.lists(st.integers(0, 120), max_size=4), seed=st.integers(0, 1000))
def test_any_block_split_gives_the_same_learner(kwargs, cuts, seed):
    X, y = stream(120, seed=seed % 7)
    reference = OnPairStats(bounds=(0.0, 1.0), seed=seed, **kwargs)
    learner = OnPairStats(bounds=(0.0, 1.0), seed=seed, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference.learn_many(X, y)
        bounds = [0] + sorted(cuts) + [120]
        for a, b in zip(bounds[:-1], bounds[1:]):
            learner.learn_many(X[a:b], y[a:b])
    assert_same_state(state_of(reference), state_of(learner))


def test_the_ridge_is_public_and_shrinks_with_the_stream():
    learner = OnPairStats(bounds=(0.0, 1.0), seed=0)
    X, y = stream(4000, outside=False)
    learner.learn_many(X[:200], y[:200])
    early = learner.ridge()
    learner.learn_many(X[200:], y[200:])
    assert learner.ridge() < early
    assert learner.ridge() == auto_ridge(learner.class_statistics())


# -- OffPairStats ----------------------------------------------------------------------------------------
def test_offline_release_noise_has_the_analytic_gaussian_sigma():
    """The released count of an empty class over 400 seeds: mean 0 and the report's σ (KS test, α = 0.001)."""
    X = np.zeros((10, 2))
    y = np.array([0, 1] * 5)
    est = OffPairStats(norm_bound=1.0, epsilon=1.0, delta=1e-5, classes=[0, 1])
    sigma = onpair.privacy.gaussian_sigma(statistics_sensitivity(*WEIGHTS), 1.0, 1e-5)
    assert math.isclose(est.fit(X, y).privacy_report_["releases"][0]["sigma"], sigma)
    assert est.privacy_report_["epsilon_spent"] <= 1.0 + 1e-9


def test_offline_model_equals_the_online_model_without_noise():
    X, y = stream(300, outside=False)
    offline = OffPairStats(private=False, bounds=(0.0, 1.0)).fit(X, y.astype(int))
    online = OnPairStats(private=False, bounds=(0.0, 1.0)).learn_many(X, y)
    np.testing.assert_allclose(offline.coef_, online.model, rtol=1e-10)


def test_offline_beats_chance_and_reports_its_model():
    X, y = stream(800, outside=False)
    est = OffPairStats(epsilon=2.0, bounds=(0.0, 1.0), random_state=0).fit(X, y.astype(int))
    assert est.score(X, y.astype(int)) > 0.8
    assert est.privacy_report_["model_type"] == "square" and est.privacy_report_["ridge"] > 0


def test_offline_metric_task_needs_public_classes_and_a_large_delta_warns():
    """Review finding: the class domain read off y lets one record change the release's shape."""
    X, y = stream(60, outside=False)
    with pytest.raises(ValueError, match="public class domain"):
        OffPairStats(task="metric", bounds=(0.0, 1.0)).fit(X, y.astype(int))
    est = OffPairStats(task="metric", classes=[0, 1, 2], bounds=(0.0, 1.0), random_state=0).fit(X, y.astype(int))
    assert est.coef_.shape == (4, 4) and est.privacy_report_["n_classes"] == 3
    with pytest.warns(onpair.PrivacyWarning, match="1/n"):
        OffPairStats(delta=0.5, bounds=(0.0, 1.0), random_state=0).fit(X, y.astype(int))


# -- the per-record path: normals drawn ahead, one compiled call per record ------------------------------
@pytest.mark.parametrize("mechanism", ["blt", "auto"])
def test_the_fused_record_path_is_the_mechanism_fed_its_rows_with_the_generators_normals(mechanism):
    """OnPairStats.learn_one (box map, row, BLT step in one compiled call, normals from a block drawn ahead;
    the default's: box map, row, added to the block's sum, the block released when a record ends it) against
    its definition: the rows of statistics_rows fed one by one to a BufferedToeplitz (a BlockRelease of blocks
    32, 64, …) with a plain Generator spawned as the learner spawns its noise stream."""
    from onpair.privacy.continual import BlockRelease, BufferedToeplitz
    from onpair.statistics._kernels import statistics_rows

    X, y = stream(700, seed=4)
    learner = OnPairStats(bounds=(0.0, 1.0), seed=9, mechanism=mechanism)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, label in zip(X, y):
            learner.learn_one(x, label)
    Z, _ = learner.feature_bounds.transform(X)
    rows = statistics_rows(Z, y.astype(np.int64), 2, (0.8, 1.0, 0.6))
    _, noise_seq, _ = np.random.SeedSequence(9).spawn(3)
    mech = (BufferedToeplitz if mechanism == "blt" else BlockRelease)(
        dim=rows.shape[1], sensitivity=statistics_sensitivity(0.8, 1.0, 0.6), rho=learner._rho_budget)
    generator = np.random.Generator(np.random.PCG64(noise_seq))
    for row in rows:
        mech.add_one(np.ascontiguousarray(row), generator)
    assert np.array_equal(mech.estimate(), learner._stats.estimate())
    if mechanism == "auto":
        assert mech.completed() == 4 and np.any(mech.estimate() != 0.0)  # blocks ending 32, 96, 224, 480
    # the learner's generator is ahead by the rest of a whole block, which it keeps
    ahead = learner._normal_block.unconsumed()
    assert np.array_equal(ahead, generator.standard_normal(ahead.size))


def test_normals_drawn_ahead_are_saved_and_resume_exactly(tmp_path):
    X, y = stream(300, seed=2)
    whole = OnPairStats(bounds=(0.0, 1.0), seed=5)
    first = OnPairStats(bounds=(0.0, 1.0), seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, label in zip(X, y):
            whole.learn_one(x, label)
        for x, label in zip(X[:123], y[:123]):
            first.learn_one(x, label)
    first.save(tmp_path / "s.onpair")
    resumed = onpair.load(tmp_path / "s.onpair")
    assert resumed._normal_block.unconsumed().size == first._normal_block.unconsumed().size > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, label in zip(X[123:], y[123:]):
            resumed.learn_one(x, label)
    assert_same_state(state_of(whole), state_of(resumed))


def test_a_learner_without_a_seed_drops_its_normals_after_a_save(tmp_path):
    """Its generator is replaced after a save (the snapshot and the learner must never add the same noise):
    the normals drawn ahead went into the snapshot, and the learner draws new ones."""
    X, y = stream(50, seed=1, outside=False)
    learner = OnPairStats(bounds=(0.0, 1.0)).learn_many(X, y)
    saved = learner._normal_block.unconsumed()
    learner.save(tmp_path / "s.onpair")
    learner.learn_many(X[:3], y[:3])
    assert learner._normal_block.rng is learner._noise_rng
    k = learner._stats.width
    assert saved.size > 3 * k + 10
    assert not np.array_equal(learner._normal_block.unconsumed()[:10], saved[3 * k:3 * k + 10])
    resumed = onpair.load(tmp_path / "s.onpair")
    assert np.array_equal(resumed._normal_block.unconsumed(), saved)


@pytest.mark.parametrize("edit, match", [
    (lambda a: a.__setitem__("noise.normals", np.full(5, 41.0)), "not a standard normal"),
    (lambda a: a.__setitem__("noise.normals", np.zeros(5, dtype=np.float32)), "float64"),
    (lambda a: a.__setitem__("noise.normals", np.zeros((2, 2))), "float64"),
    (lambda a: a.__setitem__("noise.normals", np.array([0.0, np.nan])), "non-finite"),
    (lambda a: a.__setitem__("noise.normals", np.zeros(10 ** 6)), "float64"),
])
def test_a_snapshot_with_implausible_normals_is_refused(edit, match, tmp_path):
    from onpair.core.snapshot import SnapshotReader
    from onpair.core.persistence import _parse

    # 40 records: the default's first block (32 records) released, its normals drawn from a block drawn ahead
    learner = OnPairStats(bounds=(0.0, 1.0), seed=0).learn_many(*stream(40, outside=False))
    learner.save(tmp_path / "s.onpair")
    document, arrays = _parse((tmp_path / "s.onpair").read_bytes(), "s")
    assert "noise.normals" in arrays
    edit(arrays)
    with pytest.raises(ValueError, match=match):
        OnPairStats(bounds=(0.0, 1.0), seed=0)._restore_state(document["state"], SnapshotReader("s", arrays))
    twin = OnPairStats(bounds=(0.0, 1.0), private=False)
    arrays = {"noise.normals": np.zeros(3)}
    with pytest.raises(ValueError, match="non-private twin"):
        twin._read_normals(SnapshotReader("s", arrays))


@pytest.mark.parametrize("mechanism", ["blt", "auto"])
def test_n_releases_counts_the_records_learned_up_to_the_horizon(mechanism):
    """A release per record learned (blt), or per block (the default's: blocks of 32 records, then the rest
    up to the horizon, 38); the refresh count is the records the release describes."""
    X, y = stream(90, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learner = OnPairStats(bounds=(0.0, 1.0), seed=0, horizon=70, mechanism=mechanism)
        learner.learn_many(X[:40], y[:40])
        for x, label in zip(X[40:], y[40:]):
            learner.learn_one(x, label)
            learned = min(learner.n_seen, 70)
            assert learner._stats.n_seen == learned
            if mechanism == "blt":
                assert learner.n_releases == learner.refresh_count == learned
            else:
                assert learner.n_releases == (learned >= 32) + (learned >= 70)
                assert learner.refresh_count == (70 if learned == 70 else 32)


def test_final_share_at_the_horizon():
    """final_share: the BLT's one release of the total at the horizon, combined with the stream's (its cost in
    the one event of the report: the budget, no more); the model after record T has less noise than without
    it, the models before it more; refused without the BLT and a horizon, or outside [0, 1)."""
    X, y = stream(200, outside=False)
    plain = OnPairStats(bounds=(0.0, 1.0), horizon=200, seed=2, mechanism="blt").learn_many(X, y)
    shared = OnPairStats(bounds=(0.0, 1.0), horizon=200, final_share=0.5, seed=2).learn_many(X[:199], y[:199])
    before = shared._stats.noise_variance()
    assert before > plain._stats.mechanism.variance(199)
    shared.learn_one(X[199], bool(y[199]))
    assert shared._stats.noise_variance() < plain._stats.noise_variance()
    report = shared.privacy_report()
    (row,) = report["releases"]
    assert report["rho_budget"] * (1 - 1e-8) <= report["rho_spent"] <= report["rho_budget"]
    assert math.isclose(row["rho"], 0.5 * (row["sensitivity"] / row["sigma"]) ** 2 * row["kappa2"], rel_tol=1e-12)
    assert report["schedule"]["final_released"] and row["nodes_released"] == 201
    for kwargs, error in [(dict(final_share=0.2), ValueError), (dict(final_share=0.2, horizon=10, mechanism="tree"),
                                                               ValueError),
                          (dict(final_share=1.0, horizon=10), ValueError), (dict(final_share=True, horizon=10),
                                                                            TypeError),
                          (dict(final_share="0.1", horizon=10), TypeError)]:
        with pytest.raises(error, match="final_share"):
            OnPairStats(**kwargs)


def test_a_block_release_is_read_again_at_every_block_end_the_horizons_short_block_included():
    """Review finding (issue 34): the refresh rule's windows grow with the count (here 16 wide at 480), and the
    block release's count jumps by a block at a time, so the last, short block before a horizon (480 → 490) fell
    inside the window of the block before it and was never read. A block release is read at every block end."""
    X, y = stream(490, seed=6, outside=False)
    learner = OnPairStats(bounds=(0.0, 1.0), seed=1, horizon=490)
    assert learner.release_mechanism == "blocks"
    ends = []
    for x, label in zip(X, y):
        learner.learn_one(x, label)
        view = learner.predictor(shift=4)
        if not ends or view.index != ends[-1]:
            ends.append(view.index)
        assert view.index == learner.refresh_count  # the view is always the current release
    assert ends == [0, 32, 96, 224, 480, 490]
    assert learner.n_releases == 5
