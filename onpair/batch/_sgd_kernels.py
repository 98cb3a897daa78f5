"""Compiled kernel of SGD for pairwise learning over all earlier draws (Yang et al. 2021, Alg. 1/2).

The algorithm, with 0-based array positions (``indices[k]`` is the paper's ``i_{k+1}``)::

    w_1 = 0
    for t = 1 … T:
        w_{t+1} = Π_W(w_t − (η/t) Σ_{k=1}^{t} ∂ℓ(w_t; z_{i_{t+1}}, z_{i_k}))
    w̄_T = (1/T) Σ_{t=1}^{T} w_t

Read literally, step t visits its t earlier draws, so T steps cost O(T²·d). The kernel computes the
same sum grouped by record: with ``c_j`` the number of times record j occurs among ``i_1 … i_t``,
``Σ_k ∂ℓ(w_t; z, z_{i_k}) = Σ_j c_j ∂ℓ(w_t; z, z_j)``, and only records of the other label carry a
gradient (same-label pairs, the record paired with itself included, have none; :mod:`onpair.core.losses`).
Each class keeps a buffer of its records *that have been drawn* (in order of first draw) with their
counts, so step t costs O(#distinct drawn records of the other label · d) = O(min(t, n)·d), and T
steps O(T·n·d). With the paper's T = n² that is O(n³·d).

For a new draw z with label sign s and a drawn record z_j of the other label, the pair margin is
``u_j = s·(wᵀx − wᵀx_j)`` and ``∂ℓ = ℓ'(u_j)·s·(x − x_j)``, so the grouped sum is
``(Σ_j a_j)·x − Σ_j a_j x_j`` with ``a_j = c_j·s·ℓ'(u_j)``: the same three passes (margins, coefficients,
weighted rows) as Pairwise GIGA's full-history gradient, reusing its compiled helpers
(:mod:`onpair.giga._kernels`). Arrays and scalars only; the indices are drawn by the caller from a NumPy
``Generator`` (the kernel touches no random state).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS
from ..core._pair_kernels import _pair_coefficients, _weighted_rows
from ..core.geometry import _project_l2_ball


@njit(**NJIT_OPTIONS)
def _pairwise_sgd(X, signs, indices, n_iterates, eta, radius, loss_code, iterate_sum):
    """Run Yang et al.'s Alg. 1 and return the last iterate ``w_T``; ``iterate_sum ← Σ_{t=1}^{T} w_t``.

    Parameters
    ----------
    X : float64 array of shape (n, d), C-contiguous
        Records, already mapped onto the diameter-2 domain (read only).
    signs : int8 array of shape (n,)
        Labels as ±1 (read only).
    indices : int64 array of shape (≥ T,)
        The draws: ``indices[k]`` is the paper's ``i_{k+1}`` (0-based record numbers; read only).
    n_iterates : int
        T ≥ 1, the number of iterates averaged. Only ``indices[0 … T−1]`` matter: ``w_{T+1}`` (made from
        ``i_{T+1}``) is not in the average, so its step is not computed.
    eta : float
        The step constant η (step t uses η/t).
    radius : float
        R of W = {‖w‖ ≤ R}.
    loss_code : int
        A loss code of :mod:`onpair.core.losses`.
    iterate_sum : float64 array of shape (d,)
        Output: overwritten with Σ_{t=1}^{T} w_t.

    Returns
    -------
    float64 array of shape (d,)
        A new array, the last iterate w_T (w_1 = 0).
    """
    n, d = X.shape
    T = n_iterates
    # Row r of positives/negatives is the r-th distinct record of that class to be drawn; counts[r] is
    # how often it has been drawn so far; slot[j] is record j's row (−1 before its first draw).
    positives = np.empty((n, d))
    negatives = np.empty((n, d))
    pos_counts = np.zeros(n)
    neg_counts = np.zeros(n)
    slot = np.full(n, -1, dtype=np.int64)
    n_pos = 0
    n_neg = 0
    coef = np.empty(n)
    grad = np.empty(d)
    w = np.zeros(d)  # w_1 = 0
    for k in range(d):
        iterate_sum[k] = 0.0  # w_1 contributes 0
    for t in range(1, T + 1):
        if t >= 2:
            # Step t − 1: w_t from w_{t−1}, the new draw i_t = indices[t − 1] against i_1 … i_{t−1}.
            step_index = t - 1
            j = indices[step_index]
            x = X[j]
            if signs[j] > 0:
                sign = 1.0
                history = negatives
                counts = neg_counts
                m = n_neg
            else:
                sign = -1.0
                history = positives
                counts = pos_counts
                m = n_pos
            if m > 0:
                _pair_coefficients(w, x, sign, history, m, loss_code, coef)
                for r in range(m):
                    coef[r] = counts[r] * coef[r]
                total = _weighted_rows(coef, history, m, grad)
                step = eta / step_index
                for k in range(d):
                    w[k] -= step * (total * x[k] - grad[k])
                _project_l2_ball(w, radius)
            # else: no drawn record of the other label yet, the sum is empty and w_t = Π_W(w_{t−1}) = w_{t−1}.
            for k in range(d):
                iterate_sum[k] += w[k]
        # The draw i_t joins the history used from step t on.
        j = indices[t - 1]
        r = slot[j]
        if r < 0:
            if signs[j] > 0:
                r = n_pos
                positives[r, :] = X[j]
                n_pos += 1
            else:
                r = n_neg
                negatives[r, :] = X[j]
                n_neg += 1
            slot[j] = r
        if signs[j] > 0:
            pos_counts[r] += 1.0
        else:
            neg_counts[r] += 1.0
    return w
