"""Compiled pair primitives of the metric task, shared by Pairwise GIGA over symmetric matrices W
(:mod:`onpair.giga._metric_kernels`) and the full-batch gradient and SGD (:mod:`onpair.batch._metric_kernels`).

Same contract as :mod:`onpair.giga._kernels` (arrays and scalars only, state updated in place, a block is
consumed one record at a time, releases with noise drawn by the caller), with the parameter a flat
row-major vector of d² entries and the constraint set one of :mod:`onpair.core.matrix_geometry`.

The round gradient uses the rank-one structure of the pair terms instead of forming a d×d matrix per
pair. With ``v_j = x − x_j`` and weights ``a_j = dℓ/dh(h_j, τ_j)``:

    Σ_j a_j v_j v_jᵀ = A·x xᵀ − x Tᵀ − T xᵀ + S,   A = Σ a_j,  T = Σ a_j x_j,  S = Σ a_j x_j x_jᵀ,
    h_j = v_jᵀ W v_j = xᵀWx − 2 x_jᵀ(Wx) + x_jᵀ W x_j.

Each stored record is kept as one *augmented row* ``r_j = [x_j x_jᵀ (upper triangle, d(d+1)/2 entries),
x_j]``. Then ``x_jᵀ W x_j − 2 x_jᵀ(Wx)`` is one dot product ``ωᵀ r_j`` with ``ω = [W (off-diagonal
entries doubled), −2Wx]`` and ``[S, T] = Σ a_j r_j`` one weighted sum of rows, both in one fused pass
over rows of length d(d+1)/2 + d (``_fused_pass``): about d² multiply-adds per pair in all, half of
what forming ``v vᵀ`` per pair costs, and about 6× faster in ``make bench``.

The history and the buffer are one array of augmented rows: record t goes to ``slots[i]`` (the next
free row for the full history, the FIFO or reservoir slot for a buffer, −1 for none), and the penalty
averages over the rows filled so far (t − 1 of them with the full history, |B_t| with a buffer), which
is κ_t of the sensitivity ledger. Every stored record pairs with the new one (pairs of the same class
have a gradient here, unlike AUC).

**Threshold and pair weights.** Every kernel takes ``terms = [low, high, ω₊, ω₋]``
(:meth:`onpair.core.metric_losses.PairTerms.as_array`). The parameter is W alone (d² entries, threshold
fixed at b = low) or (W, b) (d² + 1 entries, b the last, kept in [low, high] by the projection); a pair
of one class weighs ω₊ and a pair of two classes ω₋. As both losses depend on (W, b) through b − h,
the b entry of the round gradient is −A = −Σ_j a_j, a number the fused pass computes anyway. With
``terms = [1, 1, 1, 1]`` (the papers' losses) every kernel computes what it computed before the
threshold existed, bit for bit (products with 1 and τ = ±1 are exact).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS, NJIT_REDUCTION_OPTIONS
from .matrix_geometry import _project_matrix
from .metric_losses import _metric_pair_dloss, _metric_pair_loss


def augmented_width(d: int) -> int:
    """Length of an augmented row: d(d+1)/2 + d."""
    return d * (d + 1) // 2 + d


@njit(**NJIT_OPTIONS)
def _augmented_row(x, out):
    """out ← [x_k x_l for k ≤ l (row by row), x].

    Parameters
    ----------
    x : float64 array of shape (d,)
        A mapped record (read only).
    out : float64 array of shape (d(d+1)/2 + d,)
        Overwritten with the augmented row.

    Returns
    -------
    None
    """
    d = x.shape[0]
    idx = 0
    for k in range(d):
        xk = x[k]
        for l in range(k, d):
            out[idx] = xk * x[l]
            idx += 1
    for k in range(d):
        out[idx + k] = x[k]


@njit(**NJIT_OPTIONS)
def _quadratic_weights(w, x, d, omega, wx):
    """ω ← [W_kl (×2 off the diagonal), −2Wx] so that ωᵀr_j = x_jᵀWx_j − 2x_jᵀWx; returns xᵀWx.

    Parameters
    ----------
    w : float64 array of shape (d·d,) or (d·d + 1,)
        W, flat row-major and symmetric (read only).
    x : float64 array of shape (d,)
        The round's mapped record (read only).
    d : int
        The side d.
    omega : float64 array of shape (d(d+1)/2 + d,)
        Overwritten with ω, in the order of :func:`_augmented_row`.
    wx : float64 array of shape (d,)
        Overwritten with Wx.

    Returns
    -------
    float
        xᵀWx.
    """
    idx = 0
    for k in range(d):
        omega[idx] = w[k * d + k]
        idx += 1
        for l in range(k + 1, d):
            omega[idx] = 2.0 * w[k * d + l]
            idx += 1
    xwx = 0.0
    for k in range(d):
        acc = 0.0
        for l in range(d):
            acc += w[k * d + l] * x[l]
        wx[k] = acc
        xwx += x[k] * acc
    for k in range(d):
        omega[idx + k] = -2.0 * wx[k]
    return xwx


@njit(**NJIT_OPTIONS)
def _metric_round_gradient(w, x, label, rows, row_labels, n_rows, loss_code, weights, terms, omega, wx, sums, grad):
    """grad ← Σ_j weights[j]·ω_j·∇ℓ(W, b; z, z_j) over the first ``n_rows`` stored rows (not yet divided by
    n_rows; the weights are empty (all 1) for Pairwise GIGA and the draw counts for Yang et al.'s SGD;
    ω_j the pair weight of ``terms``).

    Parameters
    ----------
    w : float64 array of shape (d·d,) or (d·d + 1,)
        W, flat row-major and symmetric, then b when the threshold is learned (read only).
    x : float64 array of shape (d,)
        The new record (read only).
    label : int
        Its class code.
    rows : float64 array of shape (≥ n_rows, d(d+1)/2 + d)
        The stored augmented rows (read only).
    row_labels : int64 array of shape (≥ n_rows,)
        Their class codes (read only).
    n_rows : int
        How many leading rows to pair x with.
    loss_code : int
        A loss code of :mod:`onpair.core.metric_losses`.
    weights : float64 array of shape (0,) or (≥ n_rows,)
        Per-row weights (read only); empty means every weight is 1.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋]: the threshold (b = low when w has d² entries) and the pair weights.
    omega : float64 array of shape (d(d+1)/2 + d,)
        Scratch, overwritten.
    wx : float64 array of shape (d,)
        Scratch, overwritten with Wx.
    sums : float64 array of shape (d(d+1)/2 + d,)
        Scratch, overwritten with Σ_j a_j r_j.
    grad : float64 array of the shape of w
        Overwritten with the weighted sum of pair gradients (the W part exactly symmetric; the b entry,
        if any, −Σ_j a_j).

    Returns
    -------
    None
    """
    d = x.shape[0]
    p = d * d
    threshold = w[p] if w.shape[0] > p else terms[0]
    xwx = _quadratic_weights(w, x, d, omega, wx)
    total = _fused_pass(omega, xwx, rows, row_labels, label, n_rows, loss_code, weights, threshold, terms[2],
                        terms[3], sums)
    _assemble_gradient(total, x, sums, d, grad)
    if grad.shape[0] > p:
        grad[p] = -total


@njit(**NJIT_REDUCTION_OPTIONS)
def _fused_pass(omega, xwx, rows, row_labels, label, n_rows, loss_code, weights, threshold, same_weight,
                different_weight, sums):
    """sums ← Σ_j a_j r_j with a_j = weights[j]·ω(τ_j)·dℓ/dh(h_j, τ_j, b) (weights empty: all 1),
    h_j = xᵀWx + ωᵀr_j, ω(+1) = ω₊ and ω(−1) = ω₋; returns Σ_j a_j.

    One pass over the stored rows, four at a time: their four dot products (independent chains, which
    re-association lets LLVM split into SIMD partial sums, as in ``_history_margins``), their four
    weights, then one element-wise sweep adding the four weighted rows while they are still in L1. The
    rows are read from memory once per round instead of twice (margins, then weighted sum).

    This is one of the two functions compiled with the package's relaxation of IEEE semantics
    (``reassoc`` and ``contract`` on the whole function; docs/algorithms.md#floating-point).

    Parameters
    ----------
    omega : float64 array of shape (width,), width = d(d+1)/2 + d
        ω from :func:`_quadratic_weights` (read only).
    xwx : float
        xᵀWx.
    rows : float64 array of shape (≥ n_rows, width)
        The stored augmented rows (read only).
    row_labels : int64 array of shape (≥ n_rows,)
        Their class codes (read only).
    label : int
        The new record's class code (τ_j = +1 when ``row_labels[j] == label``).
    n_rows : int
        How many leading rows to use.
    loss_code : int
        A loss code of :mod:`onpair.core.metric_losses`.
    weights : float64 array of shape (0,) or (≥ n_rows,)
        Per-row weights (read only); empty means every weight is 1.
    threshold : float
        The threshold b.
    same_weight : float
        ω₊, the weight of a pair of one class.
    different_weight : float
        ω₋, the weight of a pair of two classes.
    sums : float64 array of shape (width,)
        Overwritten with Σ_j a_j r_j = [S (upper triangle), T].

    Returns
    -------
    float
        A = Σ_j a_j.
    """
    width = sums.shape[0]
    weighted = weights.shape[0] > 0
    for k in range(width):
        sums[k] = 0.0
    c0 = 0.0
    c1 = 0.0
    c2 = 0.0
    c3 = 0.0
    j = 0
    while j + 4 <= n_rows:
        r0 = rows[j]
        r1 = rows[j + 1]
        r2 = rows[j + 2]
        r3 = rows[j + 3]
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for k in range(width):
            o = omega[k]
            s0 += o * r0[k]
            s1 += o * r1[k]
            s2 += o * r2[k]
            s3 += o * r3[k]
        t0 = 1.0 if row_labels[j] == label else -1.0
        a0 = ((weights[j] if weighted else 1.0) * (same_weight if t0 > 0.0 else different_weight)
              * _metric_pair_dloss(loss_code, xwx + s0, t0, threshold))
        t1 = 1.0 if row_labels[j + 1] == label else -1.0
        a1 = ((weights[j + 1] if weighted else 1.0) * (same_weight if t1 > 0.0 else different_weight)
              * _metric_pair_dloss(loss_code, xwx + s1, t1, threshold))
        t2 = 1.0 if row_labels[j + 2] == label else -1.0
        a2 = ((weights[j + 2] if weighted else 1.0) * (same_weight if t2 > 0.0 else different_weight)
              * _metric_pair_dloss(loss_code, xwx + s2, t2, threshold))
        t3 = 1.0 if row_labels[j + 3] == label else -1.0
        a3 = ((weights[j + 3] if weighted else 1.0) * (same_weight if t3 > 0.0 else different_weight)
              * _metric_pair_dloss(loss_code, xwx + s3, t3, threshold))
        for k in range(width):
            sums[k] = (((sums[k] + a0 * r0[k]) + a1 * r1[k]) + a2 * r2[k]) + a3 * r3[k]
        c0 += a0
        c1 += a1
        c2 += a2
        c3 += a3
        j += 4
    while j < n_rows:
        row = rows[j]
        s = 0.0
        for k in range(width):
            s += omega[k] * row[k]
        tau = 1.0 if row_labels[j] == label else -1.0
        a = ((weights[j] if weighted else 1.0) * (same_weight if tau > 0.0 else different_weight)
             * _metric_pair_dloss(loss_code, xwx + s, tau, threshold))
        for k in range(width):
            sums[k] += a * row[k]
        c0 += a
        j += 1
    return (c0 + c1) + (c2 + c3)


@njit(**NJIT_OPTIONS)
def _assemble_gradient(total, x, sums, d, grad):
    """grad ← A·x xᵀ − x Tᵀ − T xᵀ + S from ``total`` = A and ``sums`` = [S (upper triangle), T];
    the upper triangle is computed and mirrored, so grad is exactly symmetric.

    Parameters
    ----------
    total : float
        A = Σ_j a_j.
    x : float64 array of shape (d,)
        The new record (read only).
    sums : float64 array of shape (d(d+1)/2 + d,)
        [S (upper triangle), T] (read only).
    d : int
        The side d.
    grad : float64 array of shape (d·d,)
        Overwritten entirely with A·xxᵀ − xTᵀ − Txᵀ + S, flat row-major.

    Returns
    -------
    None
    """
    tri = d * (d + 1) // 2
    idx = 0
    for k in range(d):
        xk = x[k]
        tk = sums[tri + k]
        for l in range(k, d):
            value = total * xk * x[l] - xk * sums[tri + l] - tk * x[l] + sums[idx]
            grad[k * d + l] = value
            grad[l * d + k] = value
            idx += 1


@njit(**NJIT_OPTIONS)
def _project_parameter(w, d, radius, constraint, terms):
    """Π_C of the parameter in place: W onto its constraint set, and a learned b clipped into [low, high].

    The set of (W, b) is the product C × [low, high], so its Euclidean projection in the norm
    ‖(W, b)‖² = ‖W‖²_F + b² is the two projections side by side (non-expansive, as the ledger needs).

    Parameters
    ----------
    w : float64 array of shape (d·d,) or (d·d + 1,)
        W (flat row-major, symmetric), then b when learned; overwritten with the projection.
    d : int
        The side d.
    radius : float
        R of the constraint set.
    constraint : int
        A constraint code of :mod:`onpair.core.matrix_geometry`.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋] (only low and high are read).

    Returns
    -------
    None
    """
    p = d * d
    if w.shape[0] == p:
        _project_matrix(w, d, radius, constraint)
        return
    matrix = w[:p].copy()
    _project_matrix(matrix, d, radius, constraint)
    for k in range(p):
        w[k] = matrix[k]
    w[p] = min(max(w[p], terms[0]), terms[1])


@njit(**NJIT_OPTIONS)
def _metric_risk(W, Z, labels, loss_code, terms):
    """Mean of ω_ij·ℓ(W, b; z_i, z_j) over the unordered pairs i < j (= the ordered-pair mean: ℓ is
    symmetric).

    Parameters
    ----------
    W : float64 array of shape (d·d,) or (d·d + 1,)
        The metric, flat row-major and symmetric, then b if learned (read only).
    Z : float64 array of shape (n, d)
        Mapped records (read only).
    labels : int64 array of shape (n,)
        Their class codes (read only).
    loss_code : int
        A loss code of :mod:`onpair.core.metric_losses`.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋] (see :func:`_metric_giga`).

    Returns
    -------
    float
        The mean weighted pair loss, 0.0 when n < 2.
    """
    n, d = Z.shape
    threshold = W[d * d] if W.shape[0] > d * d else terms[0]
    # h_ij = q_i + q_j − 2 z_jᵀ(W z_i) with q_i = z_iᵀ W z_i: O(d²) per record, then O(d) per pair.
    Wz = np.empty((n, d))
    q = np.empty(n)
    for i in range(n):
        qi = 0.0
        for k in range(d):
            acc = 0.0
            for l in range(d):
                acc += W[k * d + l] * Z[i, l]
            Wz[i, k] = acc
            qi += Z[i, k] * acc
        q[i] = qi
    total = 0.0
    from_pairs = 0
    for i in range(n):
        for j in range(i + 1, n):
            cross = 0.0
            for k in range(d):
                cross += Z[j, k] * Wz[i, k]
            h = q[i] + q[j] - 2.0 * cross
            tau = 1.0 if labels[i] == labels[j] else -1.0
            total += (terms[2] if tau > 0.0 else terms[3]) * _metric_pair_loss(loss_code, h, tau, threshold)
            from_pairs += 1
    return total / from_pairs if from_pairs else 0.0
