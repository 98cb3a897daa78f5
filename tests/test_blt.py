"""Tests of the buffered-linear-Toeplitz mechanism (onpair.privacy.continual.blt).

The mechanism is linear in the data and in the noise, so it is read off exactly: fed through ``_apply``
with chosen standard normals and k unit streams as k columns, its releases give the data map and the
noise map as matrices, compared with the dense definitions of ``naive_blt`` (series division, dense
inverse), with dp-accounting and with the closed forms. Seeds and significance levels are fixed.
"""

import copy
import json
import math
import pickle

import dp_accounting
import numpy as np
import pytest
from dp_accounting import rdp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import naive_blt as naive
from onpair.privacy.continual import base, blt
from onpair.privacy.continual._blt_kernels import _blt_add_block, blt_record
from onpair.privacy.continual.blt import (
    FIT_MAX_BUFFERS,
    FIT_TOLERANCE,
    HORIZON_FITS,
    MAX_BUFFERS,
    UNBOUNDED_FIT,
    BLTParameters,
    BufferedToeplitz,
    fitted_parameters,
)
from onpair.privacy.continual import MAX_RECORDS, PrefixSumMechanism, sqrt_toeplitz_coefficients
from onpair.privacy.exceptions import PrivacyBudgetExceeded

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=40,
                    suppress_health_check=[HealthCheck.too_slow])
ALPHA = 0.001
ORDERS = np.array([1.25, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0, 256.0])
GIVEN = dict(decays=[0.97, 0.6, 0.2], inverse_decays=[0.8, 0.3, 0.05])

# every configuration the generic tests run on: stored fits (horizon, unbounded) and given decays
CONFIGS = [dict(), dict(horizon=200), dict(horizon=20_000), dict(GIVEN), dict(GIVEN, horizon=60),
           dict(horizon=60, final_share=0.3)]
IDS = ["unbounded", "horizon-200", "horizon-20000", "given", "given-horizon-60", "final-share-60"]


def make(dim=3, sensitivity=1.5, rho=0.7, **kwargs):
    return BufferedToeplitz(dim=dim, sensitivity=sensitivity, rho=rho, **kwargs)


def data(n, k, seed=0):
    return np.random.default_rng(seed).standard_normal((n, k))


def run(mech, V, seed):
    return mech.add_block(V, np.random.default_rng(seed), return_estimates=True)


def linear_maps(T, **kwargs):
    """(data map (T, T), noise map (T, T), mechanism) of a fresh mechanism over T records: column q of the
    data map is the release sequence of the unit stream e_q with zero noise; column r of the noise map the
    release sequence of zero data with the r-th standard normal set to 1."""
    mech = BufferedToeplitz(dim=T, sensitivity=1.0, rho=1.0, **kwargs)
    out = np.empty((T, T))
    mech._apply(np.eye(T), np.zeros((T, T)), out)
    noise_mech = BufferedToeplitz(dim=T, sensitivity=1.0, rho=1.0, **kwargs)
    noise_out = np.empty((T, T))
    noise_mech._apply(np.zeros((T, T)), np.eye(T), noise_out)
    return out, noise_out, mech


@st.composite
def interlaced(draw, max_buffers=5, min_gap=1e-3):
    """Random valid decays: 2m distinct values in (0, 1), at least ``min_gap`` apart, alternating θ, θ'."""
    m = draw(st.integers(1, max_buffers))
    values = draw(st.lists(st.floats(min_gap, 1.0 - min_gap), min_size=2 * m, max_size=2 * m, unique=True))
    values = np.sort(np.array(values))[::-1]
    if np.any(-np.diff(values) < min_gap):
        values = 1.0 - np.geomspace(min_gap, 1.0 - min_gap, 2 * m)  # a valid fallback of the same size
    return values[0::2].tolist(), values[1::2].tolist()


# -- construction -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, error, words", [
    (dict(dim=0), ValueError, "dim"),
    (dict(dim=2.0), TypeError, "dim"),
    (dict(sensitivity=0.0), ValueError, "sensitivity"),
    (dict(sensitivity=float("nan")), ValueError, "sensitivity"),
    (dict(sensitivity="1"), TypeError, "sensitivity"),
    (dict(rho=0.0), ValueError, "rho"),
    (dict(rho=None), TypeError, "rho"),
    (dict(horizon=0), ValueError, "horizon"),
    (dict(horizon=10.0), TypeError, "horizon"),
    (dict(horizon=MAX_RECORDS + 1), ValueError, "horizon"),
    (dict(decays=[0.5]), ValueError, "both"),
    (dict(inverse_decays=[0.5]), ValueError, "both"),
    (dict(decays=[0.5, 0.2], inverse_decays=[0.3]), ValueError, "as many"),
    (dict(decays=[], inverse_decays=[]), ValueError, "between 1"),
    (dict(decays=[0.9] * (MAX_BUFFERS + 1), inverse_decays=[0.5] * (MAX_BUFFERS + 1)), ValueError, "between 1"),
    (dict(decays=[0.5], inverse_decays=[0.6]), ValueError, "interlace"),      # θ' above θ
    (dict(decays=[1.0], inverse_decays=[0.5]), ValueError, "interlace"),      # θ = 1: κ² infinite
    (dict(decays=[0.5], inverse_decays=[0.0]), ValueError, "interlace"),
    (dict(decays=[0.5], inverse_decays=[-0.1]), ValueError, "interlace"),
    (dict(decays=[0.5], inverse_decays=[0.5]), ValueError, "interlace"),
    (dict(decays=[0.9, 0.5], inverse_decays=[0.4, 0.3]), ValueError, "interlace"),
    (dict(decays=[0.5, 0.9], inverse_decays=[0.3, 0.7]), ValueError, "interlace"),  # not descending
    (dict(decays=[float("nan")], inverse_decays=[0.5]), ValueError, "NaN"),
    (dict(decays=[0.9], inverse_decays=[float("inf")]), ValueError, "NaN"),
    (dict(decays=0.5, inverse_decays=0.2), TypeError, "sequence"),
    (dict(decays="0.5", inverse_decays="0.2"), TypeError, "sequence"),
    (dict(decays=["0.5"], inverse_decays=[0.2]), TypeError, "real"),
    (dict(decays=[True], inverse_decays=[0.2]), TypeError, "real"),
    (dict(decays=[0.5], inverse_decays=[None]), TypeError, "real"),
])
def test_constructor_rejects(kwargs, error, words):
    args = dict(dim=2, sensitivity=1.0, rho=1.0)
    args.update(kwargs)
    with pytest.raises(error, match=words):
        BufferedToeplitz(**args)


def test_constructor_takes_keywords_only_and_numpy_values():
    with pytest.raises(TypeError):
        BufferedToeplitz(2, 1.0, 1.0)
    a = BufferedToeplitz(dim=np.int64(2), sensitivity=np.float32(1.5), rho=np.float64(0.5),
                         decays=np.array([0.9, 0.4]), inverse_decays=(np.float32(0.6), 0.1))
    b = BufferedToeplitz(dim=2, sensitivity=1.5, rho=0.5, decays=[0.9, 0.4], inverse_decays=[float(np.float32(0.6)), 0.1])
    assert a.describe() == b.describe()
    assert json.loads(json.dumps(a.get_params())) == a.get_params()


def test_registered_by_kind():
    assert PrefixSumMechanism._registry["buffered_toeplitz"] is BufferedToeplitz
    import onpair.privacy as privacy
    assert privacy.BufferedToeplitz is BufferedToeplitz


# -- the factorisation ---------------------------------------------------------------------------------
@SETTINGS
@given(params=interlaced())
def test_inverse_is_the_inverse_and_signs_hold(params):
    """C·C⁻¹ = I (the coefficient series convolve to the unit), both agree with the naive series division,
    ω > 0 and ω' < 0 (what the interlacing guarantees), and β = the running sums of C⁻¹'s coefficients."""
    p = BLTParameters(*params)
    n = 300
    c, g = p.coefficients(n), p.inverse_coefficients(n)
    unit = np.zeros(n)
    unit[0] = 1.0
    np.testing.assert_allclose(np.convolve(c, g)[:n], unit, atol=1e-12)
    np.testing.assert_allclose(c, naive.coefficients(*params, n), rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(g, naive.inverse_coefficients(*params, n), rtol=1e-9, atol=1e-14)
    assert np.all(p.output_scales > 0) and np.all(p.inverse_output_scales < 0)
    assert np.all(np.diff(c[1:]) <= 1e-15) and np.all(g[1:] <= 0)  # c decreasing; C⁻¹ below zero (or underflowed)
    np.testing.assert_allclose(p.decoder_coefficients(n), np.cumsum(g), rtol=1e-10, atol=1e-13)


@SETTINGS
@given(params=interlaced(), gamma=st.sampled_from([1.0, 0.999, 0.9, 0.5]))
def test_closed_forms_equal_direct_sums(params, gamma):
    """κ², Σ_{n<t} β_n² and its mean over the releases: closed forms against direct sums of the series."""
    p = BLTParameters(*params)
    if np.any(np.asarray(params[1]) == gamma):
        return
    n = 400
    c = p.coefficients(n)
    beta = naive.series_ratio(naive.polynomial(params[0]), naive.polynomial(list(params[1]) + [gamma]), n)
    np.testing.assert_allclose(p.decoder_coefficients(n, gamma), beta, rtol=1e-9, atol=1e-13)
    cum_c, cum_b = np.cumsum(c**2), np.cumsum(beta**2)
    for t in (1, 2, 7, 100, 399, 400):
        assert math.isclose(p.sensitivity_squared(t), cum_c[t - 1], rel_tol=1e-10)
        assert math.isclose(p.error_sum(t, gamma), cum_b[t - 1], rel_tol=1e-10)
        assert math.isclose(p.mean_error_sum(t, gamma), cum_b[:t].mean(), rel_tol=1e-10)
    np.testing.assert_allclose(p.error_sum(np.array([3.0, 50.0]), gamma), cum_b[[2, 49]], rtol=1e-10)


@pytest.mark.parametrize("u", [1e-4, 1e-7, 1e-9])
def test_closed_forms_near_one(u):
    """Decays within 1e-9 of 1 (the fits of long horizons): the closed forms keep their precision, where
    (1 − x^t)/(1 − x) in plain arithmetic would lose it (direct sums over 3·10⁶ terms as the reference)."""
    p = BLTParameters([1 - u, 1 - 30 * u, 0.5], [1 - 3 * u, 1 - 100 * u, 0.1])
    n = 3_000_000
    beta = p.decoder_coefficients(n)  # β_n = Σ a_p λ_p^n, evaluated term by term
    c = p.coefficients(n)
    cum_b = np.cumsum(beta**2)
    for t in (10, 1000, n):
        assert math.isclose(p.error_sum(t), cum_b[t - 1], rel_tol=1e-9)
        assert math.isclose(p.sensitivity_squared(t), math.fsum(c[:t] ** 2), rel_tol=1e-9)
    assert math.isclose(p.mean_error_sum(n), math.fsum(cum_b) / n, rel_tol=1e-9)
    assert math.isclose(p.mean_error_sum(1), 1.0, rel_tol=1e-15)


def test_private_helpers_exact_at_the_edges():
    one_minus, logs = blt._pair_logs(np.array([0.0, 0.5]))
    g = blt._geometric_sums(one_minus, logs, 5.0)
    assert g[0, 0] == 5.0 and math.isclose(g[1, 1], sum(0.25**n for n in range(5)), rel_tol=1e-15)
    h = blt._weighted_geometric_sums(one_minus, logs, 5.0)
    assert h[0, 0] == 15.0 and math.isclose(h[0, 1], sum((5 - n) * 0.5**n for n in range(5)), rel_tol=1e-14)
    y = np.array([-1e-3, -0.5, -3.0, -50.0])
    np.testing.assert_allclose(blt._phi2(y), [(math.expm1(v) - v) / v**2 if v < -0.1 else
                                              sum(v**k / math.factorial(k + 2) for k in range(12)) for v in y],
                               rtol=1e-14)


# -- the kernel against the dense definition ---------------------------------------------------------
@pytest.mark.parametrize("kwargs", [dict(GIVEN), dict(GIVEN, horizon=40), dict(horizon=40), dict(),
                                    dict(decays=[0.5], inverse_decays=[0.25])])
def test_releases_match_naive(kwargs):
    T, k = 40, 3
    V, Z = data(T, k, seed=1), data(T, k, seed=2)
    mech = make(**kwargs)
    sigma = mech.describe()["sigma"]
    out = np.empty((T, k))
    mech._apply(V.copy(), Z.copy(), out)
    p = mech.parameters
    expected, variances = naive.prefixes(V, p.decays, p.inverse_decays, sigma, Z)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T + 1)], variances, rtol=1e-9)
    assert np.array_equal(mech.estimate(), out[-1])


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_record_kernel_matches_naive_and_the_block_kernel(gamma):
    """The single-record kernel, with the workload decay the class keeps at 1 (decayed sums, issue 25)."""
    p = BLTParameters(**GIVEN)
    T, k = 30, 4
    V, Z = data(T, k, seed=3), data(T, k, seed=4)
    state = [np.zeros((p.buffers, k)), np.zeros(k), np.zeros(k)]
    released = []
    for t in range(T):
        y = Z[t].copy()
        blt_record(V[t], y, p.output_scales, p.decays, gamma, *state)
        released.append(state[1] + 2.0 * state[2])
    expected, _ = naive.prefixes(V, p.decays, p.inverse_decays, 2.0, Z, decay=gamma)
    np.testing.assert_allclose(np.array(released), expected, rtol=1e-10, atol=1e-10)
    block = [np.zeros((p.buffers, k)), np.zeros(k), np.zeros(k)]
    out = np.empty((T, k))
    _blt_add_block(V, Z.copy(), p.output_scales, p.decays, gamma, 2.0, *block, out)
    assert all(np.array_equal(a, b) for a, b in zip(state, block))
    assert np.array_equal(out, np.array(released))


# -- cost ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [dict(GIVEN, horizon=45), dict(horizon=64), dict(horizon=37),
                                    dict(decays=[0.5], inverse_decays=[0.25], horizon=30)])
def test_cost_by_brute_force_column_norms(kwargs):
    """Releases = A·V + σ·B·Z: the data map is A exactly, C = (B)⁻¹A is what the releases post-process
    (C·V + σZ), and its largest column norm² over every column equals κ²; so Δ²κ²/(2σ²) ≤ ρ. The naive
    dense C (series division) gives the same κ²."""
    T = kwargs["horizon"]
    A_emp, noise_map, mech = linear_maps(T, **kwargs)
    assert np.array_equal(A_emp, np.tril(np.ones((T, T))))
    sigma = mech.describe()["sigma"]
    C = np.linalg.solve(noise_map / sigma, A_emp)
    np.testing.assert_allclose(np.tril(C), C, atol=1e-9)
    kappa2 = naive.largest_column_norm2(C)
    p = mech.parameters
    _, C_naive, _ = naive.matrices(T, p.decays, p.inverse_decays)
    np.testing.assert_allclose(C, C_naive, atol=1e-9)
    assert math.isclose(kappa2, naive.largest_column_norm2(C_naive), rel_tol=1e-9)
    assert math.isclose(kappa2, mech.kappa2, rel_tol=1e-9)
    assert 0.5 * kappa2 / sigma**2 <= mech.rho * (1 + 1e-9)


@pytest.mark.parametrize("kwargs", [dict(), dict(GIVEN)])
def test_unbounded_cost_bounds_every_prefix_of_columns(kwargs):
    """Unbounded: the column norms of a stream cut at T grow with T towards κ²(∞), never above it."""
    mech = make(**kwargs)
    p = mech.parameters
    previous = 0.0
    for T in (10, 100, 1000, 10**5, 10**7):
        cut = p.sensitivity_squared(T)
        assert previous <= cut <= mech.kappa2
        previous = cut
    c = p.coefficients(200_000)
    tail = p.sensitivity_squared() - p.sensitivity_squared(200_000)
    assert math.isclose(mech.kappa2, math.fsum(c**2) + tail, rel_tol=1e-12)


@pytest.mark.parametrize("kwargs", [dict(), dict(horizon=1), dict(horizon=1000), dict(GIVEN), dict(GIVEN, horizon=7)])
def test_cost_by_dp_accounting(kwargs):
    delta, rho = 2.0, 0.3
    mech = BufferedToeplitz(dim=1, sensitivity=delta, rho=rho, **kwargs)
    d = mech.describe()
    acc = rdp.RdpAccountant(ORDERS)
    acc.compose(dp_accounting.GaussianDpEvent(d["sigma"] / (delta * math.sqrt(d["kappa2"]))))
    assert np.all(acc._rdp <= ORDERS * rho)
    np.testing.assert_allclose(acc._rdp, ORDERS * rho, rtol=1e-8)
    np.testing.assert_allclose(acc._rdp, ORDERS * d["rho_spent_bound"], rtol=1e-12)


def test_horizon_one_is_one_gaussian_release():
    mech = BufferedToeplitz(dim=1, sensitivity=1.0, rho=0.5, horizon=1)
    assert mech.kappa2 == 1.0 and math.isclose(mech.variance(1), 1.0, rel_tol=1e-8)


# -- error ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", CONFIGS[:2] + CONFIGS[3:5], ids=IDS[:2] + IDS[3:5])
def test_variance_equals_brute_force_covariance(kwargs):
    T = min(kwargs.get("horizon", 60), 60)
    _, noise_map, mech = linear_maps(T, **kwargs)
    brute = (noise_map**2).sum(axis=1)
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T + 1)], brute, rtol=1e-9)
    assert mech.variance(0) == 0.0


def test_variance_at_any_t_and_refusals():
    mech = make(horizon=1000)
    p = mech.parameters
    beta = p.decoder_coefficients(1000)
    sigma2 = mech.describe()["sigma"] ** 2
    for t in (1, 2, 999, 1000):
        assert math.isclose(mech.variance(t), sigma2 * math.fsum(beta[:t] ** 2), rel_tol=1e-10)
    with pytest.raises(ValueError, match="t"):
        mech.variance(1001)
    with pytest.raises(TypeError, match="t"):
        mech.variance(2.0)
    unbounded = make()
    assert np.isfinite(unbounded.variance(MAX_RECORDS)) and unbounded.variance(MAX_RECORDS) > unbounded.variance(10**9)


@pytest.mark.parametrize("kwargs", [dict(), dict(horizon=32), dict(GIVEN), dict(horizon=32, final_share=0.5)])
def test_empirical_variance_chi_square(kwargs):
    """4,000 independent coordinates of zero data: Σ_q x_q²/var(t) ~ χ²(4000) at each t checked,
    two-sided at α = 0.001 (Bonferroni over the t checked)."""
    T, k = 32, 4000
    mech = BufferedToeplitz(dim=k, sensitivity=1.0, rho=1.0, **kwargs)
    out = run(mech, np.zeros((T, k)), seed=11)
    checked = [1, 2, 3, 7, 16, 21, 31, 32]
    for t in checked:
        stat = float((out[t - 1] ** 2).sum() / mech.variance(t))
        p = 2 * min(stats.chi2.cdf(stat, k), stats.chi2.sf(stat, k))
        assert p > ALPHA / len(checked), (t, stat, p)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=IDS)
def test_zero_noise_gives_exact_prefix_sums(kwargs):
    mech = make(**kwargs)
    mech._sigma = 0.0
    mech._final_sigma = 0.0  # the release at the horizon too (then the combination is that exact total)
    V = data(min(kwargs.get("horizon", 50), 50), 3, seed=5)
    np.testing.assert_allclose(run(mech, V, seed=0), np.cumsum(V, axis=0), rtol=1e-12, atol=1e-12)


# -- the stored fits -----------------------------------------------------------------------------------
def sqrt_last_prefix_std(T):
    """The exact square root's last prefix: κ² = Σ_{n<T} r_n² is also its Σβ², so its std ratio is κ²."""
    r = sqrt_toeplitz_coefficients(T)
    return math.fsum(r * r)


def test_stored_fits_are_valid_and_within_the_tolerance():
    assert sorted(HORIZON_FITS) == [2**j for j in range(1, len(HORIZON_FITS) + 1)]
    for T, (decays, inverse) in HORIZON_FITS.items():
        p = BLTParameters(decays, inverse)
        assert p.buffers <= FIT_MAX_BUFFERS
        if T <= 2**21:
            ratio = math.sqrt(p.sensitivity_squared(T) * p.error_sum(T)) / sqrt_last_prefix_std(T)
            assert 0.99 < ratio <= 1.0 + FIT_TOLERANCE + 1e-9, (T, ratio)
    BLTParameters(*UNBOUNDED_FIT)


@pytest.mark.parametrize("T, limit", [(20_000, 1.2), (10**6, 1.3)])
def test_issue_targets(T, limit):
    """Issue 22's targets, for the known horizon and the unbounded fit: last prefix within the limit of the
    square root's standard deviation; mean over the prefixes (root mean square) within 1.1× at 20,000."""
    ref_last = sqrt_last_prefix_std(T)
    r = sqrt_toeplitz_coefficients(T)
    ref_mean = math.sqrt(ref_last * float(np.mean(np.cumsum(r * r))))
    for horizon in (T, None):
        mech = BufferedToeplitz(dim=1, sensitivity=1.0, rho=0.5, horizon=horizon)
        k2, p = mech.kappa2, mech.parameters
        assert math.sqrt(k2 * p.error_sum(T)) <= limit * ref_last
        if horizon is not None and T == 20_000:
            assert math.sqrt(k2 * p.mean_error_sum(T)) <= 1.1 * ref_mean


def test_fitted_parameters_rule():
    stored = sorted(HORIZON_FITS)
    for horizon, expected in [(1, 2), (2, 2), (3, 4), (20_000, 32_768), (32_768, 32_768), (32_769, 65_536),
                              (stored[-1] + 1, stored[-1]), (MAX_RECORDS, stored[-1])]:
        p, label = fitted_parameters(horizon)
        assert label == f"horizon {expected}"
        assert p.decays.tolist() == list(HORIZON_FITS[expected][0])
    p, label = fitted_parameters(None)
    assert label == "unbounded" and p.inverse_decays.tolist() == list(UNBOUNDED_FIT[1])
    mech = make(horizon=20_000)
    assert mech.describe()["fit"] == "horizon 32768" and mech.kappa2 == mech.parameters.sensitivity_squared(20_000)


# -- blocks, state, generators ----------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", CONFIGS, ids=IDS)
def test_add_one_equals_add_block_bit_for_bit(kwargs, monkeypatch):
    monkeypatch.setattr(base, "CHUNK_VALUES", 7)  # force many chunks (and the helper thread) in a block
    V = data(60, 3, seed=6)
    whole = make(**kwargs)
    out_whole = run(whole, V, seed=9)
    singles = make(**kwargs)
    rng = np.random.default_rng(9)
    rows = []
    for i in range(60):
        singles.add_one(V[i], rng)
        rows.append(singles.estimate())
    assert np.array_equal(out_whole, np.array(rows))
    blocks_of_one = make(**kwargs)
    rng = np.random.default_rng(9)
    out_ones = np.vstack([blocks_of_one.add_block(V[i:i + 1], rng, return_estimates=True) for i in range(60)])
    assert np.array_equal(out_whole, out_ones)
    assert all(np.array_equal(a, b) for a, b in zip(whole.to_state()[1].values(), singles.to_state()[1].values()))


def test_add_one_converts_and_checks_like_add_block():
    a, b = make(**GIVEN), make(**GIVEN)
    ra, rb = np.random.default_rng(1), np.random.default_rng(1)
    a.add_one([1, 2, 3], ra)
    b.add_one(np.array([1.0, 2.0, 3.0], dtype=np.float32), rb)
    assert np.array_equal(a.estimate(), b.estimate())
    state = copy.deepcopy(ra.bit_generator.state)
    for v, error in [(np.array([1.0, np.nan, 0.0]), ValueError), (np.ones(4), ValueError), (np.ones((1, 3)), ValueError),
                     (np.array([1e200, 0.0, 0.0]), ValueError), (np.array(["a", "b", "c"]), TypeError)]:
        with pytest.raises(error):
            a.add_one(v, ra)
    with pytest.raises(TypeError, match="Generator"):
        a.add_one(np.ones(3), np.random.RandomState(0))
    assert ra.bit_generator.state == state and a.n_seen == 1


@SETTINGS
@given(cut=st.lists(st.integers(0, 90), max_size=4), config=st.sampled_from(range(len(CONFIGS))),
       seed=st.integers(0, 2**32 - 1))
def test_block_splitting_property(cut, config, seed):
    kwargs = CONFIGS[config]
    n = min(90, kwargs.get("horizon", 90))
    V = data(n, 2, seed=seed % 1000)
    reference = make(dim=2, **kwargs)
    expected = run(reference, V, seed)
    mech = make(dim=2, **kwargs)
    rng = np.random.default_rng(seed)
    bounds = [0] + sorted(min(c, n) for c in cut) + [n]
    parts = [mech.add_block(V[a:b], rng, return_estimates=True) for a, b in zip(bounds[:-1], bounds[1:])]
    assert np.array_equal(np.vstack(parts), expected)
    assert mech.n_seen == n and np.array_equal(mech.estimate(), reference.estimate())


def round_trip(mech):
    scalars, arrays = mech.to_state()
    scalars = json.loads(json.dumps(scalars))
    params = json.loads(json.dumps(mech.get_params()))
    return type(mech).from_state(params, scalars, arrays)


@SETTINGS
@given(stop=st.integers(0, 60), config=st.sampled_from(range(len(CONFIGS))), seed=st.integers(0, 2**32 - 1))
def test_state_round_trip_property(stop, config, seed):
    kwargs = CONFIGS[config]
    n = min(60, kwargs.get("horizon", 60))
    stop = min(stop, n)
    V = data(n, 2, seed=seed % 997)
    uninterrupted = make(dim=2, **kwargs)
    expected = run(uninterrupted, V, seed)
    rng = np.random.default_rng(seed)
    first = make(dim=2, **kwargs)
    head = first.add_block(V[:stop], rng, return_estimates=True)
    resumed = round_trip(first)
    assert resumed.n_seen == stop and np.array_equal(resumed.estimate(), first.estimate())
    assert resumed.variance() == first.variance()
    tail = resumed.add_block(V[stop:], rng, return_estimates=True)
    assert np.array_equal(np.vstack([head, tail]), expected)
    scalars, arrays = resumed.to_state()
    again = PrefixSumMechanism.from_state(resumed.get_params(), scalars, arrays)
    assert type(again) is BufferedToeplitz and np.array_equal(again.estimate(), resumed.estimate())


def _hostile_cases():
    def set_scalar(key, value):
        def edit(p, s, a):
            s[key] = value
        return edit

    def set_param(key, value):
        def edit(p, s, a):
            p[key] = value
            s["params"] = dict(s["params"], **{key: value})
        return edit

    def other_params(key, value):
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

    return [
        (30, set_scalar("n_seen", -1), "n_seen"),
        (30, set_scalar("n_seen", 61), "n_seen"),           # beyond the horizon
        (30, set_scalar("n_seen", 30.0), "n_seen"),
        (30, set_scalar("kind", "banded_toeplitz"), "does not name"),
        (30, set_scalar("extra", 1), "scalars"),
        (30, set_scalar("n_seen", 0), "zero"),
        (30, set_scalar("n_seen", 1), "differs"),           # after one record every buffer equals the noise sum
        (1, poke("buffers", (1, 0), 0.5), "differs"),
        (30, other_params("rho", 100.0), "parameters its noise was calibrated to"),
        (30, other_params("decays", [0.97, 0.6, 0.21]), "parameters its noise was calibrated to"),
        (30, set_param("decays", [0.97, 0.6]), "params"),
        (30, set_param("decays", [0.5, 0.6, 0.2]), "interlace"),
        (30, set_param("inverse_decays", None), "params"),
        (30, set_param("junk", 1), "params"),
        (30, poke("buffers", (1, 0), np.nan), "NaN"),
        (30, poke("prefix_sum", 0, np.inf), "NaN"),
        (30, replace("buffers", lambda x: x[:-1]), "shape"),
        (30, replace("buffers", lambda x: x.astype(np.float32)), "float64"),
        (30, replace("noise_sum", lambda x: x.tolist()), "float64"),
    ]


@pytest.mark.parametrize("n_seen, edit, words", _hostile_cases())
def test_hostile_state_is_refused(n_seen, edit, words):
    mech = make(dim=2, horizon=60, **GIVEN)
    mech.add_block(data(n_seen, 2), np.random.default_rng(0))
    scalars, arrays = mech.to_state()
    params = mech.get_params()
    edit(params, scalars, arrays)
    with pytest.raises(ValueError, match=words):
        BufferedToeplitz.from_state(params, scalars, arrays)


def test_a_state_resumes_only_with_the_decays_it_was_made_with():
    """The stored fit is resolved into the parameters: a state made under one table is refused by a
    mechanism built from another (its buffers would be read with other decays)."""
    mech = make(dim=2)
    mech.add_block(data(5, 2), np.random.default_rng(0))
    scalars, arrays = mech.to_state()
    assert scalars["params"]["decays"] == list(UNBOUNDED_FIT[0])
    other = dict(mech.get_params(), decays=GIVEN["decays"], inverse_decays=GIVEN["inverse_decays"])
    with pytest.raises(ValueError, match="calibrated"):
        BufferedToeplitz.from_state(other, scalars, arrays)


@pytest.mark.parametrize("kwargs", CONFIGS, ids=IDS)
def test_noise_only_from_the_given_generator(kwargs):
    V = data(40, 3, seed=8)
    np.random.seed(1)
    a = run(make(**kwargs), V, seed=123)
    np.random.seed(999)
    np.random.standard_normal(17)
    b = run(make(**kwargs), V, seed=123)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, run(make(**kwargs), V, seed=124))
    rng = np.random.default_rng(5)
    make(**kwargs).add_block(V, rng)
    reference = np.random.default_rng(5)
    reference.standard_normal((40, 3))  # one row of k normals per record
    assert rng.bit_generator.state == reference.bit_generator.state


@pytest.mark.parametrize("kwargs", CONFIGS, ids=IDS)
def test_failed_add_block_changes_nothing(kwargs):
    mech = make(**kwargs)
    rng = np.random.default_rng(3)
    mech.add_block(data(10, 3), rng)
    before_state, before_rng = mech.to_state(), copy.deepcopy(rng.bit_generator.state)
    bad = data(5, 3)
    bad[3, 1] = np.nan
    too_many = data(min(kwargs.get("horizon", 10), 10**6) - 9, 3)
    cases = [
        (bad, rng, ValueError, r"V\[3\]"),
        (np.where(np.isnan(bad), np.inf, bad), rng, ValueError, "inf"),
        (np.where(np.isnan(bad), 1e151, bad), rng, ValueError, "MAX_ENTRY"),
        (data(5, 4), rng, ValueError, "shape"),
        (data(5, 3)[None], rng, ValueError, "shape"),
        (data(5, 3).astype(complex), rng, TypeError, "real"),
        (data(5, 3), None, TypeError, "Generator"),
        (data(5, 3), np.random.RandomState(0), TypeError, "Generator"),
    ]
    if "horizon" in kwargs:
        cases.append((too_many, rng, PrivacyBudgetExceeded, "horizon"))
    for V, r, error, words in cases:
        with pytest.raises(error, match=words):
            mech.add_block(V, r)
        assert rng.bit_generator.state == before_rng
        after = mech.to_state()
        assert after[0] == before_state[0]
        assert all(np.array_equal(after[1][k], before_state[1][k]) for k in after[1])


def test_horizon_refuses_more_records():
    mech = make(horizon=20)
    rng = np.random.default_rng(0)
    mech.add_block(data(15, 3), rng)
    state, estimate = copy.deepcopy(rng.bit_generator.state), mech.estimate()
    with pytest.raises(PrivacyBudgetExceeded, match="horizon"):
        mech.add_block(data(6, 3), rng)
    assert mech.n_seen == 15 and rng.bit_generator.state == state and np.array_equal(mech.estimate(), estimate)
    mech.add_block(data(5, 3), rng)
    with pytest.raises(PrivacyBudgetExceeded, match="horizon"):
        mech.add_one(np.zeros(3), rng)
    assert mech.n_seen == 20 and rng.bit_generator.state != state


def test_memory_is_flat_over_a_million_records():
    mech = BufferedToeplitz(dim=1, sensitivity=1.0, rho=1.0)
    rng = np.random.default_rng(0)
    mech.add_block(np.ones((10, 1)), rng)
    sizes = {k: (v.shape, v.nbytes) for k, v in mech.to_state()[1].items()}
    internal = {k: v.nbytes for k, v in vars(mech).items() if isinstance(v, np.ndarray)}
    for _ in range(4):
        mech.add_block(np.ones((250_000, 1)), rng)
    assert mech.n_seen == 1_000_010
    assert {k: (v.shape, v.nbytes) for k, v in mech.to_state()[1].items()} == sizes
    assert {k: v.nbytes for k, v in vars(mech).items() if isinstance(v, np.ndarray)} == internal
    assert abs(mech.estimate()[0] - 1_000_010) < 50 * math.sqrt(mech.variance())


# -- reports ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", CONFIGS, ids=IDS)
def test_describe_and_privacy_rows(kwargs):
    mech = make(**kwargs)
    mech.add_block(data(17, 3), np.random.default_rng(0))
    d = mech.describe()
    assert {"kind", "dim", "sensitivity", "rho", "horizon", "n_seen", "kappa2", "rho_spent_bound", "sigma",
            "fit", "buffers", "decays"} <= set(d)
    assert d["kind"] == "buffered_toeplitz" and d["n_seen"] == 17
    assert mech.rho * (1 - 1e-8) <= d["rho_spent_bound"] <= mech.rho
    rows = mech.privacy_rows()
    assert len(rows) == 1 + bool(d["final_share"]) and rows[0]["nodes_released"] == 17
    assert math.isclose(math.fsum(r["rho"] for r in rows), d["rho_spent_bound"], rel_tol=1e-15)
    assert "BufferedToeplitz" in repr(mech)
    # the twin from get_params: the same description (a stored fit given back keeps its name, so that a
    # resumed snapshot reports what the original did)
    assert type(mech)(**mech.get_params()).describe() == dict(d, n_seen=0)


def test_refuses_copies():
    mech = make()
    for action in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="to_state"):
            action(mech)


@pytest.mark.parametrize("name", ["rho", "sensitivity", "kappa2", "horizon", "dim", "buffers", "parameters"])
def test_calibrated_parameters_are_read_only(name):
    with pytest.raises(AttributeError):
        setattr(make(), name, 1)


# -- a final share: one release of the total at the horizon -------------------------------------------------
def test_final_share_cost_noise_scales_and_combination():
    """(1 − φ)ρ for the factorisation, φρ for one release of the total (σ_f = Δ/√(2φρ)); the estimate at T is
    the inverse-variance combination of the two, with the variance v_c·v_f/(v_c + v_f); before T, the
    factorisation's release at (1 − φ)ρ (its variance 1/(1 − φ) times the one without a share)."""
    T, phi, delta, rho = 40, 0.25, 1.5, 0.7
    plain = BufferedToeplitz(dim=1, sensitivity=delta, rho=rho, horizon=T)
    mech = BufferedToeplitz(dim=1, sensitivity=delta, rho=rho, horizon=T, final_share=phi)
    d = mech.describe()
    assert math.isclose(d["final_sigma"], delta / math.sqrt(2 * phi * rho), rel_tol=1e-8)
    assert math.isclose(d["sigma"], plain.describe()["sigma"] / math.sqrt(1 - phi), rel_tol=1e-8)
    assert rho * (1 - 1e-8) <= d["rho_spent_bound"] <= rho
    rows = mech.privacy_rows()
    assert [r["kappa2"] for r in rows] == [plain.kappa2, 1.0]
    assert math.isclose(rows[0]["rho"], (1 - phi) * rho, rel_tol=1e-8) and math.isclose(rows[1]["rho"], phi * rho,
                                                                                      rel_tol=1e-8)
    # variance: brute force from the noise map, scaled to this σ
    _, noise_map, unit = linear_maps(T, horizon=T)  # σ_unit·B
    v_c = (d["sigma"] / unit.describe()["sigma"]) ** 2 * (noise_map ** 2).sum(axis=1)
    v_f = d["final_sigma"] ** 2
    np.testing.assert_allclose([mech.variance(t) for t in range(1, T)], v_c[:-1], rtol=1e-9)
    assert math.isclose(mech.variance(T), v_c[-1] * v_f / (v_c[-1] + v_f), rel_tol=1e-9)
    assert mech.variance(T) < min(v_c[-1], v_f)
    # the combination, from the state's own parts (zero data: the release before T and the final one)
    mech.add_block(np.zeros((T - 1, 1)), np.random.default_rng(4))
    before = mech.estimate().copy()
    assert not d["final_released"] and not mech.describe()["final_released"]
    mech.add_block(np.zeros((1, 1)), np.random.default_rng(5))
    stream = mech._noise_sum * mech._sigma  # what the factorisation releases at T (S_T = 0)
    final = mech._final
    w = v_f / (v_c[-1] + v_f)
    np.testing.assert_allclose(mech.estimate(), w * stream + (1 - w) * final, rtol=1e-12)
    assert mech.describe()["final_released"] and mech.privacy_rows()[1]["nodes_released"] == 1
    assert before.shape == (1,)


def test_final_share_cost_by_dp_accounting_and_event():
    """The two releases as one Gaussian mechanism (the final one is one more encoder row, (σ/σ_f)·1ᵀ): the
    event's κ² and σ give ρ through dp-accounting, equal to the budget."""
    from onpair.privacy.events import ContinualRelease

    delta, rho = 2.0, 0.3
    mech = BufferedToeplitz(dim=1, sensitivity=delta, rho=rho, horizon=100, final_share=0.4)
    d = mech.describe()
    event = ContinualRelease.of(mech)
    assert math.isclose(event.kappa2, d["kappa2"] + (d["sigma"] / d["final_sigma"]) ** 2, rel_tol=1e-15)
    acc = rdp.RdpAccountant(ORDERS)
    acc.compose(event.to_dp_event())
    np.testing.assert_allclose(acc._rdp, ORDERS * d["rho_spent_bound"], rtol=1e-12)
    assert np.all(acc._rdp <= ORDERS * rho)


def test_final_share_record_cost_against_the_explicit_encoder():
    """record_rho with a final share: (Δ²/2)·‖Σ_p E e_p‖² with E the stacked encoder [C/σ; 1ᵀ/σ_f] (dense,
    from naive_blt), for records at one and several positions."""
    from onpair.privacy.replay import record_rho, replay_rho

    T, delta, rho = 30, 1.0, 0.5
    mech = BufferedToeplitz(dim=1, sensitivity=delta, rho=rho, horizon=T, final_share=0.3)
    d = mech.describe()
    C = naive.toeplitz(naive.coefficients(d["decays"], d["inverse_decays"], T))
    E = np.vstack([C / d["sigma"], np.ones((1, T)) / d["final_sigma"]])
    for P in ([1], [T], [1, 11, 21], [3, 4], list(range(1, T + 1, 7))):
        column = E[:, np.array(P) - 1].sum(axis=1)
        assert math.isclose(record_rho(mech, P), 0.5 * delta ** 2 * float(column @ column), rel_tol=1e-10), P
    assert math.isclose(replay_rho(mech, 10, 3), record_rho(mech, [1, 11, 21]), rel_tol=1e-15)
    assert math.isclose(record_rho(mech, [1]), d["rho_spent_bound"], rel_tol=1e-10)


def test_final_share_refusals():
    with pytest.raises(ValueError, match="final_share"):
        BufferedToeplitz(dim=1, sensitivity=1.0, rho=1.0, final_share=0.2)  # no horizon
    for bad in (1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="final_share"):
            BufferedToeplitz(dim=1, sensitivity=1.0, rho=1.0, horizon=5, final_share=bad)
    with pytest.raises(TypeError, match="final_share"):
        BufferedToeplitz(dim=1, sensitivity=1.0, rho=1.0, horizon=5, final_share="0.2")
