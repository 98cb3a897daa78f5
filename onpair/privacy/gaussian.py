"""Calibration of the Gaussian mechanism.

Two regimes are covered:

* a single (epsilon, delta) release: :func:`gaussian_sigma`, by default with
  the analytic Gaussian mechanism of Balle & Wang (2018), which is exact and
  valid for every epsilon > 0;
* zCDP accounting: :func:`gaussian_rho` (the rho paid by one release) and
  :func:`sigma_for_rho` (the noise needed for a given rho share), which is
  how the online learners calibrate each release (docs/algorithms.md#release-calibration,
  sigma_k = U_{t_k} / sqrt(2 rho_k)).
"""

import math
import warnings

import numpy as np

from .checks import check_delta, check_epsilon, check_positive, check_rho, check_sensitivity
from .conversions import gaussian_delta, gaussian_mu, nudge_until
from .exceptions import PrivacyWarning

__all__ = ["gaussian_sigma", "gaussian_rho", "sigma_for_rho", "SIGMA_METHODS"]

SIGMA_METHODS = ("analytic", "classic")


def _rho_of(sensitivity, sigma):
    # (Delta/sigma)^2 / 2 rather than Delta^2 / (2 sigma^2) so that a huge
    # Delta does not overflow; gaussian_rho and sigma_for_rho share it so
    # that their round trip is consistent to the last bit.
    ratio = sensitivity / sigma
    return 0.5 * ratio * ratio


def gaussian_sigma(sensitivity, epsilon, delta, method="analytic"):
    """Noise standard deviation for an (epsilon, delta)-DP Gaussian release.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Delta of the released quantity, finite and >= 0.
        Sensitivity 0 needs no noise and returns 0.
    epsilon : float
        Target epsilon, finite and > 0.
    delta : float
        Target delta, 0 < delta < 1.
    method : {"analytic", "classic"}, optional
        ``"analytic"`` (default): the smallest sigma such that
        Phi(Delta/(2 sigma) - epsilon sigma/Delta)
        - e^epsilon Phi(-Delta/(2 sigma) - epsilon sigma/Delta) <= delta
        (Balle & Wang 2018, Theorem 8), which is necessary and sufficient,
        for every epsilon > 0.
        ``"classic"``: sqrt(2 ln(1.25/delta)) Delta / epsilon (Dwork & Roth,
        Theorem A.1), only proven for epsilon < 1; a :class:`PrivacyWarning`
        is issued when epsilon >= 1.

    Returns
    -------
    float
        sigma >= 0.  For ``"analytic"`` the value is rounded so that the
        inequality holds in floating point (never under-noised).

    Raises
    ------
    ValueError
        On invalid arguments or an unknown ``method``.

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 1.0, 1e-5), 4)
    3.7306
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     round(gaussian_sigma(1.0, 1.0, 1e-5, method="classic"), 4)
    4.8448
    """
    sensitivity = check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if method not in SIGMA_METHODS:
        raise ValueError(f"method must be one of {SIGMA_METHODS}, got {method!r}")

    if method == "classic":
        if epsilon >= 1.0:
            warnings.warn(
                f"the classic Gaussian mechanism bound sqrt(2 ln(1.25/delta)) * "
                f"sensitivity / epsilon is only proven for epsilon < 1 "
                f"(got epsilon={epsilon!r}); the returned sigma is not a proven "
                f"privacy guarantee. Use method='analytic', which is exact for "
                f"every epsilon > 0.",
                PrivacyWarning,
                stacklevel=2,
            )
        return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon

    if sensitivity == 0.0:
        return 0.0
    # The privacy profile depends on sensitivity and sigma only through
    # mu = sensitivity / sigma, and the same mu-GDP helper drives the exact
    # "gaussian" zCDP conversion, so both share one solver.
    mu = gaussian_mu(epsilon, delta)
    sigma = sensitivity / mu
    # sensitivity / (sensitivity / mu) can round to a hair above mu; move
    # sigma up until the inequality holds for the sigma actually returned.
    return nudge_until(sigma, lambda s: gaussian_delta(sensitivity / s, epsilon) <= delta, up=True)


def gaussian_rho(sensitivity, sigma):
    """zCDP parameter of one Gaussian release: rho = Delta^2 / (2 sigma^2).

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Delta, finite and >= 0.
    sigma : float
        Noise standard deviation, finite and > 0.

    Returns
    -------
    float
        rho >= 0 (Bun & Steinke 2016, Prop. 1.6).

    Raises
    ------
    ValueError
        On invalid arguments (including sigma = 0, which is no privacy).

    Examples
    --------
    >>> gaussian_rho(2.0, 4.0)
    0.125
    """
    sensitivity = check_sensitivity(sensitivity)
    sigma = check_positive(sigma, "sigma")
    return _rho_of(sensitivity, sigma)


#: Relative margin on σ for a planned release: it covers the few ulps by which floating point can exceed
#: a bound (measured: 1 + 4e-16), on top of the 1e-12 shrink of the schedules' ρ shares.
SIGMA_MARGIN = 1.0 + 1e-9


def sigmas_for_shares(sensitivities, shares) -> np.ndarray:
    """σ_k = Δ_k·(1 + 10⁻⁹)/√(2ρ_k) for planned zCDP releases (vectorised; the learners and
    GradientPerturbedGD use it for every release they plan).

    Examples
    --------
    >>> import numpy as np
    >>> bool(sigmas_for_shares(np.array([1.0]), np.array([0.5]))[0] > 1.0)
    True
    """
    return np.asarray(sensitivities, dtype=np.float64) * SIGMA_MARGIN / np.sqrt(2.0 * np.asarray(shares))


def sigma_for_rho(sensitivity, rho):
    """Noise standard deviation for a rho-zCDP Gaussian release.

    Parameters
    ----------
    sensitivity : float
        L2 sensitivity Delta, finite and >= 0 (0 returns 0).
    rho : float
        zCDP share for this release, finite and > 0.

    Returns
    -------
    float
        sigma = Delta / sqrt(2 rho), rounded up if needed so that
        ``gaussian_rho(sensitivity, sigma) <= rho`` holds in floating point.

    Raises
    ------
    ValueError
        On invalid arguments (rho = 0 would need infinite noise).

    Examples
    --------
    >>> sigma_for_rho(1.0, 0.5)
    1.0
    """
    sensitivity = check_sensitivity(sensitivity)
    rho = check_rho(rho, allow_zero=False)
    if sensitivity == 0.0:
        return 0.0
    sigma = sensitivity / math.sqrt(2.0 * rho)
    return nudge_until(sigma, lambda s: _rho_of(sensitivity, s) <= rho, up=True)
