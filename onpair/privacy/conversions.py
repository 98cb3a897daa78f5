"""Conversions between zero-concentrated DP (rho) and (epsilon, delta)-DP.

The library accounts in rho-zCDP (Gaussian releases compose by adding rho,
see docs/algorithms.md#zcdp) and reports or accepts budgets in
(epsilon, delta).  Three conversions are offered, from loosest to tightest:

``"lemma3"``
    Bun & Steinke (2016), Lemma 3 / Prop. 1.3:
    epsilon = rho + 2 sqrt(rho log(1/delta)).  This is what Huai et al. use
    ("paper mode").  Valid for every rho-zCDP mechanism.
``"tight"``
    Canonne, Kamath & Steinke (2020), Prop. 12 applied to Renyi DP of every
    order a > 1 (rho-zCDP means (a, a rho)-RDP):
    epsilon = inf_{a>1} [a rho + (log(1/delta) + (a-1) log(1-1/a) - log a)/(a-1)].
    Valid for every rho-zCDP mechanism and never worse than ``"lemma3"``.
``"gaussian"``
    Exact for (adaptive) compositions of Gaussian mechanisms *only*: such a
    composition with total rho is mu-GDP with mu = sqrt(2 rho)
    (Dong, Roth & Su 2019), whose exact privacy profile is
    delta(epsilon) = Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)
    (Balle & Wang 2018).  Do not use it for a rho that comes from anything
    other than Gaussian noise.

``"gaussian"`` is the default of :func:`eps_from_rho`, :func:`rho_from_dp`
and :meth:`onpair.privacy.ZCDPAccountant.epsilon_spent`, and the accounting
of every learner (its ``accounting`` parameter): their releases are Gaussian
mechanisms and post-processing of them. Pass ``method="tight"`` for a rho
that is only known to bound a general zCDP mechanism.

All conversions are *conservative under floating point*: ``eps_from_rho``
never reports less than the true epsilon of the chosen bound and
``rho_from_dp`` never returns a rho whose epsilon (by the same method)
exceeds the request.
"""

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from .checks import check_delta, check_epsilon, check_rho

__all__ = ["METHODS", "eps_from_rho", "rho_from_dp"]

METHODS = ("tight", "lemma3", "gaussian")

# brentq's smallest allowed relative tolerance; the absolute tolerance is
# set tiny so that roots of very small magnitude (rho ~ 1e-12) are still
# found to full relative precision.
_RTOL = 4.0 * np.finfo(float).eps
_XTOL = 1e-300
_MAXITER = 500


#: The largest ρ converted to (ε, δ): ρ = 10⁸ is already ε in the hundreds of millions.
RHO_MAX = 1e8


def _check_method(method):
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def nudge_until(x, ok, up):
    """Move ``x`` by growing relative steps until ``ok(x)`` holds.

    Root finders land within a few ulps of the root, on either side.  The
    privacy guarantee needs a definite side (more noise / less rho / more
    reported epsilon), so after every root we step in the safe direction.
    """
    if ok(x):
        return x
    rel = float(np.finfo(float).eps)
    while rel < 0.5:
        new = x * (1.0 + rel) if up else x * (1.0 - rel)
        if new == x:  # subnormal or zero: fall back to one ulp
            new = math.nextafter(x, math.inf if up else 0.0)
        x = new
        if ok(x):
            return x
        rel *= 2.0
    raise RuntimeError("could not move the root to the safe side; this is a bug")


# --------------------------------------------------------------------------
# Gaussian differential privacy (mu-GDP): shared with gaussian.py
# --------------------------------------------------------------------------


def gaussian_delta(mu, epsilon):
    """Exact delta(epsilon) of mu-GDP (equivalently of one Gaussian with
    sensitivity/sigma = mu): Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2).

    Computed as Phi(a) * (1 - exp(e + log Phi(b) - log Phi(a))) with both
    Phi in log space, so that e^epsilon * Phi(b) neither overflows for large
    epsilon nor loses the difference to cancellation.
    """
    if mu <= 0.0:
        return 0.0
    a = -epsilon / mu + mu / 2.0
    b = -epsilon / mu - mu / 2.0
    log_pa = float(log_ndtr(a))
    log_pb = float(log_ndtr(b))
    # log_pb < log_pa since b < a; the exponent is <= 0 for the exact
    # profile (delta >= 0), clip in case rounding makes it a hair positive.
    expo = min(epsilon + log_pb - log_pa, 0.0)
    return max(math.exp(log_pa) * -math.expm1(expo), 0.0)


def gaussian_mu(epsilon, delta):
    """Largest mu such that mu-GDP satisfies (epsilon, delta)-DP.

    delta_mu(epsilon) is increasing in mu (from 0 at mu -> 0 to 1 as
    mu -> inf), so the set {mu : delta_mu(epsilon) <= delta} is an interval
    (0, mu*]; we bracket mu* by doubling/halving, solve with brentq and move
    down until the inequality holds in floating point.
    """

    def h(mu):
        return gaussian_delta(mu, epsilon) - delta

    lo = hi = 1.0
    if h(1.0) <= 0.0:
        while h(hi) <= 0.0:
            lo, hi = hi, 2.0 * hi
            if not math.isfinite(hi):  # pragma: no cover - delta < 1 prevents this
                raise RuntimeError("could not bracket mu")
    else:
        while h(lo) > 0.0:
            hi, lo = lo, 0.5 * lo
            if lo == 0.0:  # pragma: no cover - epsilon > 0 prevents this
                raise RuntimeError("could not bracket mu")
    mu = brentq(h, lo, hi, xtol=_XTOL, rtol=_RTOL, maxiter=_MAXITER)
    return nudge_until(mu, lambda m: h(m) <= 0.0, up=False)


# --------------------------------------------------------------------------
# rho -> epsilon
# --------------------------------------------------------------------------


def _eps_lemma3(rho, log_inv_delta):
    return rho + 2.0 * math.sqrt(rho * log_inv_delta)


def _eps_tight(rho, log_inv_delta):
    """Canonne-Kamath-Steinke bound, minimised over the order a > 1.

    With y = a - 1 the objective is
        f(y) = (1+y) rho + (L - log(1+y))/y - log(1 + 1/y),  L = log(1/delta),
    and its derivative simplifies to f'(y) = rho - (L - log(1+y))/y^2.  So
    f is unimodal with its unique minimiser at the root of
        g(y) = rho y^2 - (L - log(1+y)),
    which is strictly increasing with g(0) = -L < 0 and
    g(sqrt(L/rho)) = log(1 + sqrt(L/rho)) > 0.  Solving g = 0 with brentq
    on that bracket is robust for any rho (1e-12 ... 1e6) with no grid or
    local-minimum risk; f is flat at its minimum, so the value is exact to
    rounding even if y is off by a few ulps.
    """
    if rho == 0.0:
        return 0.0
    L = log_inv_delta
    y_max = math.sqrt(L / rho)

    def g(y):
        return rho * y * y - (L - math.log1p(y))

    y = brentq(g, 0.0, y_max, xtol=_XTOL, rtol=_RTOL, maxiter=_MAXITER)
    if y <= 0.0:  # pragma: no cover - g(0) < 0 keeps the root inside
        y = math.nextafter(0.0, 1.0)
    f = (1.0 + y) * rho + (L - math.log1p(y)) / y - math.log1p(1.0 / y)
    # The bound can dip below 0 for tiny rho with delta near 1; epsilon = 0
    # is then already implied.
    return max(f, 0.0)


def _eps_gaussian(rho, delta, log_inv_delta):
    """Smallest epsilon >= 0 with delta_mu(epsilon) <= delta, mu = sqrt(2 rho)."""
    if rho == 0.0:
        return 0.0
    mu = math.sqrt(2.0 * rho)

    def h(e):
        return gaussian_delta(mu, e) - delta

    if h(0.0) <= 0.0:
        return 0.0
    # The tight zCDP bound holds for every zCDP mechanism, Gaussians included,
    # so it is an upper bracket; the loop only guards against rounding.
    hi = _eps_tight(rho, log_inv_delta)
    while h(hi) > 0.0:
        hi = 2.0 * hi + 1.0
    eps = brentq(h, 0.0, hi, xtol=_XTOL, rtol=_RTOL, maxiter=_MAXITER)
    # Report a definite upper bound: move up until the profile is below delta.
    return nudge_until(eps, lambda e: h(e) <= 0.0, up=True)


def eps_from_rho(rho, delta, method="gaussian"):
    """Epsilon of (epsilon, delta)-DP implied by rho-zCDP.

    Parameters
    ----------
    rho : float
        zCDP parameter, finite and >= 0 (rho = 0 gives epsilon = 0).
    delta : float
        Target delta, 0 < delta < 1.
    method : {"gaussian", "tight", "lemma3"}, optional
        Conversion (see the module docstring).  ``"gaussian"`` (default, the
        conversion every learner of the library reports with) is exact, and
        valid only when all of rho comes from (adaptive) compositions of
        Gaussian mechanisms, post-processing included: the releases of every
        learner and estimator with a zCDP ledger are.  For a general
        rho-zCDP mechanism (one whose rho is a bound, not a sum of Gaussian
        costs) use ``"tight"``; ``"lemma3"`` is the looser closed form.

    Returns
    -------
    float
        epsilon >= 0.  Under floating point it is rounded up, never down.

    Raises
    ------
    ValueError
        On invalid ``rho``, ``delta`` or an unknown ``method``.

    Examples
    --------
    >>> round(eps_from_rho(0.1, 1e-5, method="lemma3"), 4)
    2.246
    >>> round(eps_from_rho(0.1, 1e-5, method="tight"), 4)
    1.9142
    >>> round(eps_from_rho(0.1, 1e-5), 4)   # "gaussian", the default
    1.7601
    """
    rho = check_rho(rho)
    delta = check_delta(delta)
    if rho > RHO_MAX:
        raise ValueError(f"rho must be at most {RHO_MAX:g} (beyond it no conversion is meaningful and the root "
                         f"finders lose their brackets), got {rho!r}")
    _check_method(method)
    L = -math.log(delta)
    if method == "lemma3":
        return _eps_lemma3(rho, L)
    if method == "tight":
        return _eps_tight(rho, L)
    return _eps_gaussian(rho, delta, L)


# --------------------------------------------------------------------------
# (epsilon, delta) -> rho
# --------------------------------------------------------------------------


def rho_from_dp(epsilon, delta, method="gaussian"):
    """Largest zCDP rho whose conversion gives (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, finite and > 0.
    delta : float
        Target delta, 0 < delta < 1.
    method : {"gaussian", "tight", "lemma3"}, optional
        Conversion (see the module docstring); the inverse of
        :func:`eps_from_rho` with the same method, and the same default.
        ``"gaussian"`` (default) is only valid if every release charged to
        this rho is a Gaussian mechanism; ``"tight"`` for a general
        rho-zCDP mechanism.

    Returns
    -------
    float
        rho > 0 with ``eps_from_rho(rho, delta, method) <= epsilon``
        guaranteed in floating point (the root is moved down if needed).

    Raises
    ------
    ValueError
        On invalid ``epsilon``, ``delta`` or an unknown ``method``.

    Notes
    -----
    ``"lemma3"`` inverts in closed form:
    sqrt(rho) = sqrt(log(1/delta) + epsilon) - sqrt(log(1/delta)).
    ``"tight"`` solves eps_from_rho(rho) = epsilon with brentq (the map is
    strictly increasing: its derivative in rho is the optimal order a > 1).
    ``"gaussian"`` solves delta_mu(epsilon) = delta for mu and returns
    mu^2 / 2.

    Examples
    --------
    >>> round(rho_from_dp(1.0, 1e-5, method="lemma3"), 5)
    0.02082
    >>> round(rho_from_dp(1.0, 1e-5, method="tight"), 5)
    0.03056
    >>> round(rho_from_dp(1.0, 1e-5), 5)   # "gaussian", the default
    0.03593
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    _check_method(method)
    L = -math.log(delta)

    if method == "lemma3":
        # sqrt(L + eps) - sqrt(L) written without cancellation for eps << L.
        s = epsilon / (math.sqrt(L + epsilon) + math.sqrt(L))
        rho = s * s
        return nudge_until(rho, lambda r: _eps_lemma3(r, L) <= epsilon, up=False)

    if method == "tight":

        def h(r):
            return _eps_tight(r, L) - epsilon

        # tight <= lemma3 pointwise, so the lemma3 rho is a lower bracket.
        s = epsilon / (math.sqrt(L + epsilon) + math.sqrt(L))
        lo = s * s
        while h(lo) > 0.0:  # pragma: no cover - rounding guard only
            lo *= 0.5
        hi = 2.0 * lo
        while h(hi) <= 0.0:
            lo, hi = hi, 2.0 * hi
        rho = brentq(h, lo, hi, xtol=_XTOL, rtol=_RTOL, maxiter=_MAXITER)
        return nudge_until(rho, lambda r: h(r) <= 0.0, up=False)

    # method == "gaussian"
    mu = gaussian_mu(epsilon, delta)
    rho = 0.5 * mu * mu

    def ok(r):
        # Both the exact inequality at the requested epsilon and the
        # round trip through eps_from_rho must hold.
        return (
            gaussian_delta(math.sqrt(2.0 * r), epsilon) <= delta
            and _eps_gaussian(r, delta, L) <= epsilon
        )

    return nudge_until(rho, ok, up=False)
