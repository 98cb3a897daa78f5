"""Compiled kernels of the metric task's offline estimators: the full-batch gradient over all pairs
(:class:`onpair.GradientPerturbedGD`) and Yang et al.'s SGD (:class:`onpair.OutputPerturbedSGD`), on the
augmented rows of :mod:`onpair.core._metric_pair_kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS
from ..core._metric_pair_kernels import _augmented_row, _metric_round_gradient, _project_parameter


@njit(**NJIT_OPTIONS)
def _metric_full_gradient(W, Z, labels, loss_code, terms):
    """Σ over unordered pairs i < j of ω_ij·∇ℓ(W, b; z_i, z_j) (a flat vector), in O(n²·d²/2) through the
    augmented rows; the full-batch gradient of the metric task is 2/(n(n−1)) times this.

    Parameters
    ----------
    W : float64 array of shape (d·d,) or (d·d + 1,)
        The point, flat row-major and symmetric, then b if learned (read only).
    Z : float64 array of shape (n, d), C-contiguous
        Mapped records (read only).
    labels : int64 array of shape (n,)
        Their class codes (read only).
    loss_code : int
        A loss code of :mod:`onpair.core.metric_losses`.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋] (see :func:`_metric_giga`).

    Returns
    -------
    float64 array of the shape of W
        A new array, Σ_{i<j} ω_ij·∇ℓ(W, b; z_i, z_j) (W part exactly symmetric). Allocates the n augmented
        rows.
    """
    n, d = Z.shape
    width = d * (d + 1) // 2 + d
    rows = np.empty((n, width))
    for i in range(n):
        _augmented_row(Z[i], rows[i])
    p = W.shape[0]
    grad = np.zeros(p)
    part = np.empty(p)
    omega = np.empty(width)
    sums = np.empty(width)
    wx = np.empty(d)
    unweighted = np.empty(0)
    for i in range(1, n):
        _metric_round_gradient(W, Z[i], labels[i], rows, labels, i, loss_code, unweighted, terms, omega, wx, sums,
                               part)
        for k in range(p):
            grad[k] += part[k]
    return grad


@njit(**NJIT_OPTIONS)
def _metric_pairwise_sgd(X, labels, indices, n_iterates, eta, radius, constraint, loss_code, terms, w, iterate_sum):
    """Yang et al.'s Alg. 1 for the metric task (see :mod:`onpair.batch._sgd_kernels` for the AUC version).

    Step t − 1 (t = 2 … T) pairs the new draw ``z = X[indices[t−1]]`` with every earlier draw:
    ``W ← Π_C(W − (η/(t−1)) Σ_j c_j ∇ℓ(W; z, z_j))``, with ``c_j`` how often record j has been drawn
    so far, grouped by record through the augmented rows (O(#distinct drawn records · d²) per step). A
    record paired with itself has v = 0 and no gradient. ``w`` holds W_1 on entry and W_T on exit;
    ``iterate_sum`` ← Σ_{t=1}^{T} W_t.

    Parameters
    ----------
    X : float64 array of shape (n, d), C-contiguous
        Mapped records (read only).
    labels : int64 array of shape (n,)
        Their class codes (read only).
    indices : int64 array of shape (≥ T,)
        The draws, ``indices[k]`` the paper's ``i_{k+1}`` (read only).
    n_iterates : int
        T ≥ 1.
    eta : float
        The step constant η (step t − 1 uses η/(t − 1)).
    radius : float
        R of the constraint set.
    constraint : int
        A constraint code of :mod:`onpair.core.matrix_geometry`.
    loss_code : int
        A loss code of :mod:`onpair.core.metric_losses`.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋] (see :func:`_metric_giga`).
    w : float64 array of shape (p,), p = d·d or d·d + 1 (a learned b last)
        W_1 on entry (the estimator passes zeros); updated in place to W_T.
    iterate_sum : float64 array of shape (p,)
        Output: overwritten with Σ_{t=1}^{T} W_t.

    Returns
    -------
    float64 array of shape (p,)
        ``w`` itself (the same array object), holding W_T.
    """
    n, d = X.shape
    width = d * (d + 1) // 2 + d
    p = w.shape[0]
    rows = np.empty((n, width))
    row_labels = np.zeros(n, dtype=np.int64)
    counts = np.zeros(n)
    slot = np.full(n, -1, dtype=np.int64)
    n_rows = 0
    omega = np.empty(width)
    sums = np.empty(width)
    wx = np.empty(d)
    grad = np.empty(p)
    for k in range(p):
        iterate_sum[k] = w[k]
    for t in range(1, n_iterates + 1):
        if t >= 2:
            step_index = t - 1
            j = indices[step_index]
            x = X[j]
            if n_rows > 0:
                _metric_round_gradient(w, x, labels[j], rows, row_labels, n_rows, loss_code, counts, terms, omega,
                                       wx, sums, grad)
                step = eta / step_index
                for k in range(p):
                    w[k] -= step * grad[k]
                _project_parameter(w, d, radius, constraint, terms)
            for k in range(p):
                iterate_sum[k] += w[k]
        j = indices[t - 1]
        r = slot[j]
        if r < 0:
            r = n_rows
            _augmented_row(X[j], rows[r])
            row_labels[r] = labels[j]
            slot[j] = r
            n_rows += 1
        counts[r] += 1.0
    return w
