"""Tests of the zCDP <-> (epsilon, delta) conversions.

Besides internal consistency (round trips, monotonicity, ordering of the
methods), every conversion is checked against Google's dp-accounting, an
independent implementation: its RDP accountant (same Canonne-Kamath-Steinke
bound, minimised over a finite grid of orders) for "tight", and its PLD
accountant (numerical privacy loss distribution) for "gaussian".
"""

import functools
import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld, rdp
from hypothesis import given, settings
from hypothesis import strategies as st

from onpair.privacy.conversions import METHODS, eps_from_rho, rho_from_dp

# Fixed seeds: derandomize makes every run draw the same examples; no example
# database so that runs do not depend on earlier failures.
SETTINGS = settings(derandomize=True, deadline=None, database=None, max_examples=150)


def log_uniform(lo_exp, hi_exp):
    return st.floats(lo_exp, hi_exp, allow_nan=False, allow_infinity=False).map(
        lambda e: 10.0**e
    )


RHOS = log_uniform(-8, 3)
DELTAS = log_uniform(-12, -0.3)  # 1e-12 .. 0.5
EPSILONS = log_uniform(-3, 1.7)  # 1e-3 .. 50


# --------------------------------------------------------------------------
# lemma3
# --------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.0, 1e-6, 0.01, 0.3, 2.0, 100.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 1 / 768, 0.1])
def test_lemma3_closed_form(rho, delta):
    L = math.log(1 / delta)
    assert eps_from_rho(rho, delta, "lemma3") == pytest.approx(
        rho + 2 * math.sqrt(rho * L), rel=1e-14, abs=0
    )
    if rho > 0:
        eps = rho + 2 * math.sqrt(rho * L)
        r = rho_from_dp(eps, delta, "lemma3")
        assert r == pytest.approx((math.sqrt(L + eps) - math.sqrt(L)) ** 2, rel=1e-9)
        assert r == pytest.approx(rho, rel=1e-9)


@SETTINGS
@given(eps=EPSILONS, delta=DELTAS)
def test_lemma3_round_trip(eps, delta):
    r = rho_from_dp(eps, delta, "lemma3")
    back = eps_from_rho(r, delta, "lemma3")
    assert back <= eps
    assert back == pytest.approx(eps, rel=1e-9)


# --------------------------------------------------------------------------
# tight
# --------------------------------------------------------------------------


def _cks_objective(a, rho, delta):
    """The CKS bound at order a, written directly from docs/algorithms.md#conversion-tight."""
    a = np.asarray(a, dtype=float)
    return a * rho + (math.log(1 / delta) + (a - 1) * np.log(1 - 1 / a) - np.log(a)) / (a - 1)


@pytest.mark.parametrize("rho", [1e-8, 1e-4, 0.01, 0.2, 1.0, 30.0, 1e3])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1 / 768, 0.3])
def test_tight_is_the_minimum_over_orders(rho, delta):
    """Our minimiser vs a brute-force dense grid of orders around the optimum."""
    eps = eps_from_rho(rho, delta, "tight")
    # Lemma-3's optimal order 1 + sqrt(L/rho) is an upper bound on the CKS
    # optimum; scan a log grid of a - 1 from far below to above it.
    y_hi = math.sqrt(math.log(1 / delta) / rho)
    ys = np.geomspace(y_hi * 1e-6, y_hi * 1.5, 200_001)
    grid_min = float(np.min(_cks_objective(1 + ys, rho, delta)))
    grid_min = max(grid_min, 0.0)
    # An infimum cannot be above any grid point; it is close to the best one.
    assert eps <= grid_min + 1e-12 * max(1.0, grid_min)
    assert eps == pytest.approx(grid_min, rel=1e-9, abs=1e-12)


@SETTINGS
@given(rho=RHOS, delta=DELTAS)
def test_tight_round_trip_rho_eps_rho(rho, delta):
    eps = eps_from_rho(rho, delta, "tight")
    if eps == 0.0:  # flat region (tiny rho, large delta): rho is not identifiable
        return
    r = rho_from_dp(eps, delta, "tight")
    assert r == pytest.approx(rho, rel=1e-9)


@SETTINGS
@given(eps=EPSILONS, delta=DELTAS)
def test_tight_round_trip_eps_rho_eps(eps, delta):
    r = rho_from_dp(eps, delta, "tight")
    back = eps_from_rho(r, delta, "tight")
    assert back <= eps  # never overshoot
    assert back == pytest.approx(eps, rel=1e-9)


# --------------------------------------------------------------------------
# gaussian
# --------------------------------------------------------------------------


@SETTINGS
@given(eps=EPSILONS, delta=DELTAS)
def test_gaussian_round_trip_eps_rho_eps(eps, delta):
    r = rho_from_dp(eps, delta, "gaussian")
    back = eps_from_rho(r, delta, "gaussian")
    assert back <= eps
    assert back == pytest.approx(eps, rel=1e-9)


@SETTINGS
@given(rho=RHOS, delta=DELTAS)
def test_gaussian_round_trip_rho_eps_rho(rho, delta):
    eps = eps_from_rho(rho, delta, "gaussian")
    if eps == 0.0:
        return
    r = rho_from_dp(eps, delta, "gaussian")
    # eps was rounded up (conservative), so r may exceed rho by rounding
    # only; at small mu the profile is ill-conditioned to ~1e-12 relative.
    assert r == pytest.approx(rho, rel=1e-9)


def _gdp_delta(mu, eps):
    """mu-GDP privacy profile, written plainly (moderate eps only)."""
    from scipy.special import ndtr

    return ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2)


@pytest.mark.parametrize("rho", [1e-3, 0.05, 0.5, 2.0])
@pytest.mark.parametrize("delta", [1e-6, 1 / 768, 0.01])
def test_gaussian_solves_the_profile(rho, delta):
    eps = eps_from_rho(rho, delta, "gaussian")
    mu = math.sqrt(2 * rho)
    assert eps > 0
    assert _gdp_delta(mu, eps) == pytest.approx(delta, rel=1e-8)


def test_gaussian_zero_when_profile_already_below_delta():
    # delta_mu(0) = 2 Phi(mu/2) - 1 ~ mu / sqrt(2 pi); tiny rho, big delta.
    assert eps_from_rho(1e-8, 0.1, "gaussian") == 0.0


# --------------------------------------------------------------------------
# all methods: monotonicity, ordering, edge cases, validation
# --------------------------------------------------------------------------

GROWTH = st.floats(1e-6, 10.0).map(lambda t: 1.0 + t)


@SETTINGS
@given(rho=RHOS, delta=DELTAS, grow=GROWTH, method=st.sampled_from(METHODS))
def test_eps_increasing_in_rho(rho, delta, grow, method):
    assert eps_from_rho(rho, delta, method) <= eps_from_rho(rho * grow, delta, method)


@SETTINGS
@given(rho=RHOS, delta=log_uniform(-12, -1), grow=GROWTH, method=st.sampled_from(METHODS))
def test_eps_decreasing_in_delta(rho, delta, grow, method):
    assert eps_from_rho(rho, delta, method) >= eps_from_rho(rho, delta * grow, method)


@SETTINGS
@given(eps=EPSILONS, delta=DELTAS, grow=GROWTH, method=st.sampled_from(METHODS))
def test_rho_increasing_in_eps(eps, delta, grow, method):
    assert rho_from_dp(eps, delta, method) <= rho_from_dp(eps * grow, delta, method)


@SETTINGS
@given(eps=EPSILONS, delta=log_uniform(-12, -1), grow=GROWTH, method=st.sampled_from(METHODS))
def test_rho_increasing_in_delta(eps, delta, grow, method):
    assert rho_from_dp(eps, delta, method) <= rho_from_dp(eps, delta * grow, method)


@SETTINGS
@given(eps=EPSILONS, delta=DELTAS, method=st.sampled_from(METHODS))
def test_no_overshoot(eps, delta, method):
    assert eps_from_rho(rho_from_dp(eps, delta, method), delta, method) <= eps


@SETTINGS
@given(eps=EPSILONS, delta=DELTAS)
def test_methods_ordered_in_rho(eps, delta):
    """The tighter the conversion, the more rho it allows for the same (eps, delta)."""
    lemma3 = rho_from_dp(eps, delta, "lemma3")
    tight = rho_from_dp(eps, delta, "tight")
    gauss = rho_from_dp(eps, delta, "gaussian")
    assert lemma3 <= tight <= gauss


@SETTINGS
@given(rho=RHOS, delta=DELTAS)
def test_methods_ordered_in_eps(rho, delta):
    lemma3 = eps_from_rho(rho, delta, "lemma3")
    tight = eps_from_rho(rho, delta, "tight")
    gauss = eps_from_rho(rho, delta, "gaussian")
    assert gauss <= tight <= lemma3


@pytest.mark.parametrize("method", METHODS)
def test_rho_zero_and_extremes(method):
    for delta in (1e-12, 1e-5, 0.5, 1 - 1e-9):
        assert eps_from_rho(0.0, delta, method) == 0.0
        assert eps_from_rho(0, delta, method) == 0.0
    for rho in (1e-12, 1e-8, 1e3, 1e6):
        eps = eps_from_rho(rho, 1e-5, method)
        assert math.isfinite(eps) and eps >= 0
    # For huge rho epsilon ~ rho (the linear term dominates).
    assert eps_from_rho(1e3, 1e-5, method) == pytest.approx(1e3, rel=0.25)
    for eps in (1e-4, 1e2):
        r = rho_from_dp(eps, 1e-5, method)
        assert math.isfinite(r) and r > 0


@pytest.mark.parametrize("method", ["exact", "Tight", None, ""])
def test_unknown_method(method):
    with pytest.raises(ValueError, match="lemma3"):
        eps_from_rho(0.1, 1e-5, method)
    with pytest.raises(ValueError, match="gaussian"):
        rho_from_dp(1.0, 1e-5, method)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: eps_from_rho(-0.1, 1e-5), "rho"),
        (lambda: eps_from_rho(float("nan"), 1e-5), "rho"),
        (lambda: eps_from_rho(float("inf"), 1e-5), "rho"),
        (lambda: eps_from_rho(True, 1e-5), "rho"),
        (lambda: eps_from_rho("0.1", 1e-5), "rho"),
        (lambda: eps_from_rho(0.1, 0.0), "delta"),
        (lambda: eps_from_rho(0.1, 1.0), "delta"),
        (lambda: eps_from_rho(0.1, float("nan")), "delta"),
        (lambda: rho_from_dp(0.0, 1e-5), "epsilon"),
        (lambda: rho_from_dp(-1.0, 1e-5), "epsilon"),
        (lambda: rho_from_dp(float("inf"), 1e-5), "epsilon"),
        (lambda: rho_from_dp(float("nan"), 1e-5), "epsilon"),
        (lambda: rho_from_dp(1.0, -1e-5), "delta"),
        (lambda: rho_from_dp(1.0, 2), "delta"),
    ],
)
def test_invalid_arguments(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_returns_python_floats():
    for method in METHODS:
        assert type(eps_from_rho(np.float32(0.1), np.float64(1e-5), method)) is float
        assert type(rho_from_dp(np.int64(1), 1e-5, method)) is float


# --------------------------------------------------------------------------
# docs/algorithms.md#conversions settings
# --------------------------------------------------------------------------


@pytest.mark.parametrize("n", [100, 768])
@pytest.mark.parametrize("eps", [0.5, 1.5, 2.5])
def test_tight_vs_lemma3_ratio_at_paper_settings(n, eps):
    delta = 1 / n
    ratio = rho_from_dp(eps, delta, "tight") / rho_from_dp(eps, delta, "lemma3")
    assert 1.4 <= ratio <= 2.8, f"n={n} eps={eps}: tight/lemma3 rho ratio {ratio:.3f}"
    # noise std scales like 1/sqrt(rho): 15-40 % less noise
    saving = 1 - 1 / math.sqrt(ratio)
    assert 0.15 <= saving <= 0.40, f"n={n} eps={eps}: sigma saving {saving:.3f}"


# --------------------------------------------------------------------------
# independent check against dp-accounting
# --------------------------------------------------------------------------

# Dense grid of RDP orders: dp-accounting minimises the same CKS bound over
# these, so it can only be >= the exact infimum, and close to it.
RDP_ORDERS = tuple(np.concatenate([np.linspace(1.001, 10, 2000), np.linspace(10, 500, 2000)]))
PLD_INTERVAL = 1e-4


@functools.lru_cache(maxsize=None)
def _rdp_accountant(rho):
    acc = rdp.RdpAccountant(orders=list(RDP_ORDERS))
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=1 / math.sqrt(2 * rho)))
    return acc


@functools.lru_cache(maxsize=None)
def _pld_accountant(rho):
    acc = pld.PLDAccountant(value_discretization_interval=PLD_INTERVAL)
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=1 / math.sqrt(2 * rho)))
    return acc


@pytest.mark.parametrize("rho", [1e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-2, 1 / 768, 1e-5])
def test_tight_matches_dp_accounting_rdp(rho, delta):
    ours = eps_from_rho(rho, delta, "tight")
    theirs = _rdp_accountant(rho).get_epsilon(delta)
    # Absolute tolerance 1e-3 (docs/algorithms.md#dp-accounting-checks).
    assert abs(ours - theirs) <= 1e-3, (rho, delta, ours, theirs)
    # Their grid minimum cannot be below the exact infimum.
    assert ours <= theirs + 1e-12


@pytest.mark.parametrize("rho", [0.01, 0.1, 1.0])
@pytest.mark.parametrize("delta", [1 / 768, 1e-5])
def test_gaussian_matches_dp_accounting_pld(rho, delta):
    ours = eps_from_rho(rho, delta, "gaussian")
    theirs = _pld_accountant(rho).get_epsilon(delta)
    # PLD discretisation is pessimistic: ours <= theirs + tol, and close.
    assert ours <= theirs + 1e-2
    assert abs(ours - theirs) <= 1e-2, (rho, delta, ours, theirs)


@pytest.mark.parametrize("eps", [0.5, 2.5])
def test_rho_from_dp_gaussian_checked_by_pld(eps):
    delta = 1 / 768
    rho = rho_from_dp(eps, delta, "gaussian")
    theirs = _pld_accountant(rho).get_epsilon(delta)
    assert theirs == pytest.approx(eps, abs=1e-2)
