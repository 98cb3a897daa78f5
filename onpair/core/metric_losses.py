"""Pairwise losses of the metric task, with the constants the privacy analysis needs.

The parameter is a symmetric matrix W, or the pair (W, b) with a learned threshold b, and a pair of
records scores through the squared Mahalanobis distance ``h = h_W(x, x') = (x − x')ᵀ W (x − x')`` and
the pair's agreement ``τ = +1`` when the two labels are equal, ``−1`` otherwise (any number of
classes). Both losses depend on (W, b) through b − h only, so ``∇ℓ = ℓ'(h)·(v vᵀ, −1)`` with
``v = x − x'`` and ``‖v vᵀ‖_F = ‖v‖² ≤ 4`` on the diameter-2 domain (docs/algorithms.md#metric-threshold).

====================  =====================================  =====================  ===========
name                  ℓ as a function of h and b              G (b = 1, ω = 1)       L (smooth)
====================  =====================================  =====================  ===========
``"logistic"``        φ(τ(b − h)) (Huai et al. Ex. 1: b = 1)  4σ(1 + 4R) ≤ 4         4
``"hinge"``           (1 + τ(h − b + 1))₊ (Yang (11): b = 1)  4                      non-smooth
====================  =====================================  =====================  ===========

(φ(u) = log(1 + e^(−u)), σ the logistic function.) b is the squared distance beyond which pairs of
two classes are pushed (the hinge also pushes pairs of one class below b − 2). :class:`PairTerms`
holds the threshold (fixed, or learned in a public interval [low, high]) and the public pair weights
ω₊ (one class) and ω₋ (two classes); :class:`MetricLoss` derives G, L and Γ from them in the norm
‖(W, b)‖² = ‖W‖²_F + b². On every constraint set of :mod:`onpair.core.matrix_geometry`, ‖W‖_F ≤ R, so
|h| ≤ R‖v‖² ≤ 4R. ``tests/test_metric_losses.py`` checks each constant on sampled and adversarial
worst cases and by finite differences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS

METRIC_LOGISTIC = 10
METRIC_HINGE = 11


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


@njit(**NJIT_OPTIONS)
def _metric_pair_loss(loss_code, h, tau, threshold):
    """ℓ of one pair with squared distance ``h``, agreement ``tau`` (±1) and threshold ``threshold``.

    Parameters
    ----------
    loss_code : int
        :data:`METRIC_LOGISTIC` (φ(τ(b − h))) or :data:`METRIC_HINGE` ((1 + τ(h − b + 1))₊); any other
        code is treated as the hinge.
    h : float
        The squared distance h = (x − x')ᵀW(x − x'), a float64 scalar.
    tau : float
        τ: +1.0 for a pair of one class, −1.0 otherwise.
    threshold : float
        The threshold b (1.0: the papers' losses, φ(τ(1 − h)) and (1 + τh)₊).

    Returns
    -------
    float
        ℓ ≥ 0 as a float64 (docs/algorithms.md#metric-logistic, docs/algorithms.md#metric-hinge,
        docs/algorithms.md#metric-threshold).
    """
    if loss_code == METRIC_LOGISTIC:
        u = tau * (threshold - h)
        if u > 0.0:
            return math.log1p(math.exp(-u))
        return -u + math.log1p(math.exp(u))
    value = 1.0 + tau * (h - (threshold - 1.0))
    return value if value > 0.0 else 0.0


@njit(**NJIT_OPTIONS)
def _metric_pair_dloss(loss_code, h, tau, threshold):
    """dℓ/dh of one pair (a subgradient for the hinge at its kink: 0); dℓ/db is its negative.

    Parameters
    ----------
    loss_code : int
        :data:`METRIC_LOGISTIC` or :data:`METRIC_HINGE` (any other code: the hinge).
    h : float
        The squared distance h, a float64 scalar.
    tau : float
        τ, +1.0 or −1.0.
    threshold : float
        The threshold b.

    Returns
    -------
    float
        dℓ/dh as a float64, with the sign of τ: τ/(1 + e^(τ(b − h))) for the logistic loss (see
        :meth:`MetricLoss.derivative_bounds` for its bounds on the constraint sets), τ·1[1 + τ(h − b + 1) > 0]
        for the hinge. Both losses depend on (W, b) through b − h only, so ∂ℓ/∂b = −dℓ/dh.

    Notes
    -----
    Declared without ``fastmath``, but numba compiles a callee that sets no ``fastmath`` with the flags
    of the caller that triggers its first compilation. When that caller is
    :func:`onpair.core._metric_pair_kernels._fused_pass`, this function carries ``reassoc`` and ``contract`` for
    the rest of the process. Its results are bit-identical either way
    (docs/algorithms.md#floating-point): τ = ±1 makes every product with τ exact, and at the papers'
    b = 1 the hinge's shift b − 1 is an exact 0.
    """
    if loss_code == METRIC_LOGISTIC:
        # d/dh φ(τ(b − h)) = τ/(1 + e^(τ(b − h))), written so that exp never overflows.
        u = tau * (threshold - h)
        if u > 0.0:
            e = math.exp(-u)
            return tau * e / (1.0 + e)
        return tau / (1.0 + math.exp(u))
    return tau if 1.0 + tau * (h - (threshold - 1.0)) > 0.0 else 0.0


@dataclass(frozen=True)
class PairTerms:
    """The threshold and the pair weights of the metric losses: public constants, fixed before any data.

    Parameters
    ----------
    low, high : float
        The threshold b lies in the public interval [low, high]. ``low == high``: the fixed threshold b
        (the papers' losses: b = 1); ``low < high``: b is learned, the last entry of the parameter
        (W, b), and every projection clips it into [low, high].
    same_weight, different_weight : float
        ω₊ and ω₋, the weights of the pairs of one class and of two classes (1 and 1: the papers'
        uniform weights). Public: from a public assumption such as the number of classes
        (:func:`balanced_pair_weights`), never from data counts.

    Examples
    --------
    >>> PAPER_TERMS.learned, PairTerms(0.0, 0.4).learned
    (False, True)
    >>> PairTerms(0.0, 0.4).as_array().tolist()
    [0.0, 0.4, 1.0, 1.0]
    """

    low: float
    high: float
    same_weight: float = 1.0
    different_weight: float = 1.0

    @property
    def learned(self) -> bool:
        """Whether b is a parameter (the last entry of the flat parameter) rather than a constant."""
        return self.low < self.high

    @property
    def max_weight(self) -> float:
        return max(self.same_weight, self.different_weight)

    def as_array(self) -> np.ndarray:
        """``[low, high, ω₊, ω₋]`` as the kernels take them."""
        return np.array([self.low, self.high, self.same_weight, self.different_weight], dtype=np.float64)


#: The papers' losses: the fixed threshold b = 1 and uniform pair weights.
PAPER_TERMS = PairTerms(1.0, 1.0)


def balanced_pair_weights(n_classes: int) -> tuple:
    """(ω₊, ω₋) that balance the two kinds of pairs when the C classes have equal sizes.

    With C equal classes a fraction 1/C of the pairs is of one class and (C − 1)/C of two classes.
    ω₊ = C/2 and ω₋ = C/(2(C − 1)) give both kinds the same total weight and a mean weight of 1 (so
    the step sizes keep their scale); ω₊/ω₋ = C − 1. C = 1 (every pair of one class) gives (1, 1).
    Only the public number of classes enters, never counts from the data.

    Examples
    --------
    >>> balanced_pair_weights(3)
    (1.5, 0.75)
    >>> balanced_pair_weights(2)
    (1.0, 1.0)
    """
    c = int(n_classes)
    if c < 1:
        raise ValueError(f"the number of classes must be >= 1, got {n_classes!r}")
    if c == 1:
        return 1.0, 1.0
    return c / 2.0, c / (2.0 * (c - 1.0))


#: Accepted values of ``threshold`` and ``pair_weights`` by name.
THRESHOLD_NAMES = ("learned",)
PAIR_WEIGHT_NAMES = ("balanced",)


def make_pair_terms(threshold, pair_weights, radius: float, n_classes=None) -> PairTerms:
    """The :class:`PairTerms` of the learners' ``threshold`` and ``pair_weights`` parameters.

    * ``threshold="learned"``: b is learned in the public interval [0, 4R] (on every constraint set
      h ∈ [−4R, 4R], and h ≥ 0 on the PSD sets, so [0, 4R] spans every threshold that separates
      anything); a pair ``(low, high)`` with low < high: learned in that public interval; a number: the
      fixed threshold b (1.0: the papers' losses).
    * ``pair_weights=None``: uniform (the papers'); ``"balanced"``: :func:`balanced_pair_weights` of the
      public number of classes ``n_classes``; a pair ``(ω₊, ω₋)`` of public positive numbers.

    Examples
    --------
    >>> make_pair_terms("learned", "balanced", 0.5, n_classes=3)
    PairTerms(low=0.0, high=2.0, same_weight=1.5, different_weight=0.75)
    >>> make_pair_terms(1.0, None, 0.5) == PAPER_TERMS
    True
    """
    def number(value, name, low, high):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{name} must be a number, got {value!r}")
        value = float(value)
        if not (low <= value <= high):
            raise ValueError(f"{name} must be a finite number in [{low:g}, {high:g}], got {value!r}")
        return value

    if isinstance(threshold, str):
        if threshold not in THRESHOLD_NAMES:
            raise ValueError(f"threshold must be 'learned', a number or a pair (low, high), got {threshold!r}")
        low, high = 0.0, 4.0 * float(radius)
    elif isinstance(threshold, (tuple, list)):
        if len(threshold) != 2:
            raise ValueError(f"threshold must be 'learned', a number or a pair (low, high), got {threshold!r}")
        low = number(threshold[0], "threshold[0]", -1e6, 1e6)
        high = number(threshold[1], "threshold[1]", -1e6, 1e6)
        if not low < high:
            raise ValueError(
                f"threshold=(low, high) needs low < high (a fixed threshold is a number), got {threshold!r}")
    else:
        low = high = number(threshold, "threshold", -1e6, 1e6)
    if pair_weights is None:
        same, different = 1.0, 1.0
    elif isinstance(pair_weights, str):
        if pair_weights not in PAIR_WEIGHT_NAMES:
            raise ValueError(f"pair_weights must be None, 'balanced' or a pair (same, different), got {pair_weights!r}")
        if n_classes is None:
            raise ValueError("pair_weights='balanced' needs the public number of classes (classes= or n_classes=)")
        same, different = balanced_pair_weights(n_classes)
    elif isinstance(pair_weights, (tuple, list)) and len(pair_weights) == 2:
        same = number(pair_weights[0], "pair_weights[0]", 1e-6, 1e6)
        different = number(pair_weights[1], "pair_weights[1]", 1e-6, 1e6)
    else:
        raise ValueError(f"pair_weights must be None, 'balanced' or a pair (same, different), got {pair_weights!r}")
    return PairTerms(low, high, same, different)


@dataclass(frozen=True)
class MetricLoss:
    """A metric-learning pair loss and its declared constants (Frobenius geometry).

    Examples
    --------
    >>> from onpair.core.metric_losses import get_metric_loss
    >>> loss = get_metric_loss("logistic")
    >>> round(loss.lipschitz(radius=1.0), 4), loss.smoothness()
    (3.9732, 4.0)
    """

    name: str
    code: int
    smooth: bool

    def derivative_bounds(self, radius: float, terms: PairTerms = None) -> tuple:
        """(c₊, c₋): bounds on ω·|dℓ/dh| over pairs of one class and of two classes.

        On every constraint set |h| ≤ 4R and b ∈ [low, high]. For the logistic loss dℓ/dh = τσ(τ(h − b))
        (σ the logistic function): for τ = +1 it is σ(h − b) ≤ σ(4R − low), for τ = −1 its size is
        σ(b − h) ≤ σ(high + 4R). For the hinge |dℓ/dh| ≤ 1. Each is multiplied by its pair weight.
        """
        terms = PAPER_TERMS if terms is None else terms
        r = float(radius)
        if self.code == METRIC_LOGISTIC:
            same = _sigmoid(4.0 * r - terms.low)
            different = _sigmoid(terms.high + 4.0 * r)
        else:
            same = different = 1.0
        return terms.same_weight * same, terms.different_weight * different

    @staticmethod
    def _gradient_norm(terms: PairTerms) -> float:
        """A bound on ‖∂(h, −b)/∂(W, b)‖: ‖v vᵀ‖_F = ‖v‖² ≤ 4 for W, and 1 more for a learned b."""
        return math.sqrt(17.0) if terms.learned else 4.0

    def lipschitz(self, radius: float, terms: PairTerms = None) -> float:
        """G: a bound on ‖∇ℓ‖ for ‖W‖_F ≤ radius and ‖x − x'‖₂ ≤ 2 (the norm ‖(W, b)‖² = ‖W‖²_F + b² with
        a learned threshold, ‖W‖_F with a fixed one), the pair weight included.

        Both losses depend on (W, b) through b − h only, so ∇ℓ = ω·(dℓ/dh)·(v vᵀ, −1) (just ω·(dℓ/dh)·v vᵀ
        for a fixed b), of norm ≤ max(c₊, c₋)·√(16 + 1) (resp. ·4), with c± from
        :meth:`derivative_bounds`. The papers' logistic loss (b = 1, ω = 1): 4σ(1 + 4R) ≤ 4.
        """
        terms = PAPER_TERMS if terms is None else terms
        return self._gradient_norm(terms) * max(self.derivative_bounds(radius, terms))

    def pair_change(self, radius: float, terms: PairTerms = None) -> float:
        """Γ: a bound on ‖∇ℓ(W, b; z, z_a) − ∇ℓ(W, b; z, z_b)‖ (same W and b, same z, two other records).

        Each pair gradient is ``c·g`` with ``c = ω·dℓ/dh`` (the sign of τ) and ``g = (P, −1)`` for a
        learned b, ``g = P`` for a fixed one, ``P = v vᵀ`` (‖P‖_F ≤ 4). Write ``Q = v' v'ᵀ`` for the
        other pair; ⟨P, Q⟩ = (vᵀv')² ≥ 0. With c₊, c₋ from :meth:`derivative_bounds`:

        * equal signs (the two pairs are both of one class, or both of two classes), ``|c|, |c'| ≤ m``
          with m = c₊ or c₋: ``‖cP − c'Q‖²_F + (c − c')² ≤ 16(c² + c'²) + (c − c')²``, a convex function
          of (|c|, |c'|) on [0, m]² whose largest vertex value is 32m² (the b term vanishes at c = c'),
          so ≤ 4√2·max(c₊, c₋) (the same bound without the b term);
        * opposite signs (one pair of one class, one of two classes):
          ``‖cP − c'Q‖_F ≤ 4(|c| + |c'|)`` and ``|c − c'| = |c| + |c'|``, so ≤ √17·(c₊ + c₋) for a
          learned b and 4(c₊ + c₋) for a fixed one.

        Γ is the larger of the two, never more than the generic 2G. The papers' logistic loss: 4.63 for
        R = 0.1 against 2G = 6.42. For the hinge, |c| = 1 on both pairs with opposite signs is possible,
        and Γ = 2G is attained (v = v', labels swapped): 8, or 2√17 with a learned b.
        """
        terms = PAPER_TERMS if terms is None else terms
        same, different = self.derivative_bounds(radius, terms)
        same_sign = 4.0 * math.sqrt(2.0) * max(same, different)
        opposite = self._gradient_norm(terms) * (same + different)
        return min(max(same_sign, opposite), 2.0 * self.lipschitz(radius, terms))

    def smoothness(self, terms: PairTerms = None) -> float:
        """L: Lipschitz constant of ∇ℓ (``inf`` for the hinge).

        ℓ = ω·φ(u) with u = τ(b − h) linear in (W, b), ∇u = τ(−P, 1) of squared norm ≤ 16 + 1 (16 for a
        fixed b), and φ'' ≤ 1/4: L = ω_max·17/4 (the papers' 4).
        """
        terms = PAPER_TERMS if terms is None else terms
        if self.code == METRIC_LOGISTIC:
            return terms.max_weight * self._gradient_norm(terms) ** 2 / 4.0
        return math.inf

    def value(self, h: float, tau: float, threshold: float = 1.0) -> float:
        """ℓ of one pair (Python convenience over the compiled function)."""
        return float(_metric_pair_loss(self.code, float(h), float(tau), float(threshold)))

    def derivative(self, h: float, tau: float, threshold: float = 1.0) -> float:
        """dℓ/dh of one pair."""
        return float(_metric_pair_dloss(self.code, float(h), float(tau), float(threshold)))


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
