"""Pairwise losses of the metric task, with the constants the privacy analysis needs.

The parameter is a symmetric matrix W and a pair of records scores through the squared Mahalanobis
distance ``h = h_W(x, x') = (x − x')ᵀ W (x − x')`` and the pair's agreement ``τ = +1`` when the two
labels are equal, ``−1`` otherwise (any number of classes). Both losses depend on W through h only,
so ``∇_W ℓ = ℓ'(h)·v vᵀ`` with ``v = x − x'`` and ``‖v vᵀ‖_F = ‖v‖² ≤ 4`` on the diameter-2 domain.

====================  ===============================  =====================  ===========
name                  ℓ as a function of h              G (Frobenius)          L (smooth)
====================  ===============================  =====================  ===========
``"logistic"``        φ(τ(1 − h)) (Huai et al. Ex. 1)   4σ(1 + 4R) ≤ 4         4
``"hinge"``           (1 + τh)₊ (Yang et al. (11))      4                      non-smooth
====================  ===============================  =====================  ===========

(φ(u) = log(1 + e^(−u)), σ the logistic function.) On every constraint set of
:mod:`onpair.matrix_geometry`, ‖W‖_F ≤ R, so |h| ≤ R‖v‖² ≤ 4R. ``tests/test_metric_losses.py`` checks
each constant on sampled worst cases and by finite differences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from numba import njit

from ._config import NJIT_OPTIONS

METRIC_LOGISTIC = 10
METRIC_HINGE = 11


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


@njit(**NJIT_OPTIONS)
def _metric_pair_loss(loss_code, h, tau):
    """ℓ of one pair with squared distance ``h`` and agreement ``tau`` (±1).

    Parameters
    ----------
    loss_code : int
        :data:`METRIC_LOGISTIC` (φ(τ(1 − h))) or :data:`METRIC_HINGE` ((1 + τh)₊); any other code is
        treated as the hinge.
    h : float
        The squared distance h = (x − x')ᵀW(x − x'), a float64 scalar.
    tau : float
        τ: +1.0 for a pair of one class, −1.0 otherwise.

    Returns
    -------
    float
        ℓ ≥ 0 as a float64 (docs/algorithms.md#metric-logistic, docs/algorithms.md#metric-hinge).
    """
    if loss_code == METRIC_LOGISTIC:
        u = tau * (1.0 - h)
        if u > 0.0:
            return math.log1p(math.exp(-u))
        return -u + math.log1p(math.exp(u))
    value = 1.0 + tau * h
    return value if value > 0.0 else 0.0


@njit(**NJIT_OPTIONS)
def _metric_pair_dloss(loss_code, h, tau):
    """dℓ/dh of one pair (a subgradient for the hinge at its kink: 0).

    Parameters
    ----------
    loss_code : int
        :data:`METRIC_LOGISTIC` or :data:`METRIC_HINGE` (any other code: the hinge).
    h : float
        The squared distance h, a float64 scalar.
    tau : float
        τ, +1.0 or −1.0.

    Returns
    -------
    float
        dℓ/dh as a float64, with the sign of τ: τ/(1 + e^(τ(1 − h))) for the logistic loss (at most
        s(1 + 4R) in absolute value on the constraint sets, s the logistic function), τ·1[1 + τh > 0] for
        the hinge.

    Notes
    -----
    Declared without ``fastmath``, but numba compiles a callee that sets no ``fastmath`` with the flags
    of the caller that triggers its first compilation. When that caller is
    :func:`onpair._metric_kernels._fused_pass`, this function carries ``reassoc`` and ``contract`` for
    the rest of the process. Its results are bit-identical either way
    (docs/algorithms.md#floating-point).
    """
    if loss_code == METRIC_LOGISTIC:
        # d/dh φ(τ(1 − h)) = τ/(1 + e^(τ(1 − h))), written so that exp never overflows.
        u = tau * (1.0 - h)
        if u > 0.0:
            e = math.exp(-u)
            return tau * e / (1.0 + e)
        return tau / (1.0 + math.exp(u))
    return tau if 1.0 + tau * h > 0.0 else 0.0


@dataclass(frozen=True)
class MetricLoss:
    """A metric-learning pair loss and its declared constants (Frobenius geometry).

    Examples
    --------
    >>> from onpair.metric_losses import get_metric_loss
    >>> loss = get_metric_loss("logistic")
    >>> round(loss.lipschitz(radius=1.0), 4), loss.smoothness()
    (3.9732, 4.0)
    """

    name: str
    code: int
    smooth: bool

    def lipschitz(self, radius: float) -> float:
        """G: a bound on ‖∇_W ℓ‖_F for ‖W‖_F ≤ radius and ‖x − x'‖₂ ≤ 2."""
        if self.code == METRIC_LOGISTIC:
            # |dℓ/dh| = 1/(1 + e^u) with u = τ(1 − h) ≥ −(1 + 4R), times ‖v‖² ≤ 4.
            return 4.0 * _sigmoid(1.0 + 4.0 * float(radius))
        return 4.0

    def pair_change(self, radius: float) -> float:
        """Γ: a bound on ‖∇ℓ(W; z, z_a) − ∇ℓ(W; z, z_b)‖_F (same W, same z, two other records).

        Each pair gradient is ``c·v vᵀ`` with ``c = dℓ/dh``, whose sign is τ's. For the logistic loss,
        with ``P = v vᵀ`` and ``Q = v' v'ᵀ`` (‖P‖_F, ‖Q‖_F ≤ 4, ⟨P, Q⟩ = (vᵀv')² ≥ 0):

        * equal signs, ``|c|, |c'| ≤ c_max = σ(1 + 4R)``:
          ``‖cP − c'Q‖²_F = c²‖P‖² + c'²‖Q‖² − 2cc'⟨P, Q⟩ ≤ 16(c² + c'²)``, so ≤ 4√2·c_max;
        * opposite signs (one pair of the same class, ``0 < c ≤ σ(4R − 1)``, one of different classes,
          ``0 < −c' ≤ σ(1 + 4R)``): ``‖cP − c'Q‖_F ≤ 4(|c| + |c'|) ≤ 4(σ(4R − 1) + σ(4R + 1))``.

        Γ is the larger of the two, and never more than the generic 2G: 4.63 for R = 0.1 against
        2G = 6.42. For the hinge loss, |c| = 1 on both pairs with opposite signs is possible (h ∈ (−1, 1)),
        and Γ = 2G = 8 is attained (v = v', labels swapped).
        """
        if self.code == METRIC_LOGISTIC:
            r = float(radius)
            same_sign = 4.0 * math.sqrt(2.0) * _sigmoid(1.0 + 4.0 * r)
            opposite = 4.0 * (_sigmoid(4.0 * r - 1.0) + _sigmoid(4.0 * r + 1.0))
            return min(max(same_sign, opposite), 2.0 * self.lipschitz(radius))
        return 2.0 * self.lipschitz(radius)

    def smoothness(self) -> float:
        """L: Lipschitz constant of ∇_W ℓ in the Frobenius norm (``inf`` for the hinge)."""
        if self.code == METRIC_LOGISTIC:
            return 4.0  # φ'' ≤ 1/4, times ‖v vᵀ‖²_F ≤ 16
        return math.inf

    def value(self, h: float, tau: float) -> float:
        """ℓ of one pair (Python convenience over the compiled function)."""
        return float(_metric_pair_loss(self.code, float(h), float(tau)))

    def derivative(self, h: float, tau: float) -> float:
        """dℓ/dh of one pair."""
        return float(_metric_pair_dloss(self.code, float(h), float(tau)))


METRIC_LOSSES = {
    "logistic": MetricLoss("logistic", METRIC_LOGISTIC, True),
    "hinge": MetricLoss("hinge", METRIC_HINGE, False),
}


def get_metric_loss(name) -> MetricLoss:
    """Look a metric loss up by name; a clear ``ValueError`` for an unknown one.

    Examples
    --------
    >>> get_metric_loss("hinge").pair_change(radius=1.0)
    8.0
    """
    if isinstance(name, MetricLoss):
        return name
    try:
        return METRIC_LOSSES[name]
    except (KeyError, TypeError):
        raise ValueError(f"loss must be one of {sorted(METRIC_LOSSES)} for task='metric', got {name!r}") from None
