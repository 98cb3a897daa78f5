"""Compiled kernels of Pairwise GIGA for the metric task (Huai et al. Example 1): the projected step, the
release, the learning loops over augmented rows and their single-record form.

The contract and the augmented rows are those of :mod:`onpair.core._metric_pair_kernels`; the formulation the
fused pass replaced (``v vᵀ`` per pair) is the compiled reference ``tests/naive_metric.py::metric_pair_outer_giga``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS
from ..core._metric_pair_kernels import _augmented_row, _metric_round_gradient, _project_parameter


@njit(**NJIT_OPTIONS)
def _metric_regularised_step(w, grad, step, lam, center, radius, d, constraint, terms):
    """(W, b) ← Π_C[(W, b) − step·(grad + λ((W, b) − center))] (symmetric in, symmetric out).

    Parameters
    ----------
    w : float64 array of shape (d·d,) or (d·d + 1,)
        W, flat row-major and symmetric (then b if learned); updated in place and projected.
    grad : float64 array of the shape of w
        Gradient of the data term at (W, b), W part symmetric (read only).
    step : float
        η_t ≥ 0.
    lam : float
        λ of the regulariser.
    center : float64 array of the shape of w
        Its centre (W₀, b₀) (read only).
    radius : float
        R of the constraint set.
    d : int
        The side d.
    constraint : int
        A constraint code of :mod:`onpair.core.matrix_geometry`.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋] (the interval of b).

    Returns
    -------
    None
    """
    for k in range(w.shape[0]):
        w[k] -= step * (grad[k] + lam * (w[k] - center[k]))
    _project_parameter(w, d, radius, constraint, terms)


@njit(**NJIT_OPTIONS)
def _metric_release_into(w, sigma, noise_row, radius, d, constraint, terms, out_row):
    """out_row ← Π_C[(W, b) + σ·N] with N symmetric (Gaussian mechanism, then projection).

    Parameters
    ----------
    w : float64 array of shape (d·d,) or (d·d + 1,)
        The internal iterate (W, b) (read only: it never leaves the learner).
    sigma : float
        σ of this release.
    noise_row : float64 array of the shape of w
        Symmetric standard noise, (Z + Zᵀ)/2 flattened, then one standard normal for a learned b: isotropic
        in the norm ‖(W, b)‖ (docs/algorithms.md#symmetric-noise; read only).
    radius : float
        R of the constraint set.
    d : int
        The side d.
    constraint : int
        A constraint code of :mod:`onpair.core.matrix_geometry`.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋] (the interval of b).
    out_row : float64 array of the shape of w
        Overwritten with the released parameter.

    Returns
    -------
    None
    """
    for k in range(w.shape[0]):
        out_row[k] = w[k] + sigma * noise_row[k]
    _project_parameter(out_row, d, radius, constraint, terms)


@njit(**NJIT_OPTIONS)
def _metric_giga(
    X, labels, w, rows, row_labels, n_rows, t_start, steps, lam, center, radius, constraint, loss_code, terms, slots,
    release_slot, sigmas, noise, released, iterate_sum,
):
    """Pairwise GIGA of the metric task over a block (full history or buffer, see the module docstring).

    ``X``: (m, d) mapped records; ``labels``: int64 class codes; ``w``, ``center``, ``iterate_sum``:
    flat vectors of p = d² entries (d² + 1 with a learned threshold b, the last);
    ``rows``/``row_labels``: stored augmented rows and their labels, ``n_rows`` of them filled; ``slots[i]``: where record i is stored after its step (−1: not stored). Returns the new
    ``n_rows``.

    Parameters
    ----------
    X : float64 array of shape (m, d), C-contiguous
        The block's mapped records (read only).
    labels : int64 array of shape (m,)
        Their class codes (read only).
    w : float64 array of shape (p,), p = d·d or d·d + 1
        The internal iterate W (then b if learned), updated in place.
    rows : float64 array of shape (capacity, d(d+1)/2 + d)
        The stored augmented rows; a stored record overwrites its row in place.
    row_labels : int64 array of shape (capacity,)
        Their class codes, updated in place.
    n_rows : int
        Rows ``[0, n_rows)`` are filled (the fill before the block).
    t_start : int
        Rounds already learned; record i of the block is round ``t_start + i + 1``.
    steps : float64 array of shape (m,)
        η of each round (0 at round 1; read only).
    lam : float
        λ of the regulariser (λ/2)‖W − center‖²_F.
    center : float64 array of shape (p,)
        Its centre (W₀, b₀), flat (read only).
    radius : float
        R of the constraint set.
    constraint : int
        A constraint code of :mod:`onpair.core.matrix_geometry`.
    loss_code : int
        :data:`onpair.core.metric_losses.METRIC_LOGISTIC` or ``METRIC_HINGE``.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋]: the threshold (fixed b = low when p = d·d) and the pair weights.
    slots : int64 array of shape (m,)
        The row record i goes to after its step (the next free row for the full history, the FIFO or
        reservoir slot for a buffer), −1 for none (read only).
    release_slot : int64 array of shape (m,)
        ``release_slot[i] = k ≥ 0``: round i of the block releases into ``released[k]``; −1: no release.
    sigmas : float64 array of shape (n_releases,)
        σ of each release (read only).
    noise : float64 array of shape (n_releases, p)
        Symmetric standard noise, (Z + Zᵀ)/2 flattened, then one standard normal for b
        (docs/algorithms.md#symmetric-noise; read only).
    released : float64 array of shape (n_releases, p)
        Row k is overwritten with release k, Π_C[W_t + sigmas[k]·noise[k]].
    iterate_sum : float64 array of shape (p,)
        Σ_t W_t; each round's iterate is added in place.

    Returns
    -------
    int
        The fill ``n_rows`` after the block.
    """
    m, d = X.shape
    width = rows.shape[1]
    p = w.shape[0]
    grad = np.empty(p)
    omega = np.empty(width)
    sums = np.empty(width)
    wx = np.empty(d)
    unweighted = np.empty(0)  # every pair weight 1 (no O(capacity) array per call)
    for i in range(m):
        t = t_start + i + 1
        x = X[i]
        if t >= 2:
            if n_rows > 0:
                _metric_round_gradient(w, x, labels[i], rows, row_labels, n_rows, loss_code, unweighted, terms,
                                       omega, wx, sums, grad)
                inv = 1.0 / n_rows
                for k in range(p):
                    grad[k] *= inv
            else:
                for k in range(p):
                    grad[k] = 0.0
            _metric_regularised_step(w, grad, steps[i], lam, center, radius, d, constraint, terms)
        slot = slots[i]
        if slot >= 0:
            _augmented_row(x, rows[slot])
            row_labels[slot] = labels[i]
            if slot >= n_rows:
                n_rows = slot + 1
        for k in range(p):
            iterate_sum[k] += w[k]
        r = release_slot[i]
        if r >= 0:
            _metric_release_into(w, sigmas[r], noise[r], radius, d, constraint, terms, released[r])
    return n_rows


@njit(**NJIT_OPTIONS)
def _metric_giga_one(x, code, w, rows, row_labels, n_rows, t, step, lam, center, radius, constraint, loss_code, terms,
                     slot, iterate_sum):
    """One record of round ``t`` through :func:`_metric_giga` (learn_one's fast path; no release here, a
    release round takes the general path), so the arithmetic is the block kernel's by construction.

    Parameters
    ----------
    x : float64 array of shape (d,)
        The mapped record (read only).
    code : int
        Its class code.
    w : float64 array of shape (p,), p = d·d or d·d + 1
        The internal iterate W (then b if learned), updated in place.
    rows : float64 array of shape (capacity, d(d+1)/2 + d)
        The stored augmented rows; the record overwrites row ``slot`` in place.
    row_labels : int64 array of shape (capacity,)
        Their class codes, updated in place.
    n_rows : int
        The fill before this round.
    t : int
        The record's round, ≥ 1.
    step : float
        η_t.
    lam : float
        λ of the regulariser.
    center : float64 array of shape (p,)
        Its centre W₀ (read only).
    radius : float
        R of the constraint set.
    constraint : int
        A constraint code of :mod:`onpair.core.matrix_geometry`.
    loss_code : int
        A loss code of :mod:`onpair.core.metric_losses`.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋] (see :func:`_metric_giga`).
    slot : int
        The record's row after its step, −1 for none.
    iterate_sum : float64 array of shape (p,)
        Σ_t W_t; W_t is added in place.

    Returns
    -------
    int
        The fill after the round.
    """
    d = x.shape[0]
    X = np.empty((1, d))
    for k in range(d):
        X[0, k] = x[k]
    labels = np.empty(1, dtype=np.int64)
    labels[0] = code
    steps = np.empty(1)
    steps[0] = step
    slots = np.empty(1, dtype=np.int64)
    slots[0] = slot
    no_release = np.full(1, -1, dtype=np.int64)
    empty = np.empty((0, w.shape[0]))
    return _metric_giga(X, labels, w, rows, row_labels, n_rows, t - 1, steps, lam, center, radius, constraint,
                        loss_code, terms, slots, no_release, np.empty(0), empty, empty, iterate_sum)
