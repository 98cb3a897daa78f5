"""BlockRelease: disjoint blocks released once at the full ρ, combined over the completed blocks
(onpair.privacy.continual.blocks), and OnPairStats(mechanism="blocks")."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from naive_blocks import block_estimates, block_sizes, decayed_block_estimates
import onpair
from onpair import OnPairStats
from onpair.privacy.continual import BlockRelease, PrefixSumMechanism
from onpair.privacy.exceptions import PrivacyBudgetExceeded
from onpair.privacy.replay import record_rho, replay_rho

ALPHA = 0.001


def make(dim=3, **kwargs):
    return BlockRelease(dim=dim, sensitivity=1.5, rho=0.7, **{"first_block": 4, **kwargs})


def data(n, k, seed=0):
    return np.random.default_rng(seed).standard_normal((n, k))


def test_registered_by_its_option_and_kind():
    assert PrefixSumMechanism.for_option("blocks") is BlockRelease
    assert PrefixSumMechanism._registry["blocks"] is BlockRelease


@pytest.mark.parametrize("first,ratio,horizon", [(4, 2.0, None), (3, 1.5, None), (5, 3.0, 40), (1, 1.05, None)])
def test_schedule_is_the_twins(first, ratio, horizon):
    mech = BlockRelease(dim=1, sensitivity=1.0, rho=1.0, first_block=first, ratio=ratio, horizon=horizon)
    total = horizon or 500
    ends = [int(e) for e in np.cumsum(block_sizes(first, ratio, total))]
    if horizon is None:
        ends = ends[:-1]  # the twin cuts its last block at 500; the unbounded schedule does not
    else:
        assert mech.block_ends() == ends
    assert mech.block_ends(len(ends)) == ends
    assert all(b - a >= 1 for a, b in zip([0] + ends, ends))


@pytest.mark.parametrize("weighting", ["size", "equal"])
@pytest.mark.parametrize("horizon", [None, 50])
def test_releases_and_variances_are_the_numpy_twins(weighting, horizon):
    """The mechanism fed chosen normals (one row per completed block) against the literal twin, every t."""
    T, k = 50, 4
    V = data(T, k, 1)
    mech = make(dim=k, ratio=2.0, weighting=weighting, horizon=horizon)
    blocks = mech.completed(T)
    Z = data(blocks, k, 2)
    out = np.empty((T, k))
    mech._apply(np.ascontiguousarray(V), Z.copy(), out)
    sigma = mech.describe()["sigma"]
    expected, variances = block_estimates(V, sigma, Z, 4, 2.0, weighting, horizon)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T + 1)], variances, rtol=1e-12)
    assert mech.n_released == (28 if horizon is None else 50) and mech.completed() == (3 if horizon is None else 4)


def test_size_weights_beat_equal_weights_and_stay_bounded():
    """Σ n_j r_j·N/Σn_j² has variance σ²N²/Σn_j² ≤ σ²·B (Cauchy–Schwarz); doubling blocks: ≈ 3σ² at any length."""
    size = BlockRelease(dim=1, sensitivity=1.0, rho=1.0, first_block=32)
    equal = BlockRelease(dim=1, sensitivity=1.0, rho=1.0, first_block=32, weighting="equal")
    sigma2 = size.describe()["sigma"] ** 2
    for t in (32, 96, 10_000, 10**6, 10**12):
        assert size.variance(t) <= equal.variance(t) * (1 + 1e-12)
        assert 1.0 <= size.variance(t) / sigma2 <= 3.0 + 1e-9
    assert size.variance(10**12) / sigma2 > 2.99


def test_a_block_equals_its_records_one_at_a_time_bit_for_bit():
    V = data(45, 3, 4)
    one = make()
    rng = np.random.default_rng(7)
    for row in V:
        one.add_one(row, rng)
    parts = make()
    rng2 = np.random.default_rng(7)
    for lo, hi in ((0, 3), (3, 4), (4, 30), (30, 45)):
        parts.add_block(V[lo:hi], rng2)
    whole = make()
    est = whole.add_block(V, np.random.default_rng(7), return_estimates=True)
    for other in (one, parts):
        assert np.array_equal(other.estimate(), whole.estimate())
        assert np.array_equal(other.to_state()[1]["current"], whole.to_state()[1]["current"])
    assert np.array_equal(est[-1], whole.estimate())
    assert rng.bit_generator.state == rng2.bit_generator.state


def test_noise_variance_chi_square():
    """4,000 coordinates of zero data, blocks of 4, 8, 16, 32: Σ x²/variance(t) ~ χ²(4000), two-sided at
    α = 0.001 with Bonferroni, at block ends and inside blocks."""
    T, k = 60, 4000
    mech = BlockRelease(dim=k, sensitivity=1.0, rho=1.0, first_block=4)
    out = mech.add_block(np.zeros((T, k)), np.random.default_rng(3), return_estimates=True)
    checked = [4, 5, 12, 13, 27, 28, 60]
    for t in checked:
        stat = float((out[t - 1] ** 2).sum() / mech.variance(t))
        p = 2 * min(stats.chi2.cdf(stat, k), stats.chi2.sf(stat, k))
        assert p > ALPHA / len(checked), (t, stat, p)
    assert not out[:3].any() and mech.variance(3) == 0.0


def test_a_wrong_variance_would_be_caught():
    """The χ² check has power: the variance of "equal" (3σ² at t = 28) against releases of "size" (σ²·28²/336)."""
    k = 4000
    mech = BlockRelease(dim=k, sensitivity=1.0, rho=1.0, first_block=4)
    out = mech.add_block(np.zeros((28, k)), np.random.default_rng(3), return_estimates=True)
    wrong = BlockRelease(dim=1, sensitivity=1.0, rho=1.0, first_block=4, weighting="equal").variance(28)
    stat = float((out[-1] ** 2).sum() / wrong)
    assert 2 * min(stats.chi2.cdf(stat, k), stats.chi2.sf(stat, k)) < ALPHA


def test_the_stream_costs_one_gaussian_release_checked_by_dp_accounting():
    """Each block's release is a Gaussian mechanism of sensitivity Δ and noise σ; a record lies in one block, so
    the stream costs Δ²/(2σ²) ≤ ρ whatever its length (parallel composition), checked with dp-accounting's
    Gaussian event; the report row says the same, once."""
    import dp_accounting
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    orders = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    mech = make(dim=1)
    mech.add_block(np.zeros((500, 1)), np.random.default_rng(0))
    row, = mech.privacy_rows()
    accountant = RdpAccountant(orders, dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
    accountant.compose(dp_event.GaussianDpEvent(row["sigma"] / mech.sensitivity))  # noise multiplier σ/Δ
    np.testing.assert_allclose(accountant._rdp, orders * row["rho"], rtol=1e-9)
    assert row["rho"] <= mech.rho and math.isclose(row["rho"], mech.rho, rel_tol=1e-8)
    assert row["nodes_released"] == mech.completed() == 6 and row["kappa2"] == 1.0
    assert mech.describe()["rho_spent_bound"] == row["rho"]
    # a record at two positions of one block costs 4ρ (group of 2), in two blocks 2ρ
    assert math.isclose(record_rho(mech, [1, 2]), 4 * row["rho"]) and math.isclose(record_rho(mech, [1, 5]),
                                                                                    2 * row["rho"])
    assert math.isclose(replay_rho(mech, 10, 3), 5 * row["rho"])  # record 3 at 3 (block 0), 13 and 23 (block 2)


def test_snapshot_round_trip_and_inconsistent_states_refused():
    for n in (0, 3, 4, 13, 28):
        mech = make()
        mech.add_block(data(n, 3), np.random.default_rng(0))
        scalars, arrays = mech.to_state()
        back = BlockRelease.from_state(mech.get_params(), scalars, arrays)
        assert np.array_equal(back.estimate(), mech.estimate()) and back.n_seen == n
        back.add_block(data(5, 3, 9), np.random.default_rng(1))
        mech.add_block(data(5, 3, 9), np.random.default_rng(1))
        assert np.array_equal(back.estimate(), mech.estimate())
    mech = make()
    mech.add_block(data(3, 3), np.random.default_rng(0))
    scalars, arrays = mech.to_state()
    with pytest.raises(ValueError, match="completes no block"):
        BlockRelease.from_state(mech.get_params(), scalars, dict(arrays, weighted=np.ones(3)))
    mech.add_block(data(1, 3), np.random.default_rng(0))
    scalars, arrays = mech.to_state()
    with pytest.raises(ValueError, match="ends a block"):
        BlockRelease.from_state(mech.get_params(), scalars, dict(arrays, current=np.ones(3)))
    with pytest.raises(ValueError, match="parameters"):
        BlockRelease.from_state(dict(mech.get_params(), ratio=3.0), scalars, arrays)


def test_failed_calls_change_nothing():
    mech = make()
    rng = np.random.default_rng(0)
    mech.add_block(data(3, 3), rng)
    before = (mech.to_state(), mech.estimate(), rng.bit_generator.state)
    bad = data(4, 3)
    bad[3, 1] = np.nan  # the row that would complete the first block
    with pytest.raises(ValueError, match="NaN"):
        mech.add_block(bad, rng)
    with pytest.raises(TypeError, match="rng"):
        mech.add_one(np.zeros(3), None)
    capped = make(horizon=4)
    with pytest.raises(PrivacyBudgetExceeded):
        capped.add_block(data(5, 3), rng)
    after = (mech.to_state(), mech.estimate(), rng.bit_generator.state)
    assert before[0][0] == after[0][0] and all(np.array_equal(before[0][1][k], after[0][1][k]) for k in before[0][1])
    assert np.array_equal(before[1], after[1]) and before[2] == after[2]


def test_constructor_checks():
    with pytest.raises(ValueError, match="ratio"):
        make(ratio=1.0)
    with pytest.raises(TypeError, match="ratio"):
        make(ratio="2")
    with pytest.raises(ValueError, match="weighting"):
        make(weighting="inverse")
    with pytest.raises(TypeError, match="first_block"):
        make(first_block=4.0)


# -- the statistics family ---------------------------------------------------------------------------
def _stream(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 3))
    return X, X[:, 0] + 0.1 * rng.standard_normal(n) > 0.5


def test_onpairstats_before_the_first_block_is_the_data_independent_start():
    X, y = _stream(40)
    fresh = OnPairStats(epsilon=1.0, bounds=(0, 1), n_features=3, mechanism="blocks", seed=0)
    learner = OnPairStats(epsilon=1.0, bounds=(0, 1), mechanism="blocks", seed=0).learn_many(X[:31], y[:31])
    never = OnPairStats(epsilon=1.0, bounds=(0, 1), n_features=3, seed=0)
    never.learn_many(X[:0], y[:0])
    assert np.array_equal(learner.predict_proba(X), fresh.predict_proba(X))
    assert np.array_equal(learner.model, np.zeros(3))
    learner.learn_many(X[31:32], y[31:32])  # record 32 completes the first block (32 records)
    assert not np.array_equal(learner.model, np.zeros(3))


@pytest.mark.parametrize("task", ["auc", "classify", "metric"])
def test_onpairstats_learn_one_is_learn_many_and_counts_the_completed_records(task):
    X, y = _stream(300, 1)
    classes = None if task == "auc" else [False, True]
    a = OnPairStats(epsilon=2.0, bounds=(0, 1), task=task, classes=classes, mechanism="blocks", seed=3)
    b = OnPairStats(epsilon=2.0, bounds=(0, 1), task=task, classes=classes, mechanism="blocks", seed=3)
    for x, label in zip(X, y):
        a.learn_one(x, bool(label))
    b.learn_many(X, y)
    assert np.array_equal(a._stats.estimate(), b._stats.estimate())
    assert np.array_equal(a.model, b.model)
    mech = a._stats.mechanism
    assert mech.n_released == 224  # blocks of 32, 64, 128: the estimate describes these records
    counts = a.class_statistics().counts.sum()
    sd = math.sqrt(mech.variance()) / 0.8 * math.sqrt(2)  # the count weight a = 0.8, two classes
    assert abs(counts - 224) < 5 * sd  # the released counts read as the completed records, not n_seen = 300
    report = a.privacy_report()
    assert report["releases"][0]["mechanism"] == "blocks" and report["rho_spent"] <= report["rho_budget"]


def test_onpairstats_snapshot_resumes_the_blocks(tmp_path):
    X, y = _stream(100, 2)
    a = OnPairStats(epsilon=1.0, bounds=(0, 1), mechanism="blocks", seed=5).learn_many(X[:50], y[:50])
    a.save(tmp_path / "s.onpair")
    b = onpair.load(tmp_path / "s.onpair")
    a.learn_many(X[50:], y[50:])
    b.learn_many(X[50:], y[50:])
    assert np.array_equal(a.model, b.model)


def test_onpairstats_refuses_a_band_with_blocks_and_a_half_life_with_the_trees():
    with pytest.raises(ValueError, match="half_life.*'tree'"):
        OnPairStats(bounds=(0, 1), mechanism="tree", half_life=100.0)
    with pytest.raises(ValueError, match="band"):
        OnPairStats(bounds=(0, 1), mechanism="blocks", band=8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OnPairStats(bounds=(0, 1), mechanism="blocks", horizon=100)


# -- fresh share: the current block released continually (a BLT restarted each block) --------------------------
def fresh_twin(V, Z, first, ratio, phi, weighting, sensitivity=1.5, rho=0.7):
    """The literal twin of ``fresh_share=phi``: per block, a BufferedToeplitz over its n_j records at ρ with
    final_share 1 − φ, fed its normals (one row per record, then the block's final row), and the pooling of
    the block means by inverse variances (or the plain sum for "equal"), recomputed from scratch at every t."""
    from onpair.privacy.continual import BufferedToeplitz

    T, k = V.shape
    sizes = block_sizes(first, ratio, 100 * T)  # the unbounded schedule: the last block is not cut at T
    ends = np.cumsum(sizes)
    releases, variances, out, out_var, row, start = [], [], np.empty((T, k)), np.empty(T), 0, 0
    for size, end in zip(sizes, ends):
        if start >= T:
            break
        full = end <= T
        end = min(int(end), T)
        inner = BufferedToeplitz(dim=k, sensitivity=sensitivity, rho=rho, horizon=int(size), final_share=1 - phi)
        prefix = np.empty((end - start, k))
        inner._apply(np.ascontiguousarray(V[start:end]), Z[row:row + end - start].copy(), prefix)
        row += end - start
        for m in range(1, end - start + 1):
            means = [r / n for r, n in zip(releases, sizes)] + [prefix[m - 1] / m]
            weights = [n * n / v for n, v in zip(sizes, variances)] + [m * m / inner.variance(m)]
            t = start + m
            if weighting == "equal":
                out[t - 1] = sum(releases) + prefix[m - 1]
                out_var[t - 1] = sum(variances) + inner.variance(m)
            else:
                out[t - 1] = t * sum(w * mu for w, mu in zip(weights, means)) / sum(weights)
                out_var[t - 1] = t * t / sum(weights)
        if full:
            total = V[start:end].sum(axis=0) + inner.describe()["final_sigma"] * Z[row]
            row += 1
            v_c = inner._stream_variance(int(size))  # the factorisation's variance at the block's end
            v_f = inner.describe()["final_sigma"] ** 2
            releases.append((v_f * prefix[-1] + v_c * total) / (v_c + v_f))
            variances.append(v_c * v_f / (v_c + v_f))
            means = [r / n for r, n in zip(releases, sizes)]
            weights = [n * n / v for n, v in zip(sizes, variances)]
            t = int(end)
            out[t - 1] = sum(releases) if weighting == "equal" else t * sum(w * mu for w, mu in zip(weights, means)) / sum(weights)
            out_var[t - 1] = sum(variances) if weighting == "equal" else t * t / sum(weights)
        start = int(end)
    return out, out_var


@pytest.mark.parametrize("weighting", ["size", "equal"])
@pytest.mark.parametrize("phi", [0.1, 0.25])
def test_fresh_share_releases_and_variances_are_the_numpy_twins(weighting, phi):
    T, k = 50, 3
    V = data(T, k, 1)
    mech = make(dim=k, ratio=2.0, weighting=weighting, fresh_share=phi)
    Z = data(mech._noise_rows(0, T), k, 2)
    out = np.empty((T, k))
    mech._apply(np.ascontiguousarray(V), Z.copy(), out)
    expected, variances = fresh_twin(V, Z, 4, 2.0, phi, weighting)
    np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T + 1)], variances, rtol=1e-10)
    np.testing.assert_allclose(mech.estimate(), expected[-1], rtol=1e-9, atol=1e-9)


def test_fresh_share_noise_variance_chi_square_and_cost():
    T, k = 60, 4000
    mech = BlockRelease(dim=k, sensitivity=1.0, rho=1.0, first_block=4, fresh_share=0.25)
    out = mech.add_block(np.zeros((T, k)), np.random.default_rng(3), return_estimates=True)
    checked = [1, 3, 4, 5, 12, 13, 27, 28, 60]
    for t in checked:
        stat = float((out[t - 1] ** 2).sum() / mech.variance(t))
        p = 2 * min(stats.chi2.cdf(stat, k), stats.chi2.sf(stat, k))
        assert p > ALPHA / len(checked), (t, stat, p)
    rows = mech.privacy_rows()
    assert len(rows) == 2 and set(rows[0]) == set(rows[1])
    assert rows[0]["rho"] == pytest.approx(0.75, rel=1e-8) and rows[1]["rho"] == pytest.approx(0.25, rel=1e-8)
    assert sum(r["rho"] for r in rows) <= 1.0 and mech.describe()["rho_spent_bound"] <= 1.0


def test_fresh_share_one_at_a_time_and_snapshots_bit_for_bit():
    V = data(45, 3, 4)
    whole = make(fresh_share=0.1)
    est = whole.add_block(V, np.random.default_rng(7), return_estimates=True)
    one, rng = make(fresh_share=0.1), np.random.default_rng(7)
    for i, row in enumerate(V):
        one.add_one(row, rng)
        assert np.array_equal(one.estimate(), est[i])
        if i in (2, 3, 11, 20):
            scalars, arrays = one.to_state()
            one = BlockRelease.from_state(one.get_params(), scalars, arrays)
    assert np.array_equal(one.estimate(), whole.estimate()) and one.variance() == whole.variance()
    scalars, arrays = whole.to_state()
    arrays["fresh_buffers"] = arrays["fresh_buffers"] + 1.0
    bad = dict(scalars, n_seen=4)  # a block end: the new block's factorisation must be empty
    with pytest.raises(ValueError):
        BlockRelease.from_state(whole.get_params(), bad, arrays)


def test_fresh_share_checks():
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(ValueError, match="fresh_share"):
            make(fresh_share=bad)
    with pytest.raises(TypeError, match="fresh_share"):
        make(fresh_share="0.1")


# -- forgetting: blocks capped at L = max(n_0, ⌈c·H⌉), weighed by the decay γ^(N − e_j) --------------------------
def cap_of(first, half_life):
    return max(first, math.ceil(0.25 * half_life))  # c = 1/4, the module's CAP_PER_HALF_LIFE


def test_decayed_cap_is_the_documented_one():
    from onpair.privacy.continual.blocks import CAP_PER_HALF_LIFE

    assert CAP_PER_HALF_LIFE == 0.25
    for first, H in ((4, 40.0), (32, 1000.0), (32, 64.0), (4, 4.0)):
        mech = make(first_block=first, half_life=H)
        assert mech.block_cap == cap_of(first, H) and mech.weighting == "decayed"
        ends = mech.block_ends(30)
        sizes = np.diff([0] + ends)
        assert sizes.max() == mech.block_cap and list(sizes) == block_sizes(first, 2.0, ends[-1], mech.block_cap)


@pytest.mark.parametrize("first,ratio,H,horizon", [(4, 2.0, 40.0, None), (3, 1.5, 100.0, None), (4, 2.0, 40.0, 57),
                                                   (8, 3.0, 16.0, None)])
def test_decayed_releases_and_variances_are_the_numpy_twins(first, ratio, H, horizon):
    """Fed chosen normals (one row per completed block) against the literal twin Σ_j γ^(N − e_j)·r_j, every t,
    to 1e-12; the variance σ²·Σ_j γ^(2(N − e_j)) likewise."""
    T, k = 57, 3
    V = data(T, k, 1)
    mech = make(dim=k, first_block=first, ratio=ratio, half_life=H, horizon=horizon)
    Z = data(mech.completed(T), k, 2)
    out = np.empty((T, k))
    mech._apply(np.ascontiguousarray(V), Z.copy(), out)
    sigma = mech.describe()["sigma"]
    expected, variances = decayed_block_estimates(V, sigma, Z, first, ratio, H, cap_of(first, H), horizon)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T + 1)], variances, rtol=1e-12)
    np.testing.assert_allclose(mech.estimate(), expected[-1], rtol=1e-12, atol=1e-12)
    gamma = 2.0 ** (-1.0 / H)
    N = mech.n_released
    for j in range(mech.completed()):
        assert math.isclose(mech.coefficient(T, j), gamma ** (N - mech.block_ends(j + 1)[-1]), rel_tol=1e-12)


def test_decayed_variance_in_closed_form_far_out_is_the_sum():
    """variance(t) sums the blocks of L in closed form: against the plain sum at t = 10⁶ records (H = 1,000)."""
    mech = BlockRelease(dim=1, sensitivity=1.0, rho=1.0, half_life=1000.0)
    L, gamma = mech.block_cap, 2.0 ** (-1.0 / 1000.0)
    assert L == 250
    B = mech.completed(10**6)
    ends = mech.block_ends(B)
    expected = sum(gamma ** (2.0 * (ends[-1] - e)) for e in ends)
    assert math.isclose(mech.variance(10**6) / mech.describe()["sigma"] ** 2, expected, rel_tol=1e-12)
    assert math.isclose(expected, 1.0 / (1.0 - 2.0 ** -0.5), rel_tol=1e-9)  # the stationary level, 3.41
    assert mech.completed(2**62) == len(mech._ends) and mech.block_of([2**62])[0] == len(mech._ends) - 1
    with pytest.raises(ValueError, match="count"):
        mech.block_ends()


def test_decayed_noise_variance_chi_square():
    T, k = 80, 4000
    mech = BlockRelease(dim=k, sensitivity=1.0, rho=1.0, first_block=4, half_life=40.0)
    out = mech.add_block(np.zeros((T, k)), np.random.default_rng(5), return_estimates=True)
    checked = [4, 11, 12, 22, 30, 52, 80]
    for t in checked:
        stat = float((out[t - 1] ** 2).sum() / mech.variance(t))
        p = 2 * min(stats.chi2.cdf(stat, k), stats.chi2.sf(stat, k))
        assert p > ALPHA / len(checked), (t, stat, p)
    # power: the undecayed count of releases (B·σ², "equal") is refused by the same test
    wrong = mech.completed(80) * mech.describe()["sigma"] ** 2
    stat = float((out[-1] ** 2).sum() / wrong)
    assert 2 * min(stats.chi2.cdf(stat, k), stats.chi2.sf(stat, k)) < ALPHA


def test_decayed_one_at_a_time_fused_and_snapshots_bit_for_bit():
    V = data(70, 3, 4)
    whole = make(half_life=40.0)
    est = whole.add_block(V, np.random.default_rng(7), return_estimates=True)
    one, rng = make(half_life=40.0), np.random.default_rng(7)
    fused, rng2 = make(half_life=40.0), np.random.default_rng(7)
    for i, row in enumerate(V):
        one.add_one(row, rng)
        fused.sum_step()[:] += row  # the compiled caller's addition (add_rows_in_order of one row)
        fused.count_step(rng2)
        assert np.array_equal(one.estimate(), est[i]) and np.array_equal(fused.estimate(), est[i])
        if i in (2, 3, 11, 30, 41):
            scalars, arrays = one.to_state()
            assert scalars["params"]["half_life"] == 40.0
            one = BlockRelease.from_state(one.get_params(), scalars, arrays)
    assert np.array_equal(one.estimate(), whole.estimate()) and one.variance() == whole.variance()
    assert rng.bit_generator.state == rng2.bit_generator.state
    scalars, arrays = whole.to_state()
    with pytest.raises(ValueError, match="parameters"):
        BlockRelease.from_state(dict(whole.get_params(), half_life=41.0), scalars, arrays)
    with pytest.raises(ValueError, match="parameters"):  # a state of the decayed blocks is not one without
        BlockRelease.from_state({k: v for k, v in whole.get_params().items() if k not in ("half_life", "weighting")},
                                scalars, arrays)


def test_decayed_cost_and_replay_of_the_capped_schedule():
    """One row, the shape of the undecayed one; ρ for the stream; the replay cost Σ_j c_j²ρ over blocks of L,
    against a brute-force count of the positions per block."""
    mech = make(dim=1, half_life=40.0)
    mech.add_block(np.zeros((100, 1)), np.random.default_rng(0))
    row, = mech.privacy_rows()
    plain, = make(dim=1).privacy_rows()
    assert set(row) == set(plain) and row["rho"] == plain["rho"] and row["kappa2"] == 1.0
    assert row["nodes_released"] == mech.completed() == 10  # 4, 8, then blocks of 10 up to 92
    assert "at most 10 records" in row["what"]
    ends = [0] + mech.block_ends(1000)
    for n, passes in ((7, 3), (10, 4), (25, 2), (3, 9)):
        worst = 0
        for i in range(1, n + 1):
            positions = [i + j * n for j in range(passes)]
            counts = np.bincount([np.searchsorted(ends, p, side="left") for p in positions])
            worst = max(worst, int((counts ** 2).sum()))
        assert math.isclose(replay_rho(mech, n, passes), worst * row["rho"], rel_tol=1e-12), (n, passes)
    assert math.isclose(record_rho(mech, [13, 22]), 4 * row["rho"]) and math.isclose(record_rho(mech, [22, 23]),
                                                                                      2 * row["rho"])


def test_decayed_checks_change_nothing():
    with pytest.raises(ValueError, match="fresh_share=0.1.*half_life=40"):
        make(half_life=40.0, fresh_share=0.1)
    with pytest.raises(ValueError, match="weighting='size'.*half_life=40"):
        make(half_life=40.0, weighting="size")
    with pytest.raises(ValueError, match="weighting='decayed'.*half_life=None"):
        make(weighting="decayed")
    with pytest.raises(ValueError, match="half_life"):
        make(half_life=2.0)
    with pytest.raises(TypeError, match="half_life"):
        make(half_life="40")
    with pytest.raises(TypeError, match="weighting"):
        make(weighting=1)


@pytest.mark.parametrize("task", ["auc", "classify"])
def test_onpairstats_decayed_blocks_learn_one_is_learn_many_and_snapshots(task, tmp_path):
    X, y = _stream(700, 4)
    classes = None if task == "auc" else [False, True]
    kw = dict(epsilon=2.0, bounds=(0, 1), task=task, classes=classes, mechanism="blocks", half_life=200, seed=3)
    a, b = OnPairStats(**kw), OnPairStats(**kw)
    for x, label in zip(X[:400], y[:400]):
        a.learn_one(x, bool(label))
    b.learn_many(X[:400], y[:400])
    assert np.array_equal(a._stats.estimate(), b._stats.estimate()) and np.array_equal(a.model, b.model)
    mech = a._stats.mechanism
    assert isinstance(mech, BlockRelease) and mech.half_life == 200.0 and mech.block_cap == 50
    a.save(tmp_path / "d.onpair")
    c = onpair.load(tmp_path / "d.onpair")
    for x, label in zip(X[400:], y[400:]):
        a.learn_one(x, bool(label))
    b.learn_many(X[400:], y[400:])
    c.learn_many(X[400:], y[400:])
    assert np.array_equal(a.model, b.model) and np.array_equal(a.model, c.model)
    report = a.privacy_report()
    assert report["releases"][0]["mechanism"] == "blocks" and report["rho_spent"] <= report["rho_budget"]
    # the non-private twin stays the exact decayed sums
    twin = OnPairStats(**dict(kw, private=False)).learn_many(X, y)
    assert type(twin._stats.mechanism).__name__ == "DecayedExactSums"
