"""Tests of the continual-release mechanisms (onpair.privacy.continual; docs/continual_release.md).

The mechanisms are linear in the data and in the noise, so most tests read them off exactly: fed
through ``_apply`` with chosen standard normals (the noise ``add_block`` would draw), with k columns
used as k independent unit inputs, the released prefixes give the data map and the noise map as
matrices. Those are compared with the dense definitions of ``naive_continual``, with dp-accounting,
and with ``variance(t)``. Seeds and significance levels are fixed.
"""

import copy
import json
import math
import os
import pickle
import signal

import dp_accounting
import numpy as np
import pytest
from dp_accounting import rdp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import naive_continual as naive
from onpair.privacy import continual
from onpair.privacy.continual._kernels import _toeplitz_record
from onpair.privacy.continual import (
    MAX_RECORDS,
    BandedToeplitz,
    EpochTrees,
    PrefixSumMechanism,
    TreeAggregation,
    sqrt_toeplitz_coefficients,
)
from onpair.privacy.exceptions import PrivacyBudgetExceeded

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=40,
                    suppress_health_check=[HealthCheck.too_slow])
ALPHA = 0.001
ORDERS = np.array([1.25, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0, 256.0])

# (class, extra constructor arguments): every configuration the generic tests run on
CONFIGS = [
    (TreeAggregation, dict(horizon=200)),
    (TreeAggregation, dict(horizon=200, estimate="plain")),
    (TreeAggregation, dict()),
    (TreeAggregation, dict(estimate="plain")),
    (BandedToeplitz, dict(band=1)),
    (BandedToeplitz, dict(band=5)),
    (BandedToeplitz, dict(band=16, horizon=200)),
    (BandedToeplitz, dict()),
]
IDS = [f"{cls.__name__}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}" for cls, kw in CONFIGS]


def make(cls, dim=3, sensitivity=1.5, rho=0.7, **kwargs):
    return cls(dim=dim, sensitivity=sensitivity, rho=rho, **kwargs)


def data(n, k, seed=0):
    return np.random.default_rng(seed).standard_normal((n, k))


def sigmas_of(mech):
    """Per-level σ of a tree; the single σ of a factorisation."""
    d = mech.describe()
    return np.array(d["sigmas"]) if d["kind"] == "tree" else d["sigma"]


def noise_rows(mech, T):
    return mech._noise_rows(0, T)


def linear_maps(cls, T, **kwargs):
    """(data map (T, T), noise map (T, n_noise), node map or None) of a fresh mechanism over T records.

    Column q of the data map is the release sequence for the stream e_q (k = T unit streams fed as T
    columns at once); column r of the noise map is the release sequence with zero data and the r-th
    standard normal set to 1. For the tree, the node map (n_nodes, T) holds the noisy node values for
    the unit streams with zero noise (the encoder E).
    """
    mech = cls(dim=T, sensitivity=1.0, rho=1.0, **kwargs)
    n_noise = noise_rows(mech, T)
    out = np.empty((T, T))
    nodes = np.empty((n_noise, T)) if cls is TreeAggregation else None
    mech._apply(np.eye(T), np.zeros((n_noise, T)), out, nodes)
    noise_mech = cls(dim=n_noise, sensitivity=1.0, rho=1.0, **kwargs)
    noise_out = np.empty((T, n_noise))
    noise_mech._apply(np.zeros((T, n_noise)), np.eye(n_noise), noise_out)
    return out, noise_out, nodes, mech


def run(mech, V, seed):
    return mech.add_block(V, np.random.default_rng(seed), return_estimates=True)


# -- construction -------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [TreeAggregation, BandedToeplitz])
@pytest.mark.parametrize("kwargs, error, words", [
    (dict(dim=0), ValueError, "dim"),
    (dict(dim=2.0), TypeError, "dim"),
    (dict(dim=True), TypeError, "dim"),
    (dict(sensitivity=0.0), ValueError, "sensitivity"),
    (dict(sensitivity=-1.0), ValueError, "sensitivity"),
    (dict(sensitivity=float("nan")), ValueError, "sensitivity"),
    (dict(sensitivity=float("inf")), ValueError, "sensitivity"),
    (dict(sensitivity="1"), TypeError, "sensitivity"),
    (dict(sensitivity=True), TypeError, "sensitivity"),
    (dict(rho=0.0), ValueError, "rho"),
    (dict(rho=float("inf")), ValueError, "rho"),
    (dict(rho=None), TypeError, "rho"),
    (dict(horizon=0), ValueError, "horizon"),
    (dict(horizon=10.0), TypeError, "horizon"),
    (dict(horizon=MAX_RECORDS + 1), ValueError, "horizon"),
])
def test_constructor_rejects(cls, kwargs, error, words):
    args = dict(dim=2, sensitivity=1.0, rho=1.0)
    args.update(kwargs)
    with pytest.raises(error, match=words):
        cls(**args)


@pytest.mark.parametrize("kwargs, error", [
    (dict(estimate="ls"), ValueError), (dict(estimate=None), TypeError), (dict(band=0), ValueError),
    (dict(band=3.0), TypeError), (dict(band=np.True_), TypeError),
])
def test_constructor_rejects_options(kwargs, error):
    cls = TreeAggregation if "estimate" in kwargs else BandedToeplitz
    with pytest.raises(error, match=next(iter(kwargs))):
        cls(dim=2, sensitivity=1.0, rho=1.0, **kwargs)


def test_constructor_takes_keywords_only_and_numpy_scalars():
    with pytest.raises(TypeError):
        TreeAggregation(2, 1.0, 1.0)  # a swapped sensitivity and rho must not pass silently
    mech = BandedToeplitz(dim=np.int64(2), sensitivity=np.float32(0.5), rho=np.float64(1.0), band=np.int32(8))
    assert (mech.dim, mech.band) == (2, 8) and type(mech.dim) is int and mech.sensitivity == 0.5


# -- agreement with the naive definitions ------------------------------------------------------------
@pytest.mark.parametrize("estimate", ["honaker", "plain"])
@pytest.mark.parametrize("horizon", [1, 2, 7, 37, 64, None])
def test_tree_matches_naive(estimate, horizon):
    T = horizon or 45
    mech = make(TreeAggregation, dim=4, horizon=horizon, estimate=estimate)
    V = data(T, 4, seed=1)
    Z = data(noise_rows(mech, T), 4, seed=2)
    out = np.empty((T, 4))
    mech._apply(V, Z.copy(), out)
    expected, var = naive.tree_prefixes(V, sigmas_of(mech), Z, estimate)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T + 1)], var, rtol=1e-10)
    assert np.array_equal(mech.estimate(), out[-1])


@pytest.mark.parametrize("band", [1, 2, 3, 5, 8, 40, 64])
@pytest.mark.parametrize("horizon", [None, 30])
def test_toeplitz_matches_naive(band, horizon):
    T = 40 if horizon is None else horizon
    mech = make(BandedToeplitz, dim=4, band=band, horizon=horizon)
    V = data(T, 4, seed=3)
    Z = data(T, 4, seed=4)
    out = np.empty((T, 4))
    mech._apply(V, Z.copy(), out)
    expected, var = naive.toeplitz_prefixes(V, mech.describe()["band_used"], mech.describe()["sigma"], Z)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T + 1)], var, rtol=1e-10)
    assert np.array_equal(mech.estimate(), out[-1])


@pytest.mark.parametrize("band", [1, 2, 5, 8, 64])
def test_toeplitz_single_record_kernel_matches_naive_and_the_block_kernel(band):
    """_toeplitz_record, the single-record path's kernel, fed record by record: the released prefixes of the
    matrix twin, and the block kernel's state bit for bit."""
    T, k = 70, 4
    V, Z = data(T, k, seed=11), data(T, k, seed=12)
    mech = make(BandedToeplitz, dim=k, band=band)
    block = make(BandedToeplitz, dim=k, band=band)
    block._apply(V, Z.copy())
    sigma = mech.describe()["sigma"]
    expected, _ = naive.toeplitz_prefixes(V, mech.describe()["band_used"], sigma, Z)
    for t in range(1, T + 1):
        _toeplitz_record(V[t - 1].copy(), Z[t - 1].copy(), t, mech._c, mech._ring, mech._prefix_sum, mech._noise_sum)
        mech._n_seen = t
        np.testing.assert_allclose(mech.estimate(), expected[t - 1], rtol=1e-10, atol=1e-10)
    for name in ("_ring", "_prefix_sum", "_noise_sum"):
        assert getattr(mech, name).tobytes() == getattr(block, name).tobytes()


@pytest.mark.parametrize("cls, kwargs", CONFIGS + [(EpochTrees, dict())], ids=IDS + ["EpochTrees"])
def test_add_one_equals_add_block_bit_for_bit(cls, kwargs):
    """The single-record path (add_one) draws the same normals and reaches the same state as add_block."""
    V = data(150, 3, seed=21)
    whole, block_rng = make(cls, **kwargs), np.random.default_rng(5)
    whole.add_block(V, block_rng)
    ones, rng = make(cls, **kwargs), np.random.default_rng(5)
    for v in V:
        ones.add_one(v.copy(), rng)
    assert ones.n_seen == 150 and ones.estimate().tobytes() == whole.estimate().tobytes()
    assert rng.bit_generator.state == block_rng.bit_generator.state  # the same normals drawn, no more
    _, a = ones.to_state()
    _, b = whole.to_state()
    assert all(a[name].tobytes() == b[name].tobytes() for name in a)


def test_sqrt_coefficients_square_to_the_ones_matrix():
    c = sqrt_toeplitz_coefficients(300)
    np.testing.assert_allclose(c[:60], naive.sqrt_coefficients(60), rtol=1e-13)
    np.testing.assert_allclose(np.convolve(c, c)[:300], np.ones(300), rtol=1e-12)
    _, C, _ = naive.toeplitz_matrices(50, 50)
    np.testing.assert_allclose(C @ C, np.tril(np.ones((50, 50))), atol=1e-12)


# -- privacy cost --------------------------------------------------------------------------------------
@pytest.mark.parametrize("T", [1, 2, 3, 4, 5, 7, 8, 100, 1000, 1023, 1024, 10**6])
def test_horizon_tree_cost_matches_dp_accounting(T):
    """dp-accounting charges a single-epoch tree over T steps α·D/(2·nm²) at order α, with
    D = ⌈log₂(T + 1)⌉ nodes per record. That is our L = ⌊log₂T⌋ + 1 (the bit length of T) for every
    T ≥ 1: 2^(L−1) ≤ T < 2^L gives 2^(L−1) < T + 1 ≤ 2^L. (The other common count, ⌈log₂T⌉ + 1,
    is one level too many when T is not a power of two.) A ρ-zCDP mechanism is (α, αρ)-RDP, so
    with nm = σ/Δ the accountant must find exactly α·ρ_spent ≤ α·ρ."""
    delta, rho = 1.3, 0.45
    mech = TreeAggregation(dim=1, sensitivity=delta, rho=rho, horizon=T)
    d = mech.describe()
    assert d["levels"] == d["kappa2"] == math.ceil(math.log2(T + 1)) == len(mech.privacy_rows())
    acc = rdp.RdpAccountant(ORDERS, dp_accounting.NeighboringRelation.REPLACE_SPECIAL)
    acc.compose(dp_accounting.SingleEpochTreeAggregationDpEvent(noise_multiplier=d["sigma"] / delta,
                                                                 step_counts=T))
    np.testing.assert_allclose(acc._rdp, ORDERS * d["rho_spent_bound"], rtol=1e-12)
    assert np.all(acc._rdp <= ORDERS * rho)
    assert d["rho_spent_bound"] <= rho <= d["rho_spent_bound"] * (1 + 1e-8)
    assert math.isclose(math.fsum(r["rho"] for r in mech.privacy_rows()), d["rho_spent_bound"], rel_tol=1e-12)


def test_unbounded_tree_cost_by_dp_accounting():
    """Unbounded: a record is in one node per level, level h a Gaussian with σ_h; composing the 63
    levels that can ever exist stays within ρ."""
    delta, rho = 0.8, 2.0
    mech = TreeAggregation(dim=1, sensitivity=delta, rho=rho)
    sigmas = np.array(mech.describe()["sigmas"])
    acc = rdp.RdpAccountant(ORDERS)
    acc.compose(dp_accounting.ComposedDpEvent([dp_accounting.GaussianDpEvent(s / delta) for s in sigmas]))
    assert np.all(acc._rdp <= ORDERS * rho)
    np.testing.assert_allclose(acc._rdp, ORDERS * mech.describe()["rho_spent_bound"], rtol=1e-12)
    shares = rho * 6 / (math.pi**2 * np.arange(1, 64) ** 2)
    np.testing.assert_allclose(delta**2 / (2 * sigmas**2), shares, rtol=1e-8)


@pytest.mark.parametrize("band, horizon", [(1, None), (7, None), (64, None), (512, None), (100, 30)])
def test_toeplitz_cost_by_dp_accounting(band, horizon):
    delta, rho = 2.0, 0.3
    mech = BandedToeplitz(dim=1, sensitivity=delta, rho=rho, band=band, horizon=horizon)
    d = mech.describe()
    acc = rdp.RdpAccountant(ORDERS)
    acc.compose(dp_accounting.GaussianDpEvent(d["sigma"] / (delta * math.sqrt(d["kappa2"]))))
    assert np.all(acc._rdp <= ORDERS * rho)
    np.testing.assert_allclose(acc._rdp, ORDERS * rho, rtol=1e-8)


@pytest.mark.parametrize("kwargs", [dict(horizon=64), dict(horizon=45), dict(horizon=45, estimate="plain"), dict()])
def test_tree_encoder_read_off_the_kernel(kwargs):
    """Feed unit vectors: the kernel's noisy node values with zero noise are the encoder E (0/1
    incidence, each node summing its own dyadic interval); the largest column norm of E scaled by
    1/σ_h gives the cost, ≤ ρ, and with a horizon every record is in exactly L nodes."""
    T = kwargs.get("horizon", 50)
    _, _, E, mech = linear_maps(TreeAggregation, T, **kwargs)
    order = naive.tree_node_order(T)
    for r, (h, j) in enumerate(order):
        expected = np.zeros(T)
        expected[(j - 1) * 2**h:j * 2**h] = 1.0
        assert np.array_equal(E[r], expected)
    sigmas = sigmas_of(mech)
    inv_var = np.array([1.0 / sigmas[h] ** 2 for h, _ in order])
    rho_cols = 0.5 * (E**2 * inv_var[:, None]).sum(axis=0)  # Δ = 1
    assert rho_cols.max() <= mech.rho
    if "horizon" in kwargs:
        assert (E**2).sum(axis=0).max() == mech.describe()["kappa2"] == T.bit_length()
        assert math.isclose(rho_cols.max(), mech.describe()["rho_spent_bound"], rel_tol=1e-12)


@pytest.mark.parametrize("band, horizon", [(1, None), (2, None), (6, None), (17, None), (64, None), (300, None), (64, 40)])
def test_toeplitz_encoder_read_off_the_releases(band, horizon):
    """Releases = A·V + σ·B·Z: the data map must be A exactly, and C = B⁻¹A (what the releases are a
    post-processing of, CV + σZ) must have largest column norm² κ² ≤ the claimed one (equal when the
    stream is at least a band long), so that Δ²κ²/(2σ²) ≤ ρ."""
    T = 40 if horizon is None else horizon
    A_emp, noise_map, _, mech = linear_maps(BandedToeplitz, T, band=band, horizon=horizon)
    assert np.array_equal(A_emp, np.tril(np.ones((T, T))))
    sigma = mech.describe()["sigma"]
    C = np.linalg.solve(noise_map / sigma, A_emp)
    np.testing.assert_allclose(np.tril(C), C, atol=1e-9)
    kappa2_emp = (C**2).sum(axis=0).max()
    c = naive.sqrt_coefficients(min(band, T))
    assert math.isclose(kappa2_emp, float((c**2).sum()), rel_tol=1e-9)
    assert kappa2_emp <= mech.kappa2 * (1 + 1e-9)
    assert 0.5 * kappa2_emp / sigma**2 <= mech.rho * (1 + 1e-9)


# -- error variance ---------------------------------------------------------------------------------
@pytest.mark.parametrize("cls, kwargs", [
    (TreeAggregation, dict(horizon=64)), (TreeAggregation, dict(horizon=50, estimate="plain")),
    (TreeAggregation, dict()), (TreeAggregation, dict(estimate="plain")),
    (BandedToeplitz, dict(band=1)), (BandedToeplitz, dict(band=4)), (BandedToeplitz, dict(band=13)),
    (BandedToeplitz, dict(band=64)), (BandedToeplitz, dict(band=10, horizon=64)),
])
def test_variance_equals_brute_force_covariance(cls, kwargs):
    T = kwargs.get("horizon", 60)
    _, noise_map, _, mech = linear_maps(cls, T, **kwargs)
    brute = (noise_map**2).sum(axis=1)
    formula = np.array([mech.variance(t) for t in range(1, T + 1)])
    np.testing.assert_allclose(formula, brute, rtol=1e-9)
    assert mech.variance(0) == 0.0


@pytest.mark.parametrize("cls, kwargs", [(TreeAggregation, dict(horizon=32)), (TreeAggregation, dict()),
                                         (BandedToeplitz, dict(band=8)), (BandedToeplitz, dict(band=32))])
def test_empirical_variance_chi_square(cls, kwargs):
    """4,000 independent coordinates of zero data: Σ_q x_q²/var(t) ~ χ²(4000) at each t checked,
    two-sided at α = 0.001 (Bonferroni over the t checked)."""
    T, k = 32, 4000
    mech = cls(dim=k, sensitivity=1.0, rho=1.0, **kwargs)
    out = run(mech, np.zeros((T, k)), seed=11)
    checked = [1, 2, 3, 7, 16, 21, 31, 32]
    for t in checked:
        stat = float((out[t - 1] ** 2).sum() / mech.variance(t))
        p = 2 * min(stats.chi2.cdf(stat, k), stats.chi2.sf(stat, k))
        assert p > ALPHA / len(checked), (t, stat, p)


@pytest.mark.parametrize("horizon", [2**12 - 1, 3000, None])
def test_least_squares_variance_never_above_plain(horizon):
    kwargs = dict(horizon=horizon)
    ls, plain = make(TreeAggregation, **kwargs), make(TreeAggregation, estimate="plain", **kwargs)
    ts = range(1, (horizon or 2**12) + 1)
    v_ls = np.array([ls.variance(t) for t in ts])
    v_plain = np.array([plain.variance(t) for t in ts])
    assert np.all(v_ls <= v_plain)
    assert np.all(v_ls[1::2] < v_plain[1::2])  # even t: a node above level 0, strictly better
    assert np.all(ls.level_variances() <= plain.level_variances())


@pytest.mark.parametrize("cls, kwargs", CONFIGS, ids=IDS)
def test_zero_noise_gives_exact_prefix_sums(cls, kwargs):
    mech = make(cls, dim=5, **kwargs)
    if cls is TreeAggregation:
        mech._scales[:] = 0.0
    else:
        mech._sigma = 0.0
    V = data(150, 5, seed=5)
    out = run(mech, V[:70], seed=1)
    out = np.vstack([out, run(mech, V[70:], seed=2)])
    np.testing.assert_allclose(out, np.cumsum(V, axis=0), rtol=1e-12, atol=1e-12)


def test_toeplitz_variance_for_any_t_and_restarts():
    mech = make(BandedToeplitz, dim=1, band=16)
    v1000 = mech.variance(1000)
    v10 = mech.variance(10)  # behind the stored series: recomputed
    assert mech.variance(1000) == v1000 and mech.variance(10) == v10
    fresh = make(BandedToeplitz, dim=1, band=16)
    assert fresh.variance(10) == v10 and fresh.variance(1000) == v1000
    # exact factorisation (band ≥ t): variance σ²·Σ_{j<t} c_j²
    exact = make(BandedToeplitz, dim=1, band=5000)
    c = sqrt_toeplitz_coefficients(5000)
    assert math.isclose(exact.variance(5000), exact.describe()["sigma"] ** 2 * math.fsum(c**2), rel_tol=1e-10)
    # past convergence of the series (β constant to 2⁻⁶⁰) the variance is closed-form: still a
    # function of t alone (any order of queries), agreeing with the dense definition
    T = 700
    _, var = naive.toeplitz_prefixes(np.zeros((T, 1)), 8, 1.0, np.zeros((T, 1)))
    stepping, jumping = make(BandedToeplitz, dim=1, band=8), make(BandedToeplitz, dim=1, band=8)
    ours = np.array([stepping.variance(t) for t in range(1, T + 1)]) / stepping.describe()["sigma"] ** 2
    np.testing.assert_allclose(ours, var, rtol=1e-12)
    order = np.random.default_rng(0).permutation(np.arange(1, T + 1))
    assert all(jumping.variance(int(t)) == stepping.variance(int(t)) for t in order)
    assert stepping._tracker[4] and stepping._tracker[0] < 300  # converged early
    huge = stepping.variance(10**15)
    assert math.isclose(huge, stepping.describe()["sigma"] ** 2 * 10**15 / float(sqrt_toeplitz_coefficients(8).sum()) ** 2,
                        rel_tol=1e-9)
    with pytest.raises(ValueError, match="t"):
        make(BandedToeplitz, horizon=10).variance(11)
    with pytest.raises(TypeError, match="t"):
        mech.variance(2.0)


# -- blocks, state, generators ------------------------------------------------------------------------
@pytest.mark.parametrize("cls, kwargs", CONFIGS, ids=IDS)
def test_block_equals_singles_bit_for_bit(cls, kwargs, monkeypatch):
    monkeypatch.setattr(continual.base, "CHUNK_VALUES", 7)  # force many chunks inside one block
    V = data(130, 3, seed=6)
    whole = make(cls, **kwargs)
    out_whole = run(whole, V, seed=9)
    singles = make(cls, **kwargs)
    rng = np.random.default_rng(9)
    out_singles = np.vstack([singles.add_block(V[i:i + 1], rng, return_estimates=True) for i in range(130)])
    assert np.array_equal(out_whole, out_singles)
    assert np.array_equal(whole.estimate(), singles.estimate())
    assert whole.estimate().tobytes() == out_whole[-1].tobytes()


@SETTINGS
@given(cut=st.lists(st.integers(0, 90), max_size=4), config=st.sampled_from(range(len(CONFIGS))),
       seed=st.integers(0, 2**32 - 1))
def test_block_splitting_property(cut, config, seed):
    cls, kwargs = CONFIGS[config]
    V = data(90, 2, seed=seed % 1000)
    reference = make(cls, dim=2, **kwargs)
    expected = run(reference, V, seed)
    mech = make(cls, dim=2, **kwargs)
    rng = np.random.default_rng(seed)
    bounds = [0] + sorted(cut) + [90]
    parts = [mech.add_block(V[a:b], rng, return_estimates=True) for a, b in zip(bounds[:-1], bounds[1:])]
    assert np.array_equal(np.vstack(parts), expected)
    assert mech.n_seen == 90 and np.array_equal(mech.estimate(), reference.estimate())


def round_trip(mech):
    scalars, arrays = mech.to_state()
    scalars = json.loads(json.dumps(scalars))
    params = json.loads(json.dumps(mech.get_params()))
    return type(mech).from_state(params, scalars, arrays)


@SETTINGS
@given(stop=st.integers(0, 80), config=st.sampled_from(range(len(CONFIGS))), seed=st.integers(0, 2**32 - 1))
def test_state_round_trip_property(stop, config, seed):
    cls, kwargs = CONFIGS[config]
    V = data(80, 2, seed=seed % 997)
    uninterrupted = make(cls, dim=2, **kwargs)
    expected = run(uninterrupted, V, seed)
    rng = np.random.default_rng(seed)
    first = make(cls, dim=2, **kwargs)
    head = first.add_block(V[:stop], rng, return_estimates=True)
    resumed = round_trip(first)
    assert resumed.n_seen == stop and np.array_equal(resumed.estimate(), first.estimate())
    assert resumed.variance() == first.variance()
    tail = resumed.add_block(V[stop:], rng, return_estimates=True)
    assert np.array_equal(np.vstack([head, tail]), expected)
    assert resumed.variance() == uninterrupted.variance()
    # the generic entry point dispatches on the stored kind
    scalars, arrays = resumed.to_state()
    again = PrefixSumMechanism.from_state(resumed.get_params(), scalars, arrays)
    assert type(again) is cls and np.array_equal(again.estimate(), resumed.estimate())


def hostile_cases():
    """(config index, n_seen, edit of (params, scalars, arrays), words in the message)."""
    def set_scalar(key, value):
        def edit(p, s, a):
            s[key] = value
        return edit

    def set_param(key, value):
        """The parameters edited in the state and in the call alike (the later checks must still refuse)."""
        def edit(p, s, a):
            p[key] = value
            s["params"] = dict(s["params"], **{key: value})
        return edit

    def other_params(key, value):
        """Only the call's parameters differ from the state's: refused before anything else."""
        def edit(p, s, a):
            p[key] = value
        return edit

    def poke(name, index, value):
        def edit(p, s, a):
            a[name][index] = value
        return edit

    def replace(name, value):
        def edit(p, s, a):
            a[name] = value(a[name])
        return edit

    def drop(name):
        def edit(p, s, a):
            del a[name]
        return edit

    tree, toep = 0, 5  # TreeAggregation(horizon=200); BandedToeplitz(band=5)
    return [
        (tree, 37, set_scalar("n_seen", -1), "n_seen"),
        (tree, 37, set_scalar("n_seen", 201), "n_seen"),
        (tree, 37, set_scalar("n_seen", 37.0), "n_seen"),
        (tree, 37, set_scalar("n_seen", True), "n_seen"),
        (tree, 37, set_scalar("kind", "banded_toeplitz"), "does not name a TreeAggregation"),
        (tree, 37, set_scalar("kind", "nope"), "kind"),
        (tree, 37, set_scalar("extra", 1), "scalars"),
        (tree, 37, set_scalar("n_seen", 38), "bit"),          # 38 = 100110₂: level 0 clear, row 0 set
        (tree, 37, set_scalar("n_seen", 36), "bit"),
        (tree, 37, set_param("rho", -1.0), "rho"),
        (tree, 37, set_param("dim", 3), "shape"),
        (tree, 37, set_param("estimate", "best"), "estimate"),
        (tree, 37, set_param("junk", 1), "params"),
        (tree, 37, other_params("rho", 100.0), "parameters its noise was calibrated to"),
        (toep, 30, other_params("sensitivity", 1e-6), "parameters its noise was calibrated to"),
        (tree, 37, poke("left_sums", (0, 0), np.nan), "NaN"),
        (tree, 37, poke("left_estimates", (5, 1), np.inf), "NaN"),
        (tree, 37, poke("left_estimates", (3, 0), 1.0), "bit"),   # bit 3 of 37 = 100101₂ is clear
        (tree, 37, replace("left_sums", lambda x: x[:-1]), "shape"),
        (tree, 37, replace("left_sums", lambda x: x.astype(np.float32)), "float64"),
        (tree, 37, replace("left_sums", lambda x: x.tolist()), "float64"),
        (tree, 37, drop("left_sums"), "keys"),
        (toep, 3, set_scalar("n_seen", 2), "noise_history"),      # row 2 filled, only 2 records
        (toep, 3, set_scalar("n_seen", 0), "zero"),
        (toep, 30, poke("noise_history", (1, 0), np.nan), "NaN"),
        (toep, 30, poke("prefix_sum", 0, -np.inf), "NaN"),
        (toep, 30, replace("noise_history", lambda x: np.zeros((5, 2))), "shape"),
        (toep, 30, replace("noise_sum", lambda x: x[None, :]), "shape"),
        (toep, 30, set_param("band", 6), "shape"),
        (toep, 30, set_param("band", 0), "band"),
        (toep, 30, set_scalar("n_seen", MAX_RECORDS + 1), "n_seen"),
    ]


@pytest.mark.parametrize("config, n_seen, edit, words", hostile_cases())
def test_hostile_state_is_refused(config, n_seen, edit, words):
    cls, kwargs = CONFIGS[config]
    mech = make(cls, dim=2, **kwargs)
    mech.add_block(data(n_seen, 2), np.random.default_rng(0))
    scalars, arrays = mech.to_state()
    params = mech.get_params()
    edit(params, scalars, arrays)
    with pytest.raises(ValueError, match=words):
        cls.from_state(params, scalars, arrays)


def test_from_state_rejects_non_dicts_and_wrong_class():
    mech = make(TreeAggregation, dim=2)
    scalars, arrays = mech.to_state()
    for args in [(None, scalars, arrays), (mech.get_params(), None, arrays), (mech.get_params(), scalars, None),
                 (mech.get_params(), scalars, list(arrays.values()))]:
        with pytest.raises(ValueError):
            TreeAggregation.from_state(*args)
    with pytest.raises(ValueError, match="kind"):
        BandedToeplitz.from_state(mech.get_params(), scalars, arrays)


def test_state_arrays_are_copies_and_stale_rows_zero():
    mech = make(TreeAggregation, dim=2, horizon=100)
    mech.add_block(data(6, 2), np.random.default_rng(0))  # 6 = 110₂: level 0 clear
    scalars, arrays = mech.to_state()
    assert scalars == {"kind": "tree", "n_seen": 6, "params": mech.get_params()}
    assert not arrays["left_sums"][0].any() and arrays["left_sums"][1:3].any()
    arrays["left_sums"][:] = 7.0
    assert not np.any(mech._left_sums == 7.0)


@pytest.mark.parametrize("cls, kwargs", CONFIGS, ids=IDS)
def test_noise_only_from_the_given_generator(cls, kwargs):
    V = data(40, 3, seed=8)
    np.random.seed(1)
    a = run(make(cls, **kwargs), V, seed=123)
    np.random.seed(999)
    np.random.standard_normal(17)
    b = run(make(cls, **kwargs), V, seed=123)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, run(make(cls, **kwargs), V, seed=124))
    # exactly the documented number of normals is drawn
    rng = np.random.default_rng(5)
    mech = make(cls, **kwargs)
    mech.add_block(V, rng)
    reference = np.random.default_rng(5)
    reference.standard_normal((mech._noise_rows(0, 40), 3))
    assert rng.bit_generator.state == reference.bit_generator.state


@pytest.mark.parametrize("cls, kwargs", CONFIGS, ids=IDS)
def test_failed_add_block_changes_nothing(cls, kwargs):
    mech = make(cls, **kwargs)
    rng = np.random.default_rng(3)
    mech.add_block(data(10, 3), rng)
    before_state, before_rng = mech.to_state(), copy.deepcopy(rng.bit_generator.state)
    bad = data(5, 3)
    bad[3, 1] = np.nan
    cases = [
        (bad, rng, ValueError, r"V\[3\]"),
        (np.where(np.isnan(bad), np.inf, bad), rng, ValueError, "inf"),
        (data(5, 4), rng, ValueError, "shape"),
        (data(5, 3)[None], rng, ValueError, "shape"),
        (data(5, 3).astype(complex), rng, TypeError, "real"),
        (np.ones((5, 3), dtype=bool), rng, TypeError, "real"),
        (data(5, 3), None, TypeError, "Generator"),
        (data(5, 3), np.random.RandomState(0), TypeError, "Generator"),
        (data(5, 3), 7, TypeError, "Generator"),
    ]
    for V, r, error, words in cases:
        with pytest.raises(error, match=words):
            mech.add_block(V, r)
        assert rng.bit_generator.state == before_rng
        after = mech.to_state()
        assert after[0] == before_state[0]
        assert all(np.array_equal(after[1][k], before_state[1][k]) for k in after[1])


@pytest.mark.parametrize("cls", [TreeAggregation, BandedToeplitz])
def test_horizon_refuses_more_records(cls):
    mech = make(cls, horizon=20)
    rng = np.random.default_rng(0)
    mech.add_block(data(15, 3), rng)
    state, estimate = copy.deepcopy(rng.bit_generator.state), mech.estimate()
    with pytest.raises(PrivacyBudgetExceeded, match="horizon"):
        mech.add_block(data(6, 3), rng)
    assert mech.n_seen == 15 and rng.bit_generator.state == state and np.array_equal(mech.estimate(), estimate)
    mech.add_block(data(5, 3), rng)
    with pytest.raises(ValueError, match="horizon"):
        mech.add_block(data(1, 3), rng)
    assert mech.n_seen == 20
    assert mech.add_block(np.zeros((0, 3)), rng, return_estimates=True).shape == (0, 3)


def test_inputs_are_converted_and_not_modified():
    V = np.asfortranarray(data(20, 3))
    V_int = np.arange(60).reshape(20, 3)
    kept = V.copy()
    a = run(make(BandedToeplitz), V, seed=1)
    b = run(make(BandedToeplitz), np.ascontiguousarray(V), seed=1)
    assert np.array_equal(a, b) and np.array_equal(V, kept)
    c = run(make(TreeAggregation), V_int, seed=1)
    d = run(make(TreeAggregation), V_int.astype(float).tolist(), seed=1)
    assert np.array_equal(c, d)


@pytest.mark.parametrize("cls, kwargs", [(TreeAggregation, dict()), (BandedToeplitz, dict(band=32))])
def test_memory_is_flat_over_a_million_records(cls, kwargs):
    mech = cls(dim=1, sensitivity=1.0, rho=1.0, **kwargs)
    rng = np.random.default_rng(0)
    mech.add_block(np.ones((10, 1)), rng)
    sizes = {k: (v.shape, v.nbytes) for k, v in mech.to_state()[1].items()}
    internal = {k: v.nbytes for k, v in vars(mech).items() if isinstance(v, np.ndarray)}
    for _ in range(4):
        mech.add_block(np.ones((250_000, 1)), rng)
    assert mech.n_seen == 1_000_010
    assert {k: (v.shape, v.nbytes) for k, v in mech.to_state()[1].items()} == sizes
    assert {k: v.nbytes for k, v in vars(mech).items() if isinstance(v, np.ndarray)} == internal
    assert len(mech.privacy_rows()) <= 63
    assert abs(mech.estimate()[0] - 1_000_010) < 50 * math.sqrt(mech.variance())


# -- reports ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls, kwargs", CONFIGS, ids=IDS)
def test_describe_and_privacy_rows(cls, kwargs):
    mech = make(cls, **kwargs)
    mech.add_block(data(77, 3), np.random.default_rng(0))
    d = mech.describe()
    assert {"kind", "dim", "sensitivity", "rho", "horizon", "n_seen", "kappa2", "rho_spent_bound"} <= set(d)
    assert d["rho_spent_bound"] <= mech.rho and d["n_seen"] == 77
    rows = mech.privacy_rows()
    assert all({"what", "level", "nodes_released", "sigma", "rho"} <= set(r) for r in rows)
    assert math.fsum(r["rho"] for r in rows) <= mech.rho
    if cls is TreeAggregation:
        assert [r["nodes_released"] for r in rows][:3] == [77, 38, 19]
        assert len(rows) == (mech.levels if mech.horizon else 7)
    else:
        assert len(rows) == 1 and rows[0]["nodes_released"] == 77
    assert cls.__name__ in repr(mech)
    assert type(mech)(**mech.get_params()).describe()["sigma"] == d["sigma"]


@pytest.mark.parametrize("cls", [TreeAggregation, BandedToeplitz])
def test_refuses_copies(cls):
    mech = make(cls)
    for action in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="to_state"):
            action(mech)


@pytest.mark.parametrize("cls, name", [(TreeAggregation, "rho"), (TreeAggregation, "sensitivity"),
                                       (TreeAggregation, "estimate_kind"), (TreeAggregation, "levels"),
                                       (BandedToeplitz, "band"), (BandedToeplitz, "kappa2"),
                                       (BandedToeplitz, "horizon"), (BandedToeplitz, "dim")])
def test_calibrated_parameters_are_read_only(cls, name):
    """The noise was calibrated to them: changing one afterwards would misreport the cost."""
    mech = make(cls)
    with pytest.raises(AttributeError):
        setattr(mech, name, 1)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_long_blocks_work_in_a_forked_child(monkeypatch):
    """A block of several chunks draws its next chunk in a helper thread; a forked child inherits the
    executor without its thread and must make its own (else it would wait forever)."""
    monkeypatch.setattr(continual.base, "CHUNK_VALUES", 30)
    V = data(100, 3)
    expected = run(make(BandedToeplitz), V, seed=4)  # the parent's helper thread now exists
    pid = os.fork()
    if pid == 0:  # child: report through the exit status, never return into pytest
        code = 1
        try:
            signal.alarm(20)
            code = 0 if np.array_equal(run(make(BandedToeplitz), V, seed=4), expected) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
