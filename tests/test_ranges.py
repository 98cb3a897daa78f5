"""Tests of the private range finder (onpair.privacy.ranges).

The counts are checked against a loop twin; the sensitivity √(2d) of one level against sampled and
adversarial neighbouring blocks (every level's query is a range histogram over public intervals, so
arbitrary intervals cover every level); the cost against the per-level σ and against dp-accounting's PLD
accountant; coverage on data of known quantiles at a fixed significance level; hostile inputs; and, with
hypothesis, that the box never leaves the declared one and moves with the data (equivariance).
"""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from onpair.privacy import eps_from_rho, rho_from_dp
from onpair.privacy.ranges import (DEFAULT_BINS, DiscoveredBounds, find_bounds, planned_levels, range_histograms,
                                   records_needed)

SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=60)
RHO_RANGE = 0.2 * rho_from_dp(1.0, 1e-5, method="gaussian")


def naive_histograms(X, lower, upper, n_bins):
    """One loop per record and feature: the bin of v is ⌊(v − lower)/(upper − lower)·b⌋, the upper edge in the
    last bin, nothing outside [lower, upper]."""
    m, d = X.shape
    counts = np.zeros((d, n_bins), dtype=np.int64)
    for i in range(m):
        for k in range(d):
            v = X[i, k]
            if lower[k] <= v <= upper[k]:
                j = int(math.floor((v - lower[k]) / (upper[k] - lower[k]) * n_bins))
                counts[k, min(j, n_bins - 1)] += 1
    return counts


# -- the counts ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n_bins", [2, 7, 32, 64])
def test_histograms_match_the_loop_twin(n_bins):
    rng = np.random.default_rng(n_bins)
    lower = rng.uniform(-5, 0, 4)
    upper = lower + rng.uniform(0.1, 5, 4)
    X = rng.uniform(-6, 6, (300, 4))
    X[:5] = lower  # the edges
    X[5:10] = upper
    counts = range_histograms(X, lower, upper, n_bins)
    np.testing.assert_array_equal(counts, naive_histograms(X, lower, upper, n_bins))
    inside = ((X >= lower) & (X <= upper)).sum(axis=0)
    np.testing.assert_array_equal(counts.sum(axis=1), inside)  # each record at most once per feature


# -- sensitivity: sampled and adversarial neighbouring blocks ------------------------------------------------

def _squared_change(X, Y, lower, upper, n_bins):
    diff = range_histograms(Y, lower, upper, n_bins) - range_histograms(X, lower, upper, n_bins)
    return float(np.sum(diff.astype(float) ** 2))


@pytest.mark.parametrize("d", [1, 3, 10])
def test_level_sensitivity_sampled_neighbours(d):
    """‖h(X') − h(X)‖² ≤ 2d for random blocks, random public intervals (inside, overlapping or missing the
    data: every level's query) and random replacements."""
    rng = np.random.default_rng(d)
    worst = 0.0
    for _ in range(300):
        m, b = int(rng.integers(1, 40)), int(rng.integers(2, 70))
        X = rng.normal(0, 3, (m, d))
        lower = rng.uniform(-6, 3, d)
        upper = lower + rng.uniform(1e-3, 6, d)
        Y = X.copy()
        i = int(rng.integers(m))
        Y[i] = rng.normal(0, 3, d) if rng.random() < 0.5 else rng.uniform(lower, upper)
        worst = max(worst, _squared_change(X, Y, lower, upper, b))
        assert worst <= 2 * d
    assert worst > 0


@pytest.mark.parametrize("d", [1, 4, 25])
def test_level_sensitivity_adversarial_neighbours(d):
    """The bound 2d is attained (first bin ↔ last bin of every feature); a record leaving every interval
    changes d counts; replacing a record by itself changes nothing."""
    lower, upper, b = np.zeros(d), np.full(d, 10.0), 32
    X = np.vstack([np.full(d, 0.0), np.full(d, 5.0)])
    Y = X.copy()
    Y[0] = 10.0
    assert _squared_change(X, Y, lower, upper, b) == 2 * d
    Y[0] = 11.0  # outside: counted nowhere
    assert _squared_change(X, Y, lower, upper, b) == d
    assert _squared_change(X, X.copy(), lower, upper, b) == 0
    # every pair of (first, last, outside, same-bin) replacements stays within 2d
    candidates = [0.0, 0.1, 5.0, 9.99, 10.0, -1.0, 12.0]
    for u in candidates:
        for v in candidates:
            A, B = X.copy(), X.copy()
            A[0], B[0] = u, v
            assert _squared_change(A, B, lower, upper, b) <= 2 * d


# -- the cost ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("d, m", [(1, 300), (5, 500), (18, 500), (60, 500)])
def test_cost_is_the_sum_of_the_levels(d, m):
    X = np.random.default_rng(d).normal(400, 1, (m, d))
    found = find_bounds(X, 0.0, 1000.0, RHO_RANGE, random_state=0)
    assert len(found.sigmas) == planned_levels(m, d, RHO_RANGE) == found.params["levels_run"]
    per_level = [d / s ** 2 for s in found.sigmas]  # Δ²/(2σ²) with Δ² = 2d
    assert found.rho == pytest.approx(sum(per_level), rel=1e-12)
    assert found.rho <= RHO_RANGE
    assert found.rho >= RHO_RANGE * (1 - 1e-8)  # the plan spends its share
    rows = found.describe()["releases"]
    assert [r["sensitivity"] for r in rows] == [math.sqrt(2 * d)] * len(rows)
    assert sum(r["rho"] for r in rows) == pytest.approx(found.rho, rel=1e-12)
    # The reported cost is what the levels spent, not a cap: exactly the sum of the rows, and below the budget.
    assert found.rho == math.fsum(r["rho"] for r in rows) == found.describe()["rho_spent"]


@pytest.mark.parametrize("d", [2, 18])
def test_cost_against_dp_accounting(d):
    """The levels are Gaussian mechanisms of sensitivity √(2d): PLD accounting of their composition gives the
    ε that the exact "gaussian" conversion gives for the reported ρ."""
    X = np.random.default_rng(1).normal(0, 1, (500, d))
    found = find_bounds(X, -100.0, 100.0, RHO_RANGE, random_state=0)
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(s / math.sqrt(2 * d)) for s in found.sigmas]))
    for delta in (1e-5, 1e-3):
        ours = eps_from_rho(found.rho, delta, method="gaussian")
        theirs = accountant.get_epsilon(delta)
        assert ours == pytest.approx(theirs, rel=2e-3, abs=2e-3)


def test_no_level_when_no_bin_could_clear_its_threshold():
    """m = 1 (or d so large that one level's threshold exceeds the block): the declared box, cost 0."""
    X = np.array([[3.0, 4.0]])
    found = find_bounds(X, 0.0, 10.0, RHO_RANGE, random_state=0)
    assert found.rho == 0.0 and found.sigmas == () and found.fallback.all()
    np.testing.assert_array_equal(found.lower, [0.0, 0.0])
    np.testing.assert_array_equal(found.upper, [10.0, 10.0])
    assert planned_levels(500, 200, RHO_RANGE) == 0 and planned_levels(records_needed(200, RHO_RANGE, n_levels=1),
                                                                       200, RHO_RANGE) >= 1


def test_records_needed_is_the_smallest_block():
    for d in (2, 9, 18, 50):
        m = records_needed(d, RHO_RANGE)
        assert planned_levels(m, d, RHO_RANGE) == len(DEFAULT_BINS)
        assert planned_levels(m - 1, d, RHO_RANGE) < len(DEFAULT_BINS)
        for levels in (1, 2):  # and for fewer levels (one level runs as soon as its threshold fits the block)
            m = records_needed(d, RHO_RANGE, n_levels=levels)
            assert planned_levels(m, d, RHO_RANGE) >= levels > planned_levels(m - 1, d, RHO_RANGE)


def test_noise_draws_do_not_depend_on_the_data():
    """The same number of draws whatever the data (anchors found or not): the generator ends in one state."""
    states = []
    for X in (np.zeros((500, 3)), np.random.default_rng(0).uniform(0, 1000, (500, 3))):
        rng = np.random.default_rng(5)
        find_bounds(X, 0.0, 1000.0, RHO_RANGE, random_state=rng)
        states.append(rng.bit_generator.state["state"]["state"])
    assert states[0] == states[1]


# -- coverage on data of known quantiles ---------------------------------------------------------------------

def test_coverage_of_the_central_half_at_fixed_significance():
    """Gaussian features whose 0.5–99.5 % range fills 1/1000 of the box, at m = 500 and 20 % of the ρ of
    ε = 1: the box holds the true central half [q₀.₂₅, q₀.₇₅] of at least 90 % of the features (one-sided
    binomial test at level 10⁻³ over 80 seeded trials of 2 features)."""
    width = 1.0 / (2 * 2.5758)  # standard deviation: 0.5–99.5 % range = 1
    q = 0.6745 * width
    hits = trials = 0
    for seed in range(80):
        rng = np.random.default_rng([seed, 41])
        centre = rng.uniform(50, 950, 2)
        X = centre + width * rng.standard_normal((500, 2))
        found = find_bounds(X, 0.0, 1000.0, RHO_RANGE, random_state=[seed, 42])
        hits += int(np.sum((found.lower <= centre - q) & (found.upper >= centre + q)))
        trials += 2
    assert binom.cdf(hits, trials, 0.9) > 1e-3, f"{hits}/{trials} features hold their central half"


def test_coverage_and_width_without_noise():
    """With a vast budget every non-empty final bin clears the threshold: the box holds all of uniform data
    and is at most twice as wide as their range."""
    rng = np.random.default_rng(3)
    X = rng.uniform(400.0, 401.0, (5000, 3))
    found = find_bounds(X, 0.0, 1000.0, 1e12, random_state=0)
    assert np.all(found.lower <= X.min(axis=0)) and np.all(found.upper >= X.max(axis=0))
    assert np.all(found.upper - found.lower <= 2.0)


def test_the_example_of_the_issue_off_centre():
    """Data in [400, 410] of [0, 1000] (off the box's centre): a box of at most a few times their range."""
    rng = np.random.default_rng(4)
    X = rng.uniform(400.0, 410.0, (500, 2))
    found = find_bounds(X, 0.0, 1000.0, RHO_RANGE, random_state=1)
    assert np.all(found.shrink > 25) and not found.fallback.any()
    assert np.mean((X >= found.lower) & (X <= found.upper)) > 0.8


# -- hostile inputs -------------------------------------------------------------------------------------------

def test_nan_and_inf_are_errors_naming_record_and_feature():
    X = np.zeros((10, 3))
    X[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"X\[4, 2\].*record 4, feature 2"):
        find_bounds(X, 0.0, 1.0, 0.1)
    X[4, 2] = -np.inf
    with pytest.raises(ValueError, match="not finite"):
        find_bounds(X, 0.0, 1.0, 0.1)


def test_a_failed_call_spends_nothing():
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(ValueError):
        find_bounds(np.full((10, 2), np.nan), 0.0, 1.0, 0.1, random_state=rng)
    with pytest.raises(ValueError):
        find_bounds(np.zeros((10, 2)), 1.0, 0.0, 0.1, random_state=rng)
    assert rng.bit_generator.state == before


@pytest.mark.parametrize("value", [0.0, 1000.0, 512.25])
def test_constant_feature_and_values_at_a_bound(value):
    """Every value equal (at either bound or inside): a box of positive width inside the declared one that
    holds the value."""
    X = np.full((500, 2), value)
    found = find_bounds(X, 0.0, 1000.0, RHO_RANGE, random_state=0)
    assert np.all(found.lower <= value) and np.all(found.upper >= value)
    assert np.all(found.lower < found.upper) and np.all(found.lower >= 0.0) and np.all(found.upper <= 1000.0)
    assert np.all(found.shrink > 100)


def test_records_outside_the_box_are_clipped_to_it():
    X = np.full((500, 1), 5000.0)  # all above the declared upper bound 1000
    found = find_bounds(X, 0.0, 1000.0, RHO_RANGE, random_state=0)
    assert found.upper[0] == 1000.0 and found.lower[0] > 900.0


def test_a_box_at_the_resolution_of_float64():
    """A declared box a few ulps wide: the descent stops where the next box would not be representable."""
    lo = 1.0
    hi = lo + 64 * np.spacing(lo)
    X = np.full((500, 1), lo + 10 * np.spacing(lo))
    found = find_bounds(X, lo, hi, RHO_RANGE, random_state=0)
    assert lo <= found.lower[0] < found.upper[0] <= hi


@pytest.mark.parametrize("X, error", [
    (np.zeros((0, 2)), ValueError), (np.zeros((5, 0)), ValueError), (np.zeros(5), ValueError),
    (np.array([["a", "b"]]), TypeError), (np.array([[1 + 1j]]), TypeError), ([[object()]], TypeError)])
def test_bad_blocks(X, error):
    with pytest.raises(error):
        find_bounds(X, 0.0, 1.0, 0.1)


@pytest.mark.parametrize("kwargs, error", [
    ({"rho": 0.0}, ValueError), ({"rho": -1.0}, ValueError), ({"rho": math.nan}, ValueError),
    ({"lower": 1.0, "upper": 1.0}, ValueError), ({"lower": [0.0, 0.0, 0.0]}, ValueError),
    ({"upper": math.inf}, ValueError), ({"lower": "a"}, TypeError),
    ({"bins": (1,)}, ValueError), ({"bins": ()}, ValueError), ({"bins": (2.5,)}, TypeError), ({"bins": 32}, TypeError),
    ({"beta": 0.0}, ValueError), ({"beta": 1.0}, ValueError), ({"beta": True}, TypeError),
    ({"extend": -1.0}, ValueError), ({"margin": -1}, ValueError), ({"margin": 1.0}, TypeError),
    ({"final_margin": -1}, ValueError), ({"levels": 0}, ValueError), ({"levels": 9}, ValueError),
    ({"levels": "all"}, ValueError)])
def test_bad_parameters(kwargs, error):
    args = {"lower": 0.0, "upper": 1.0, "rho": 0.1, **kwargs}
    with pytest.raises(error):
        find_bounds(np.full((20, 2), 0.5), **args)


def test_the_report_and_the_result_type():
    X = np.random.default_rng(0).normal(400, 1, (500, 3))
    found = find_bounds(X, 0.0, 1000.0, RHO_RANGE, random_state=0)
    assert isinstance(found, DiscoveredBounds)
    report = found.describe()
    assert report["n_records"] == 500 and report["n_features"] == 3
    assert report["rho_spent"] == found.rho and report["fallback_features"] == []
    lower, upper = found.bounds
    lower[0] = -1.0  # a copy
    assert found.lower[0] != -1.0


# -- properties -------------------------------------------------------------------------------------------------

@SETTINGS
@given(m=st.integers(1, 200), d=st.integers(1, 4), seed=st.integers(0, 2 ** 31),
       low=st.floats(-1e6, 1e6), width=st.floats(1e-6, 1e6), spread=st.floats(1e-9, 10.0),
       bins=st.lists(st.integers(2, 40), min_size=1, max_size=4), margin=st.integers(0, 3),
       rho=st.floats(1e-4, 1e4))
def test_the_box_never_leaves_the_declared_one(m, d, seed, low, width, spread, bins, margin, rho):
    rng = np.random.default_rng(seed)
    X = low + width * (0.5 + spread * rng.standard_normal((m, d)))  # inside, outside, or at the edges
    found = find_bounds(X, low, low + width, rho, bins=bins, margin=margin, random_state=seed)
    assert np.all(np.isfinite(found.lower)) and np.all(np.isfinite(found.upper))
    assert np.all(found.declared_lower <= found.lower) and np.all(found.upper <= found.declared_upper)
    assert np.all(found.lower < found.upper)
    assert np.all(found.levels_accepted <= len(found.sigmas))
    assert found.rho <= rho


@SETTINGS
@given(seed=st.integers(0, 2 ** 31), shift=st.integers(-50, 50), power=st.integers(-6, 6),
       centre=st.integers(10, 1000), spread=st.integers(1, 40))
def test_the_box_moves_and_scales_with_the_data(seed, shift, power, centre, spread):
    """Translating the box and the data by a multiple of the box's width, or scaling both by a power of two,
    moves the result exactly with them (same noise; all the arithmetic is exact on these dyadic values)."""
    rng = np.random.default_rng(seed)
    X = (centre + rng.integers(-spread, spread + 1, (400, 2))).astype(float) + 0.5
    X = np.clip(X, 0.0, 1024.0)
    base = find_bounds(X, 0.0, 1024.0, 0.05, bins=(32, 32, 32), random_state=seed)
    t, s = 1024.0 * shift, 2.0 ** power
    moved = find_bounds(s * X + t, t, t + s * 1024.0, 0.05, bins=(32, 32, 32), random_state=seed)
    np.testing.assert_array_equal(moved.lower, s * base.lower + t)
    np.testing.assert_array_equal(moved.upper, s * base.upper + t)
    np.testing.assert_array_equal(moved.levels_accepted, base.levels_accepted)


# -- discrete features: the box keeps the values that hold a resolvable share (issue 34) --------------------

def _discrete_block(seed, m, shares):
    """m records of len(shares) features of values 0 / 0.5 / 1 with the given shares per feature."""
    rng = np.random.default_rng([seed, 34])
    values = np.array([0.0, 0.5, 1.0])
    return np.column_stack([values[rng.choice(3, size=m, p=p)] for p in shares])


def _kept(X, found):
    """Per feature: how many of its distinct values lie inside the box found (the others are clipped to an edge)."""
    return np.array([np.count_nonzero((found.lower[k] <= values) & (values <= found.upper[k]))
                     for k, values in enumerate(np.unique(X[:, k]) for k in range(X.shape[1]))])


@pytest.mark.parametrize("half_width", [20.0, 500.0])
def test_a_discrete_feature_keeps_two_values_at_fixed_significance(half_width):
    """Two features of values 0 / 0.5 / 1 with unequal shares (50/15/35 % and 30/45/25 %) in a ±20 or ±500
    box, m = 500, 20 % of the ρ of ε = 1: two values hold ≥ 125 records, above the guarantee's
    n* = (z* + 2)·σ ≈ 149 only for the larger ones, so the module's bound gives probability ≥ 1 − 6·Φ(−2) ≈ 0.86
    for a feature's box to hold two values (the 50 % and 35 % values: 250 and 175 records; the 30 % and 45 %: 150
    and 225). One-sided binomial test at level 10⁻³ over 60 seeded blocks (120 features) that the rate is at
    least 0.86; the anchor-only run of the finder before issue 34 held two values less often."""
    shares = [(0.50, 0.15, 0.35), (0.30, 0.45, 0.25)]
    kept = old = trials = 0
    for seed in range(60):
        X = _discrete_block(seed, 500, shares)
        found = find_bounds(X, -half_width, half_width, RHO_RANGE, random_state=[seed, 7])
        before = find_bounds(X, -half_width, half_width, RHO_RANGE, random_state=[seed, 7], span="anchor")
        assert found.params["levels_run"] == 3
        kept += int(np.sum(_kept(X, found) >= 2))
        old += int(np.sum(_kept(X, before) >= 2))
        trials += 2
    assert binom.cdf(kept, trials, 0.86) > 1e-3, f"{kept}/{trials} features kept two values"
    assert kept > old, (kept, old)


def test_the_guarantee_without_noise_keeps_every_value():
    """With a vast budget every value's bin is significant: the box spans the smallest and the largest value
    of every feature (a rare one included), in a ±20 box and off-centre in [−3, 997]."""
    X = _discrete_block(1, 400, [(0.7, 0.05, 0.25), (0.05, 0.9, 0.05), (0.5, 0.0, 0.5)])
    for lo, hi in ((-20.0, 20.0), (-3.0, 997.0)):
        found = find_bounds(X, lo, hi, 1e12, random_state=0)
        assert np.all(found.lower <= X.min(axis=0)) and np.all(found.upper >= X.max(axis=0)), (found.lower,
                                                                                               found.upper)
        np.testing.assert_array_equal(_kept(X, found), [3, 3, 2])


@pytest.mark.parametrize("d", [1, 3, 9])
def test_level_sensitivity_adversarial_on_discrete_values(d):
    """On a block of values 0 / 0.5 / 1 and intervals whose bin edges fall exactly on those values (the
    intervals a descent in a ±20 box reaches: the declared box, [−1.25, 2.5], [0, 0.5], [0.5, 0.5 + 2⁻²⁰]),
    replacing one record by any value (an atom, a bin edge, just inside, outside) changes each level's
    histograms by at most √(2d) in L2, and by exactly √(2d) for some replacement."""
    rng = np.random.default_rng(d)
    X = rng.choice([0.0, 0.5, 1.0], size=(40, d), p=[0.5, 0.2, 0.3])
    candidates = [0.0, 0.5, 1.0, -20.0, 20.0, -1.25, 2.5, 0.5 + 2.0 ** -20, 0.25, -25.0, 30.0, np.nextafter(0.5, 0)]
    for lower, upper in ((-20.0, 20.0), (-1.25, 2.5), (0.0, 0.5), (0.5, 0.5 + 2.0 ** -20)):
        lo, hi = np.full(d, lower), np.full(d, upper)
        worst = 0.0
        for u in candidates:
            for v in candidates:
                A, B = X.copy(), X.copy()
                A[0], B[0] = u, v
                worst = max(worst, _squared_change(A, B, lo, hi, 32))
        assert worst == 2 * d


def test_span_is_checked():
    X = np.zeros((10, 1))
    with pytest.raises(ValueError, match="span"):
        find_bounds(X, 0.0, 1.0, RHO_RANGE, span="hull")
    with pytest.raises(TypeError, match="span"):
        find_bounds(X, 0.0, 1.0, RHO_RANGE, span=1)
