"""When a release is mostly noise: ``expected_cosine`` and ``noise_dominated``, one definition for every report.

A private model releases a vector v̂ = v + ξ: the noiseless value v (a model, or the class means' difference
the default learners' models are built on) plus noise ξ of public power P = E‖ξ‖² (for Gaussian noise of
standard deviation σ on k coordinates, P = kσ²). How far the released direction is from the noiseless one
is the cosine cos(v̂, v). In k dimensions it concentrates at ‖v‖/√(‖v‖² + P), and ‖v̂‖² is an unbiased
estimate of ‖v‖² + P, so

    expected_cosine = √(max(0, 1 − P/‖v̂‖²)),

computed from the release and the public noise power only: it costs no privacy. In few dimensions
(k < 20), where the cosine itself is spread, the estimate runs low (by up to 0.15 at k = 5 near the
threshold: the flag errs towards "dominated"). Every report of a private model carries it, with

    noise_dominated = expected_cosine < NOISE_DOMINATED_COSINE (1/2),

i.e. the released direction is expected to lie more than 60° from the one the same mechanism would
give without noise (the noise's power is at least three times the signal's). At that point the model's
ranking is mostly the noise's: on the tests' synthetic data the AUC of such a release is close to 0.5
and varies from seed to seed (tests/test_signal.py measures the estimate against the true cosine).

What v̂ and P are, model by model (each documents its own): the released model and the power of its
output noise (OnPairStrC, OnPairC, OffPairStrC, OffPairC, OutputPerturbedSGD); the final iterate and the
noise of its steps as if they were linear (GradientPerturbedGD: the loss's curvature contracts it further);
the minimiser and the bound ‖b‖/Λ on what the objective's noise moves it (objective and approximate
minima perturbation: the estimate is then a lower bound); the released class means' difference and
the power of its noise (OnPairStats, OffPairStats). A model released after projection onto its ball
has a shorter v̂, which makes the estimate smaller: never a reason to trust a release more.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["NOISE_DOMINATED_COSINE", "NOTHING_RELEASED", "expected_cosine", "signal_fields"]

#: Below this expected cosine between the released direction and the noiseless one, a release is
#: ``noise_dominated``.
NOISE_DOMINATED_COSINE = 0.5

#: The fields before anything is released (no direction to compare yet).
NOTHING_RELEASED = {"expected_cosine": None, "noise_dominated": False}


def expected_cosine(released, noise_power: float) -> float:
    """The expected cosine between a released vector and its noiseless value, from public quantities.

    Parameters
    ----------
    released : array-like
        The released vector v̂ (any shape; its entries are the coordinates).
    noise_power : float
        E‖ξ‖², the expected squared norm of the noise in v̂ (k·σ² for N(0, σ²) on k coordinates); 0 for
        no noise.

    Returns
    -------
    float
        √(max(0, 1 − P/‖v̂‖²)) in [0, 1]: 1 without noise, 0 when the release is no longer than the
        noise alone typically is.

    Examples
    --------
    >>> expected_cosine([3.0, 4.0], noise_power=0.0)
    1.0
    >>> expected_cosine([3.0, 4.0], noise_power=16.0)   # ‖v̂‖² = 25: √(1 − 16/25)
    0.6
    >>> expected_cosine([0.3, 0.4], noise_power=1.0)    # shorter than the noise: 0
    0.0
    """
    power = float(noise_power)
    if not power >= 0.0 or math.isinf(power):
        raise ValueError(f"noise_power must be a finite number >= 0, got {noise_power!r}")
    vector = np.asarray(released, dtype=np.float64).ravel()
    if power == 0.0:
        return 1.0
    squared = float(vector @ vector)
    if not squared > power:
        return 0.0
    return math.sqrt(1.0 - power / squared)


def signal_fields(released, noise_power: float) -> dict:
    """The report fields ``expected_cosine`` and ``noise_dominated`` of a release (public).

    Examples
    --------
    >>> signal_fields([3.0, 4.0], 16.0)
    {'expected_cosine': 0.6, 'noise_dominated': False}
    >>> signal_fields([1.0, 1.0], 2.0)["noise_dominated"]
    True
    """
    cosine = expected_cosine(released, noise_power)
    return {"expected_cosine": cosine, "noise_dominated": cosine < NOISE_DOMINATED_COSINE}
