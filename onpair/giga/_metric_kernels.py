"""Compiled kernels of the metric task: Pairwise GIGA over symmetric matrices W (Huai et al. Example 1).

Same contract as :mod:`onpair._kernels` (arrays and scalars only, state updated in place, a block is
consumed one record at a time, releases with noise drawn by the caller), with the parameter a flat
row-major vector of d² entries and the constraint set one of :mod:`onpair.matrix_geometry`.

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
(:meth:`onpair.metric_losses.PairTerms.as_array`). The parameter is W alone (d² entries, threshold
fixed at b = low) or (W, b) (d² + 1 entries, b the last, kept in [low, high] by the projection); a pair
of one class weighs ω₊ and a pair of two classes ω₋. As both losses depend on (W, b) through b − h,
the b entry of the round gradient is −A = −Σ_j a_j, a number the fused pass computes anyway. With
``terms = [1, 1, 1, 1]`` (the papers' losses) every kernel computes what it computed before the
threshold existed, bit for bit (products with 1 and τ = ±1 are exact).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..core._config import NJIT_OPTIONS, NJIT_REDUCTION_OPTIONS
from ..core.matrix_geometry import _project_matrix
from ..core.metric_losses import _metric_pair_dloss, _metric_pair_loss


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
        A loss code of :mod:`onpair.metric_losses`.
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
        A loss code of :mod:`onpair.metric_losses`.
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
        A constraint code of :mod:`onpair.matrix_geometry`.
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
        A constraint code of :mod:`onpair.matrix_geometry`.
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
        A constraint code of :mod:`onpair.matrix_geometry`.
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
        A constraint code of :mod:`onpair.matrix_geometry`.
    loss_code : int
        :data:`onpair.metric_losses.METRIC_LOGISTIC` or ``METRIC_HINGE``.
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
def _metric_pair_outer_giga(
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
        A constraint code of :mod:`onpair.matrix_geometry`.
    loss_code : int
        :data:`onpair.metric_losses.METRIC_LOGISTIC` or ``METRIC_HINGE``.
    terms : float64 array of shape (4,)
        [low, high, ω₊, ω₋] (see :func:`_metric_giga`).

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
                a = (terms[2] if tau > 0.0 else terms[3]) * _metric_pair_dloss(loss_code, h, tau, threshold)
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
            _metric_regularised_step(w, grad, steps[i], lam, center, radius, d, constraint, terms)
        history[n_rows, :] = x
        history_labels[n_rows] = labels[i]
        n_rows += 1
    return n_rows


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
        A loss code of :mod:`onpair.metric_losses`.
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
        A loss code of :mod:`onpair.metric_losses`.
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


@njit(**NJIT_OPTIONS)
def _metric_pairwise_sgd(X, labels, indices, n_iterates, eta, radius, constraint, loss_code, terms, w, iterate_sum):
    """Yang et al.'s Alg. 1 for the metric task (see :mod:`onpair._sgd_kernels` for the AUC version).

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
        A constraint code of :mod:`onpair.matrix_geometry`.
    loss_code : int
        A loss code of :mod:`onpair.metric_losses`.
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
        A constraint code of :mod:`onpair.matrix_geometry`.
    loss_code : int
        A loss code of :mod:`onpair.metric_losses`.
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
