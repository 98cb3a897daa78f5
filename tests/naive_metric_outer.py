"""The per-pair formulation of Pairwise GIGA's metric step that the fused rank-one pass replaced, compiled: each
stored pair forms ``v vᵀ`` (v = x − x_j) and adds it to the gradient. A reference for the fused kernel's tests
(tests/test_metric_kernels.py, tests/test_metric_threshold.py) and the baseline of bench/metric_speed.py. It
shares the projected step and the pair loss's derivative with the library (those have their own twins in
:mod:`naive_metric`): what it checks is the pair sum.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onpair._config import NJIT_OPTIONS
from onpair.core import metric_losses
from onpair.giga import _metric_kernels


@njit(**NJIT_OPTIONS)
def metric_pair_outer_giga(
    X, labels, w, history, history_labels, n_rows, t_start, steps, lam, center, radius, constraint, loss_code, terms,
):
    """The same full-history steps, forming ``v vᵀ`` per pair (kept to measure the rank-one version
    against in ``make bench``; tests check both give the same iterates). Returns the new ``n_rows``.

    Parameters
    ----------
    X : float64 array of shape (m, d), C-contiguous
        The block's mapped records (read only).
    labels : int64 array of shape (m,)
        Their class codes (read only).
    w : float64 array of shape (p,), p = d·d or d·d + 1
        The iterate W, updated in place.
    history : float64 array of shape (≥ n_rows + m, d)
        Rows ``[0, n_rows)`` are the stored records; the block's records are appended in place.
    history_labels : int64 array of shape (≥ n_rows + m,)
        Their class codes, appended in place.
    n_rows : int
        Stored records before the block.
    t_start : int
        Rounds already learned; record i of the block is round ``t_start + i + 1``.
    steps : float64 array of shape (m,)
        η of each round (0 at round 1; read only).
    lam : float
        λ of the regulariser (λ/2)‖W − center‖²_F.
    center : float64 array of shape (p,)
        Its centre W₀, flat (read only).
    radius : float
        R of the constraint set.
    constraint : int
        A constraint code of :mod:`onpair.core.matrix_geometry`.
    loss_code : int
        :data:`onpair.core.metric_losses.METRIC_LOGISTIC` or ``METRIC_HINGE``.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋] (see ``onpair.giga._metric_kernels._metric_giga``).

    Returns
    -------
    int
        ``n_rows`` after the block (no release and no iterate sum here).
    """
    m, d = X.shape
    p = w.shape[0]
    q = d * d
    grad = np.empty(p)
    v = np.empty(d)
    wv = np.empty(d)
    for i in range(m):
        t = t_start + i + 1
        x = X[i]
        if t >= 2 and n_rows > 0:
            for k in range(p):
                grad[k] = 0.0
            for j in range(n_rows):
                for k in range(d):
                    v[k] = x[k] - history[j, k]
                h = 0.0
                for k in range(d):
                    acc = 0.0
                    for l in range(d):
                        acc += w[k * d + l] * v[l]
                    wv[k] = acc
                    h += v[k] * acc
                tau = 1.0 if history_labels[j] == labels[i] else -1.0
                threshold = w[q] if p > q else terms[0]
                a = (terms[2] if tau > 0.0 else terms[3]) * metric_losses._metric_pair_dloss(loss_code, h, tau, threshold)
                for k in range(d):
                    avk = a * v[k]
                    for l in range(k, d):
                        grad[k * d + l] += avk * v[l]
                if p > q:
                    grad[q] -= a
            for k in range(d):
                for l in range(k + 1, d):
                    grad[l * d + k] = grad[k * d + l]  # mirror: exactly symmetric
            inv = 1.0 / n_rows
            for k in range(p):
                grad[k] *= inv
            _metric_kernels._metric_regularised_step(w, grad, steps[i], lam, center, radius, d, constraint, terms)
        history[n_rows, :] = x
        history_labels[n_rows] = labels[i]
        n_rows += 1
    return n_rows
