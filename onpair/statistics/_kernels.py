"""Compiled pieces of the pairwise statistics: one record's contribution v(z), and the vech map.

Record z = (x, y) with x already mapped into the unit ball and y a class code c ∈ {0, …, C−1}
contributes the row

    v(z) = [0, …, 0, a, b·x, m·vech(xxᵀ), 0, …, 0]      (block c of length q = 1 + d + d(d+1)/2)

where vech lists the upper triangle row by row with the off-diagonal entries multiplied by √2, so that
‖vech(M)‖₂ = ‖M‖_F for a symmetric M (orthonormal coordinates of the symmetric matrices). The prefix sum
of these rows holds, per class, a·(count), b·(sum of x) and m·vech(sum of xxᵀ)
(docs/algorithms.md#continual-release, :mod:`onpair.statistics.released`).

The **pooled** layout (the classifier's, ``moments="pooled"``) keeps the counts and sums per class and one
second moment for all classes:

    v(z) = [0, …, 0, a, b·x, 0, …, 0 | m·vech(xxᵀ)]      (C blocks of length 1 + d, then one of d(d+1)/2)

(its sensitivity: :func:`onpair.privacy.statistics_sensitivity.statistics_sensitivity`, the same Δ).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS
from ..core.bounds import _clip_box_row
from ..privacy.continual._blt_kernels import blt_record
from ..privacy.continual._kernels import add_rows_in_order


def block_length(d: int) -> int:
    """q = 1 + d + d(d+1)/2: entries of one class's block."""
    return 1 + d + d * (d + 1) // 2


def layout_width(d: int, n_classes: int, pooled: bool = False) -> int:
    """Entries of one row v(z): C·q (one block per class), or C·(1 + d) + d(d+1)/2 for the pooled layout.

    Examples
    --------
    >>> layout_width(2, 3), layout_width(2, 3, pooled=True)
    (18, 12)
    """
    return n_classes * (1 + d) + d * (d + 1) // 2 if pooled else n_classes * block_length(d)


@njit(**NJIT_OPTIONS)
def _fill_row(z, sum_base, moment_base, weights, row):
    """Write a at ``sum_base``, b·z after it and m·vech(zzᵀ) from ``moment_base`` into ``row`` (the other
    entries are left as they are): the arithmetic of every row of both layouts.

    Parameters
    ----------
    z : ndarray of float64, shape (d,)
        The mapped record; read only.
    sum_base, moment_base : int
        Where the record's count and its second moment go.
    weights : ndarray of float64, shape (3,)
        (a, b, m); read only.
    row : ndarray of float64
        Updated in place.
    """
    d = z.shape[0]
    root2 = math.sqrt(2.0)
    a, b, mw = weights[0], weights[1], weights[2]
    row[sum_base] = a
    for k in range(d):
        row[sum_base + 1 + k] = b * z[k]
    idx = moment_base
    for k in range(d):
        xk = z[k]
        row[idx] = mw * xk * xk
        idx += 1
        for l in range(k + 1, d):
            row[idx] = mw * root2 * xk * z[l]
            idx += 1


@njit(**NJIT_OPTIONS)
def _layout_rows(Z, codes, n_classes, weights, pooled, out):
    """Write the contribution v(z) of every record into the rows of ``out`` (zeros elsewhere), in the per-class
    layout or, with ``pooled``, the pooled one (module docstring): the one row builder of the statistics family
    (a record is a block of one).

    Parameters
    ----------
    Z : ndarray of float64, shape (m, d)
        Records mapped into the unit ball; read only.
    codes : ndarray of int64, shape (m,)
        Class codes, in [0, C); read only.
    n_classes : int
        C (read by the pooled layout only).
    weights : ndarray of float64, shape (3,)
        (a, b, m); read only.
    pooled : bool
        The pooled layout (one second moment for all classes) or the per-class one.
    out : ndarray of float64, shape (m, layout width)
        Written in place (every entry).
    """
    d = Z.shape[1]
    q = 1 + d + d * (d + 1) // 2
    for i in range(Z.shape[0]):
        row = out[i]
        row[:] = 0.0
        code = codes[i]
        if pooled:
            _fill_row(Z[i], code * (1 + d), n_classes * (1 + d), weights, row)
        else:
            _fill_row(Z[i], code * q, code * q + 1 + d, weights, row)


#: What :func:`_box_blt_record` returns when the normal block holds fewer than k normals (nothing changed).
NEED_NORMALS = -3


@njit(**NJIT_OPTIONS)
def _box_blt_record(x, constants, code, clip, n_classes, pooled, normals, pos, end, state):
    """The fused single-record path of a BLT release (:meth:`onpair.statistics.released.ReleasedStatistics.add_record`):
    one raw record through the box map (:func:`onpair.core.bounds._clip_box_row`), into its row v(z) (the
    arithmetic of :func:`_layout_rows`) and through the mechanism's compiled step
    :func:`onpair.privacy.continual._blt_kernels.blt_record` with the k normals ``normals[pos:pos + k]``, in one
    call: the same operations as the block path (map, :func:`_layout_rows`, ``add_block``), so the same bits.

    Parameters
    ----------
    x : ndarray of float64, shape (d,)
        The raw record; read only.
    constants : ndarray of float64, shape (3d + 3 + 2m + 1,)
        Public constants, concatenated (:func:`box_blt_constants`): the box's lower, upper and half-scale
        rows, the weights (a, b, m), the mechanism's ω and θ, and γ.
    code : int
        The class code.
    clip : bool
        Whether a record outside the box is added (clipped); otherwise it is left to the caller.
    n_classes : int
        C (read by the pooled layout only).
    pooled : bool
        The layout.
    normals : ndarray of float64
        The normal block; the k values from ``pos`` are consumed (overwritten) when the record is added.
    pos, end : int
        normals[pos:end] are the block's unconsumed values.
    state : ndarray of float64, shape (m + 2, k)
        The mechanism's buffers, data sums and noise sums
        (:meth:`onpair.privacy.continual.BufferedToeplitz.step_arrays`).

    Returns
    -------
    int
        0 (added, inside the box), 1 (added, clipped), −1 (NaN or ±inf: nothing changed), −2 (outside the
        box and ``clip`` false: nothing changed), :data:`NEED_NORMALS` (a record to add, but fewer than k
        normals left in the block: nothing changed; the caller refills the block and calls again).
    """
    d = x.shape[0]
    k = state.shape[1]
    m = state.shape[0] - 2
    row = np.empty((1, k))
    status = _box_record_row(x, constants, code, clip, n_classes, pooled, row)
    if status < 0:
        return status
    if end - pos < k:
        return NEED_NORMALS
    at = 3 * d + 3
    blt_record(row[0], normals[pos:pos + k], constants[at:at + m], constants[at + m:at + 2 * m],
               constants[at + 2 * m], state[:m], state[m], state[m + 1])
    return status


@njit(**NJIT_OPTIONS)
def _box_sum_record(x, constants, code, clip, n_classes, pooled, dest):
    """The fused single-record path of a block release without fresh share
    (:meth:`onpair.statistics.released.ReleasedStatistics.add_record`): one raw record through the box map
    (:func:`onpair.core.bounds._clip_box_row`), into its row v(z) (:func:`_layout_rows`) and added to the
    current block's sum (:meth:`onpair.privacy.continual.BlockRelease.sum_step`, by
    :func:`onpair.privacy.continual._kernels.add_rows_in_order`), in one call and without noise (a block is
    released once, at its end, by the caller): the block path's operations, so the same bits.

    Parameters
    ----------
    x : ndarray of float64, shape (d,)
        The raw record; read only.
    constants : ndarray of float64, shape (3d + 3,) or longer
        Public constants (:func:`box_blt_constants`): the box's lower, upper and half-scale rows and the
        weights (a, b, m); anything after them is not read.
    code : int
        The class code.
    clip : bool
        Whether a record outside the box is added (clipped); otherwise it is left to the caller.
    n_classes : int
        C (read by the pooled layout only).
    pooled : bool
        The layout.
    dest : ndarray of float64, shape (k,)
        The current block's sum; the record's row is added in place when the record is added.

    Returns
    -------
    int
        0 (added, inside the box), 1 (added, clipped), −1 (NaN or ±inf: nothing changed), −2 (outside the
        box and ``clip`` false: nothing changed).
    """
    row = np.empty((1, dest.shape[0]))
    status = _box_record_row(x, constants, code, clip, n_classes, pooled, row)
    if status >= 0:
        add_rows_in_order(row, dest)
    return status


@njit(**NJIT_OPTIONS)
def _box_record_row(x, constants, code, clip, n_classes, pooled, row):
    """One raw record through the box map (:func:`onpair.core.bounds._clip_box_row`) into its row v(z) (the
    arithmetic of :func:`_layout_rows`, which it calls): the part the two fused record kernels share.

    Parameters
    ----------
    x : ndarray of float64, shape (d,)
        The raw record; read only.
    constants : ndarray of float64, shape (3d + 3,) or longer
        The box's lower, upper and half-scale rows and the weights (a, b, m) (:func:`box_blt_constants`).
    code : int
        The class code.
    clip : bool
        Whether a record outside the box is mapped (clipped); otherwise it is left to the caller.
    n_classes : int
        C (read by the pooled layout only).
    pooled : bool
        The layout.
    row : ndarray of float64, shape (1, k)
        Written with v(z) when the record is mapped (status 0 or 1); untouched otherwise.

    Returns
    -------
    int
        0 (inside the box), 1 (clipped), −1 (NaN or ±inf), −2 (outside the box and ``clip`` false).
    """
    d = x.shape[0]
    z = np.empty((1, d))
    status = _clip_box_row(x, constants[:d], constants[d:2 * d], constants[2 * d:3 * d], z[0])
    if status < 0:
        return -1
    if status > 0 and not clip:
        return -2
    codes = np.empty(1, dtype=np.int64)
    codes[0] = code
    _layout_rows(z, codes, n_classes, constants[3 * d:3 * d + 3], pooled, row)
    return status


def box_blt_constants(box, weights, omega, theta, decay) -> np.ndarray:
    """The ``constants`` of :func:`_box_blt_record`: public numbers, concatenated once per box."""
    return np.ascontiguousarray(np.concatenate([*box, weights, omega, theta, [decay]]), dtype=np.float64)


@njit(**NJIT_OPTIONS)
def _decode_statistics(estimate, n_classes, d, weights, floor, counts, means, covariances):
    """Per-class counts, means and covariances from a released prefix sum of the rows v(z).

    Parameters
    ----------
    estimate : ndarray of float64, shape (C·q,)
        The released prefix sum; read only.
    n_classes : int
        C.
    d : int
        Number of features.
    weights : ndarray of float64, shape (3,)
        (a, b, m), a > 0 and b > 0; read only.
    floor : float
        Counts below it are raised to it.
    counts : ndarray of float64, shape (C,)
        Overwritten: n̂_c = max(estimate/a, floor).
    means : ndarray of float64, shape (C, d)
        Overwritten: μ_c = ŝ_c/(b·n̂_c).
    covariances : ndarray of float64, shape (C, d, d)
        Overwritten: M̂_c/(m·n̂_c) − μ_cμ_cᵀ, symmetric, not projected (zero when m = 0).
    """
    q = 1 + d + d * (d + 1) // 2
    inv_root2 = 1.0 / math.sqrt(2.0)
    a, b, mw = weights[0], weights[1], weights[2]
    for c in range(n_classes):
        base = c * q
        n = estimate[base] / a
        if n < floor:
            n = floor
        counts[c] = n
        for k in range(d):
            means[c, k] = estimate[base + 1 + k] / (b * n)
        idx = base + 1 + d
        for k in range(d):
            for l in range(k, d):
                if mw > 0.0:
                    value = estimate[idx] / (mw * n)
                    if l != k:
                        value *= inv_root2
                    value -= means[c, k] * means[c, l]
                else:
                    value = 0.0
                covariances[c, k, l] = value
                covariances[c, l, k] = value
                idx += 1


@njit(**NJIT_OPTIONS)
def _decode_pooled(estimate, n_classes, d, weights, floor, counts, means, covariances):
    """:func:`_decode_statistics` for the pooled layout: per-class counts and means as there, and in every
    class's slot the one pooled within-class covariance (M̂/m − Σ_c n̂_c μ_cμ_cᵀ)/Σ_c n̂_c (zero when m = 0).

    Parameters as for :func:`_decode_statistics`, with ``estimate`` of shape (C·(1 + d) + d(d+1)/2,).
    """
    inv_root2 = 1.0 / math.sqrt(2.0)
    a, b, mw = weights[0], weights[1], weights[2]
    total = 0.0
    for c in range(n_classes):
        base = c * (1 + d)
        n = estimate[base] / a
        if n < floor:
            n = floor
        counts[c] = n
        total += n
        for k in range(d):
            means[c, k] = estimate[base + 1 + k] / (b * n)
    idx = n_classes * (1 + d)
    for k in range(d):
        for l in range(k, d):
            value = 0.0
            if mw > 0.0:
                value = estimate[idx] / mw
                if l != k:
                    value *= inv_root2
                for c in range(n_classes):
                    value -= counts[c] * means[c, k] * means[c, l]
                value /= total
            for c in range(n_classes):
                covariances[c, k, l] = value
                covariances[c, l, k] = value
            idx += 1


@njit(**NJIT_OPTIONS)
def _cholesky_lower(A, L):
    """The Cholesky factor of a symmetric A into L (lower triangle written; the rest left as it is): True, or
    False where a pivot is not above 10⁻¹⁴·|A_jj| (A not numerically positive definite), the test of
    :func:`_cholesky_solve`, which calls it.

    Parameters
    ----------
    A : ndarray of float64, shape (d, d)
        Symmetric; read only (its lower triangle).
    L : ndarray of float64, shape (d, d)
        Written (lower triangle).
    """
    d = A.shape[0]
    for j in range(d):
        total = A[j, j]
        for k in range(j):
            total -= L[j, k] * L[j, k]
        if not total > 1e-14 * (abs(A[j, j]) + 1e-300):
            return False
        L[j, j] = math.sqrt(total)
        for i in range(j + 1, d):
            total = A[i, j]
            for k in range(j):
                total -= L[i, k] * L[j, k]
            L[i, j] = total / L[j, j]
    return True


@njit(**NJIT_OPTIONS)
def _cholesky_solve(A, rhs, out):
    """Solve A·out = rhs for a symmetric positive-definite A by Cholesky; False (out unspecified) if A is
    not numerically positive definite (the caller then projects onto the PSD cone).

    Parameters
    ----------
    A : ndarray of float64, shape (d, d)
        Symmetric; read only (only its lower triangle is used).
    rhs : ndarray of float64, shape (d,)
        Read only.
    out : ndarray of float64, shape (d,)
        Overwritten with the solution.

    Returns
    -------
    bool
        Whether the factorisation succeeded.
    """
    d = A.shape[0]
    L = np.zeros((d, d))
    if not _cholesky_lower(A, L):
        return False
    for i in range(d):  # L y = rhs
        total = rhs[i]
        for k in range(i):
            total -= L[i, k] * out[k]
        out[i] = total / L[i, i]
    for i in range(d - 1, -1, -1):  # Lᵀ x = y
        total = out[i]
        for k in range(i + 1, d):
            total -= L[k, i] * out[k]
        out[i] = total / L[i, i]
    return True


#: Where the twin's within-class variance is at most this (no spread yet, or one within the rounding of the decoded
#: covariances M̂/n̂ − μμᵀ, ‖μ‖ ≤ 1), :func:`_twin_scale` gives the box's scale, 1.
TWIN_SCALE_FLOOR = 1e-12


@njit(**NJIT_OPTIONS)
def _twin_scale(counts, covariances):
    """The non-private twin's variance scale (:attr:`onpair.statistics.model.ClassStatistics.scale`): tr(S_w) =
    Σ_c (n̂_c/Σ_k n̂_k)·tr(C_c) where it exceeds :data:`TWIN_SCALE_FLOOR`, else 1 (the box's). Reads the data: for
    the twin's exact statistics only.

    Parameters
    ----------
    counts : ndarray of float64, shape (C,)
        The decoded class counts. Read only.
    covariances : ndarray of float64, shape (C, d, d)
        The decoded class covariances. Read only.
    """
    total = 0.0
    for c in range(counts.shape[0]):
        total += counts[c]
    trace = 0.0
    for c in range(counts.shape[0]):
        weight = counts[c] / total
        for k in range(covariances.shape[1]):
            trace += weight * covariances[c, k, k]
    return trace if trace > TWIN_SCALE_FLOOR else 1.0


@njit(**NJIT_OPTIONS)
def _auc_square_model(estimate, d, weights, floor, moment_sd, lam, auto_base, auto_factor, out):
    """The AUC task's pairwise square model from one release, fused (the per-record hot path).

    Decodes counts, means and covariances of the two classes (negative = block 0, positive = block 1)
    as :func:`_decode_statistics`, sets the ridge, and solves
    (C₊ + C₋ + (λ/2)I)·w = d, d = μ₊ − μ₋, then scales w by 1/(1 + dᵀw) (Sherman–Morrison).

    Parameters
    ----------
    estimate : ndarray of float64, shape (2·q,)
        The released prefix sum; read only.
    d : int
        Number of features.
    weights : ndarray of float64, shape (3,)
        (a, b, m); read only.
    floor : float
        Count floor.
    moment_sd : float
        Noise standard deviation of one second-moment coordinate (after dividing by m).
    lam : float
        The ridge λ when ``auto_base`` < 0; ignored otherwise.
    auto_base : float
        ≥ 0: λ = auto_base·s + auto_factor·2√d·moment_sd·(1/n̂₋ + 1/n̂₊)
        (:func:`onpair.statistics.model.auto_ridge`), s the twin's variance scale (:func:`_twin_scale`) where the
        release is exact (``moment_sd`` 0 with a moment block), else 1.
    auto_factor : float
        The noise-ridge factor of the automatic ridge.
    out : ndarray of float64, shape (d,)
        Overwritten with w.

    Returns
    -------
    float
        The ridge used, or −1.0 if C₊ + C₋ + (λ/2)I is not positive definite (``out`` unspecified; the
        caller projects onto the PSD cone instead).
    """
    counts = np.empty(2)
    means = np.empty((2, d))
    covariances = np.empty((2, d, d))
    _decode_statistics(estimate, 2, d, weights, floor, counts, means, covariances)
    scale = _twin_scale(counts, covariances) if moment_sd == 0.0 and weights[2] > 0.0 else 1.0
    return _square_from_decoded(counts, means, covariances, moment_sd, lam, auto_base, auto_factor, scale, out)


@njit(**NJIT_OPTIONS)
def _square_from_decoded(counts, means, covariances, moment_sd, lam, auto_base, auto_factor, scale, out):
    """:func:`_auc_square_model` after its decoding (the same operations): the ridge and the square model from
    the decoded statistics of the two classes. Returns the ridge used, or −1.0 where C₊ + C₋ + (λ/2)I is not
    positive definite.

    Parameters
    ----------
    counts : ndarray of float64, shape (2,)
        The decoded (floored) counts. Read only.
    means : ndarray of float64, shape (2, d)
        The decoded class means. Read only.
    covariances : ndarray of float64, shape (2, d, d)
        The decoded class covariances. Read only.
    moment_sd : float
        The public noise sd of one second-moment entry (the automatic ridge).
    lam : float
        The ridge, used when ``auto_base`` < 0.
    auto_base, auto_factor : float
        The automatic ridge auto_base·scale + auto_factor·2√d·moment_sd·(1/n̂₀ + 1/n̂₁) when ``auto_base`` ≥ 0.
    scale : float
        The variance scale of the base ridge: 1 for a private release, the twin's :func:`_twin_scale`.
    out : ndarray of float64, shape (d,)
        Overwritten with the square model w.
    """
    d = means.shape[1]
    if auto_base >= 0.0:
        lam = auto_base * scale + auto_factor * 2.0 * math.sqrt(d) * moment_sd * (1.0 / counts[0] + 1.0 / counts[1])
    A = np.empty((d, d))
    diff = np.empty(d)
    for k in range(d):
        diff[k] = means[1, k] - means[0, k]
        for l in range(d):
            A[k, l] = covariances[0, k, l] + covariances[1, k, l]
        A[k, k] += 0.5 * lam
    if not _cholesky_solve(A, diff, out):
        return -1.0
    along = 0.0
    for k in range(d):
        along += diff[k] * out[k]
    for k in range(d):
        out[k] /= 1.0 + along
    return lam


@njit(**NJIT_OPTIONS)
def _add_rows(rows, total):
    """total += rows[0] + rows[1] + … in this order (the exact sums of the non-private twin: a block adds
    exactly what its records added one at a time would).

    Parameters
    ----------
    rows : ndarray of float64, shape (m, k)
        Read only.
    total : ndarray of float64, shape (k,)
        Updated in place.
    """
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            total[j] += rows[i, j]


@njit(**NJIT_OPTIONS)
def _add_decayed_rows(rows, decay, total):
    """total ← γ·total + rows[i], for i = 0, 1, … in this order: the exact decayed sums Σ_s γ^{t−s} v_s of the
    non-private twin with a half-life (a block adds exactly what its records added one at a time would: a
    record is a block of one).

    Parameters
    ----------
    rows : ndarray of float64, shape (m, k)
        Read only.
    decay : float
        γ in (0, 1).
    total : ndarray of float64, shape (k,)
        Updated in place.
    """
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            total[j] = decay * total[j] + rows[i, j]


def statistics_rows(Z: np.ndarray, codes: np.ndarray, n_classes: int, weights, pooled: bool = False) -> np.ndarray:
    """The rows v(z) of a block of mapped records (see the module docstring), in the per-class layout or,
    with ``pooled``, the pooled one.

    Examples
    --------
    >>> import numpy as np
    >>> statistics_rows(np.array([[0.6, 0.8]]), np.array([1]), 2, (1.0, 1.0, 1.0)).round(3).tolist()
    [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.6, 0.8, 0.36, 0.679, 0.64]]
    >>> statistics_rows(np.array([[0.6, 0.8]]), np.array([1]), 2, (1.0, 1.0, 1.0), pooled=True).round(3).tolist()
    [[0.0, 0.0, 0.0, 1.0, 0.6, 0.8, 0.36, 0.679, 0.64]]
    """
    m, d = Z.shape
    out = np.empty((m, layout_width(d, n_classes, pooled)))
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    _layout_rows(Z, codes, n_classes, np.asarray(weights, dtype=np.float64), bool(pooled), out)
    return out


#: Records per block in :func:`statistics_total`: a block of rows is 4096 × C·q doubles (7.6 MB at d = 20,
#: two classes), whatever n is.
STATISTICS_BLOCK = 4096


def statistics_total(Z: np.ndarray, codes: np.ndarray, n_classes: int, weights,
                     block: int = STATISTICS_BLOCK, pooled: bool = False) -> np.ndarray:
    """Σ_z v(z) over the records (``pooled``: in the pooled layout), in blocks of ``block`` rows (memory
    O(block·C·q), not O(n·C·q)).

    The blocks' sums are added in order, so the result is a deterministic function of the records and
    their order. This is the sum that one partition of a distributed fit computes
    (:mod:`onpair.core.distributed`), and the in-process fit computes it over the whole data set.

    Examples
    --------
    >>> import numpy as np
    >>> Z, codes = np.array([[0.6, 0.8], [0.0, 1.0]]), np.array([1, 1])
    >>> bool(np.allclose(statistics_total(Z, codes, 2, (1, 1, 1), block=1),
    ...                  statistics_rows(Z, codes, 2, (1, 1, 1)).sum(axis=0)))
    True
    """
    total = np.zeros(layout_width(Z.shape[1], n_classes, pooled))
    for start in range(0, Z.shape[0], block):
        total += statistics_rows(Z[start:start + block], codes[start:start + block], n_classes, weights,
                                 pooled).sum(axis=0)
    return total
