"""Compiled terms of the logistic objectives that objective perturbation minimises exactly.

Two objectives (docs/algorithms.md#objective-perturbation), both sums over records or pairs:

* **pointwise** logistic regression, ``Σ_i φ(m_i)`` with the margins ``m_i = y_i·θᵀx_i`` and
  ``φ(m) = log(1 + e^(−m))``: :func:`_logistic_point_terms` gives φ(m_i), φ'(m_i) and φ''(m_i);
* **pairwise** AUC logistic loss, ``Σ_{i∈pos} Σ_{j∈neg} ℓ(s_i − t_j)`` with the scores ``s = X⁺θ``,
  ``t = X⁻θ`` and ``ℓ(u) = φ(2u)`` (the loss of :mod:`onpair.core.losses`): :func:`_pair_logistic_block`
  gives, for one block of positives against all negatives, ℓ(u_ij), ℓ'(u_ij) and ℓ''(u_ij).

The matrix products that turn these coefficients into gradients and Hessians are BLAS calls in
:mod:`onpair.objective.functions`. Every formula is evaluated so that no exponential overflows:
with ``q = 1/(1 + e^z)`` computed from ``e^(−|z|)``, ``φ(z) = log1p(e^(−|z|)) + max(−z, 0)``,
``φ'(z) = −q`` and ``φ''(z) = q(1 − q) = e^(−|z|)/(1 + e^(−|z|))²`` (the last form keeps its relative
accuracy where q ≈ 1).
"""

from __future__ import annotations

import math

from numba import njit, prange

from .._config import NJIT_OPTIONS, NJIT_PARALLEL_OPTIONS


@njit(**NJIT_OPTIONS)
def _logistic_point_terms(margins, slope_out, curvature_out):
    """φ(m_i) summed, φ'(m_i) into ``slope_out`` and φ''(m_i) into ``curvature_out``, φ(m) = log(1 + e^(−m)).

    Parameters
    ----------
    margins : float64 array of shape (n,)
        The margins m_i = y_i·θᵀx_i (read only).
    slope_out : float64 array of shape (n,)
        Overwritten with φ'(m_i) = −1/(1 + e^(m_i)) ∈ (−1, 0).
    curvature_out : float64 array of shape (n,)
        Overwritten with φ''(m_i) = q(1 − q) ∈ (0, 1/4], q = 1/(1 + e^(m_i)).

    Returns
    -------
    float
        Σ_i φ(m_i).
    """
    total = 0.0
    for i in range(margins.shape[0]):
        z = margins[i]
        e = math.exp(-abs(z))
        if z > 0.0:
            q = e / (1.0 + e)
            total += math.log1p(e)
        else:
            q = 1.0 / (1.0 + e)
            total += math.log1p(e) - z
        slope_out[i] = -q
        curvature_out[i] = e / ((1.0 + e) * (1.0 + e))  # q(1 − q) without cancellation when q ≈ 1
    return total


@njit(**NJIT_PARALLEL_OPTIONS)
def _pair_logistic_block(s, t, slope_out, curvature_out, row_loss_out):
    """ℓ'(s_i − t_j) and ℓ''(s_i − t_j) for a block of positives against all negatives, ℓ(u) = φ(2u).

    Rows (positives) in parallel; each row writes only its own entries, so the result does not depend on
    the thread count.

    Parameters
    ----------
    s : float64 array of shape (b,)
        Scores θᵀx_i of the block's positives (read only).
    t : float64 array of shape (m,)
        Scores θᵀx_j of all negatives (read only).
    slope_out : float64 array of shape (b, m)
        Overwritten with ℓ'(u_ij) = −2/(1 + e^(2u_ij)) ∈ (−2, 0).
    curvature_out : float64 array of shape (b, m)
        Overwritten with ℓ''(u_ij) = 4q(1 − q) ∈ (0, 1], q = 1/(1 + e^(2u_ij)).
    row_loss_out : float64 array of shape (b,)
        Overwritten with Σ_j ℓ(u_ij), one row sum per positive.

    Returns
    -------
    None
    """
    b = s.shape[0]
    m = t.shape[0]
    for i in prange(b):
        acc = 0.0
        for j in range(m):
            z = 2.0 * (s[i] - t[j])
            e = math.exp(-abs(z))
            if z > 0.0:
                q = e / (1.0 + e)
                acc += math.log1p(e)
            else:
                q = 1.0 / (1.0 + e)
                acc += math.log1p(e) - z
            slope_out[i, j] = -2.0 * q
            curvature_out[i, j] = 4.0 * e / ((1.0 + e) * (1.0 + e))  # 4q(1 − q), no cancellation
        row_loss_out[i] = acc
