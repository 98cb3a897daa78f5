"""Pairwise losses for bipartite ranking (AUC maximisation), with their declared constants.

Every loss here scores an **unordered pair with opposite labels** through the margin
``u = wᵀ(x⁺ − x⁻)``, the score gap between the positive and the negative record of the pair. Pairs
with equal labels carry no gradient (for the logistic loss, Huai et al. Example 2, they contribute the
constant ``φ(0) = log 2``; for hinge and square the indicator is zero), so the kernels never visit them.

====================  =======================  =====================  ===========
name                  ℓ as a function of u      G (Lipschitz in w)     L (smooth)
====================  =======================  =====================  ===========
``"logistic"``        φ(2u) = log(1 + e^(−2u))  4/(1 + e^(−4R)) ≤ 4    4
``"hinge"``           (1 − u)₊                  2                      non-smooth
``"square"``          (1 − u)²                  4(1 + 2R)              8
====================  =======================  =====================  ===========

The constants hold on a feature domain of diameter 2 (``‖x − x'‖₂ ≤ 2``, see
:mod:`onpair.core.bounds`) and, for the square loss, on the ball ``‖w‖₂ ≤ R``; docs/algorithms.md#losses derives
them and ``tests/test_losses.py`` checks them on sampled worst cases. The logistic loss with
``(y − y')`` in place of ``2·sign`` is exactly Huai et al.'s ``φ((y − y')wᵀ(x − x'))`` for labels ±1.
The strong-convexity regulariser ``(λ/2)‖w − c‖²`` is not part of these constants: it is added by the
learners, and it cancels in the sensitivity analysis (see :mod:`onpair.privacy.ledger`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from numba import njit

from .._config import NJIT_OPTIONS

LOGISTIC = 0
HINGE = 1
SQUARE = 2


@njit(**NJIT_OPTIONS)
def _pair_loss(loss_code, margin):
    """Loss of one opposite-label pair with margin ``u = wᵀ(x⁺ − x⁻)``.

    Parameters
    ----------
    loss_code : int
        :data:`LOGISTIC` (φ(2u)), :data:`HINGE` ((1 − u)₊) or :data:`SQUARE` ((1 − u)²); any other code
        is treated as ``SQUARE``.
    margin : float
        The margin u, a float64 scalar.

    Returns
    -------
    float
        ℓ(u) ≥ 0 as a float64 (docs/algorithms.md#losses); the logistic branch never overflows.
    """
    if loss_code == LOGISTIC:
        z = 2.0 * margin
        # log(1 + e^(−z)) without overflow for large |z|.
        if z > 0.0:
            return math.log1p(math.exp(-z))
        return -z + math.log1p(math.exp(z))
    if loss_code == HINGE:
        return max(0.0, 1.0 - margin)
    gap = 1.0 - margin
    return gap * gap


@njit(**NJIT_OPTIONS)
def _pair_dloss(loss_code, margin):
    """Derivative of :func:`_pair_loss` in the margin (a subgradient for the hinge at u = 1).

    Parameters
    ----------
    loss_code : int
        :data:`LOGISTIC`, :data:`HINGE` or :data:`SQUARE` (any other code: ``SQUARE``).
    margin : float
        The margin u, a float64 scalar.

    Returns
    -------
    float
        dℓ/du as a float64: −2/(1 + e^(2u)) ∈ (−2, 0) for the logistic loss (evaluated so that exp never
        overflows), −1 for u < 1 and 0 otherwise for the hinge, −2(1 − u) for the square loss. A NaN
        margin gives NaN for the logistic and square losses and 0 for the hinge.
    """
    if loss_code == LOGISTIC:
        z = 2.0 * margin
        # d/du φ(2u) = −2 / (1 + e^(2u)), written so that exp never overflows.
        if z > 0.0:
            e = math.exp(-z)
            return -2.0 * e / (1.0 + e)
        return -2.0 / (1.0 + math.exp(z))
    if loss_code == HINGE:
        return -1.0 if margin < 1.0 else 0.0
    return -2.0 * (1.0 - margin)


@dataclass(frozen=True)
class PairLoss:
    """A pairwise loss and the constants the privacy analysis needs.

    Parameters
    ----------
    name : str
        Public name (``"logistic"``, ``"hinge"``, ``"square"``).
    code : int
        Integer passed to the compiled kernels.
    smooth : bool
        Whether the loss has a Lipschitz gradient. Only smooth losses have the contraction factor
        the sensitivity ledger needs, so the online private learners accept only those.

    Examples
    --------
    >>> from onpair.core.losses import get_loss
    >>> loss = get_loss("logistic")
    >>> round(loss.lipschitz(radius=1.0), 4), loss.smoothness()
    (3.9281, 4.0)
    """

    name: str
    code: int
    smooth: bool

    def lipschitz(self, radius: float) -> float:
        """G: a bound on ‖∇_w ℓ(w; z, z')‖₂ for ‖w‖₂ ≤ radius and ‖x − x'‖₂ ≤ 2."""
        if self.code == LOGISTIC:
            # ‖∇‖ = 2|φ'(2u)|·‖x⁺ − x⁻‖ with |u| = |wᵀ(x⁺ − x⁻)| ≤ 2R on C, and |φ'(z)| = 1/(1 + e^z) is
            # largest at z = −4R: G = 4/(1 + e^(−4R)), below the paper's 4 and tending to 2 as R → 0.
            return 4.0 / (1.0 + math.exp(-4.0 * float(radius)))
        if self.code == HINGE:
            return 2.0  # |∂| ≤ 1 times ‖x⁺ − x⁻‖ ≤ 2
        return 4.0 * (1.0 + 2.0 * float(radius))  # 2|1 − u| ≤ 2(1 + 2R), times 2

    def pair_change(self, radius: float) -> float:
        """Γ: a bound on ‖∇ℓ(w; z, z_a) − ∇ℓ(w; z, z_b)‖₂ over records z_a, z_b (same w, same z).

        The sensitivity ledger charges Γ per replaced record and pair. Two gradients of norm ≤ G give
        the generic Γ = 2G (docs/algorithms.md#pair-change), which is what the square loss gets: the argument below
        needs a pair weight of one sign, and 2(1 − u) changes sign once R > 1/2 (sampled worst cases
        stay near G, but sampling is not a proof).

        For the logistic and hinge losses Γ = G. Their pair gradient is ``−a·p`` with ``p = x⁺ − x⁻`` and
        a weight ``a ∈ [0, a_max]``, ``G = 2a_max``. Replacing z_a by z_b either (i) keeps both pairs
        opposite-labelled with z in the same role, so ``p − q = ±(x_b − x_a)`` and ``‖p − q‖ ≤ 2``; then
        with ``P = ‖p‖², Q = ‖q‖² ≤ 4`` and ``p·q ≥ (P + Q − 4)/2``,
        ``‖ap − bq‖² ≤ P(a² − ab) + Q(b² − ab) + 4ab ≤ 4·max(a, b)² ≤ G²``
        (each bracket is maximised at P or Q ∈ {0, 4}); or (ii) turns exactly one of the two pairs into a
        same-label pair with zero gradient, leaving a change of one gradient, ``≤ G``. The same holds
        when z itself is the replaced record (the round's fresh term), pair by pair.
        """
        if self.code == SQUARE:
            return 2.0 * self.lipschitz(radius)
        return self.lipschitz(radius)

    def smoothness(self) -> float:
        """L: a bound on the Lipschitz constant of ∇_w ℓ (``inf`` for non-smooth losses)."""
        if self.code == LOGISTIC:
            return 4.0  # φ'' ≤ 1/4, times 2², times ‖x⁺ − x⁻‖² ≤ 4
        if self.code == HINGE:
            return math.inf
        return 8.0  # 2‖x⁺ − x⁻‖² ≤ 8

    def value(self, margin: float) -> float:
        """Loss of one opposite-label pair (Python convenience over the compiled function)."""
        return float(_pair_loss(self.code, float(margin)))

    def derivative(self, margin: float) -> float:
        """d loss / d margin of one opposite-label pair."""
        return float(_pair_dloss(self.code, float(margin)))


LOSSES = {
    "logistic": PairLoss("logistic", LOGISTIC, True),
    "hinge": PairLoss("hinge", HINGE, False),
    "square": PairLoss("square", SQUARE, True),
}


def get_loss(name: str) -> PairLoss:
    """Look a loss up by name; a clear ``ValueError`` for an unknown one.

    Examples
    --------
    >>> get_loss("square").lipschitz(radius=2.0)
    20.0
    """
    if isinstance(name, PairLoss):
        return name
    try:
        return LOSSES[name]
    except (KeyError, TypeError):
        raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {name!r}") from None
