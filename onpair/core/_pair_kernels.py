"""Compiled pair primitives of the AUC task, shared by Pairwise GIGA (:mod:`onpair.giga._kernels`) and
Yang et al.'s SGD (:mod:`onpair.batch._sgd_kernels`): the margins of a record against stored records, the
loss derivatives of those pairs, and their weighted sum (the round gradient of the full history).

Arrays and scalars only; tests/naive.py holds their slow NumPy twins.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS, NJIT_REDUCTION_OPTIONS
from .losses import LOGISTIC, _pair_dloss

# -- the full-history gradient ----------------------------------------------------------------------
# Round t costs one pass of three steps over the n stored records of the other label: margins
# u_j = sign·(wᵀx − wᵀx_j), coefficients a_j = sign·ℓ'(u_j), and the sum (Σ a_j)·x − Σ a_j x_j. Apart
# from the margins (re-association allowed, see _config.NJIT_REDUCTION_OPTIONS) the kernels keep IEEE
# semantics, so LLVM may not reorder a floating-point sum. The helpers below are written so that the
# compiled code is fast (make bench: about 3× the previous single-loop version):
#
# * margins: four rows per sweep over k, four independent chains in flight, each split into SIMD
#   partial sums (re-association);
# * logistic coefficients: an exp that LLVM can vectorise (libm's exp is a scalar call per pair, and
#   numba has no vector exp without Intel's SVML), ≤ 1.5 ulp from math.exp;
# * weighted sum: four rows per sweep over k, the d-long accumulator loaded and stored once per four
#   rows; that sweep is element-wise in k, so LLVM vectorises it.
#
# The per-row sums keep their left-to-right order over k; only Σ_j a_j (four partial sums) and
# exp (a polynomial) round differently from a plain loop, far below the 1e-10 of tests/naive.py.

# exp(y) = 2ⁿ·e^r with n = round(y/ln 2) and r = y − n·ln 2 (Cody–Waite: ln 2 split in a high part with
# trailing zero bits, so that n·_LN2_HI is exact, and a low part), |r| ≤ ln(2)/2.
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
# Below e^−708 (≈ 3e−308, the smallest normal double) 2ⁿ has no normal bit pattern: such exp values
# are taken as 0, which changes a coefficient by less than 1e−307.
_EXP_FLOOR = -708.0
# The vectorised exp works through two scratch arrays of this many entries.
_EXP_BLOCK = 256


@njit(**NJIT_REDUCTION_OPTIONS)
def _history_margins(w, score, sign, rows, n_rows, out):
    """out[j] ← sign·(score − wᵀrows[j]) for the first ``n_rows`` rows.

    Four rows per sweep over k, four dot products side by side; compiled with re-association
    (``NJIT_REDUCTION_OPTIONS``), so LLVM also splits each d-term sum into SIMD partial sums. The same
    code runs for a block and for single records, so the two agree bit for bit.

    This is one of the two functions compiled with the package's relaxation of IEEE semantics
    (docs/algorithms.md#floating-point).

    Parameters
    ----------
    w : float64 array of shape (d,)
        The iterate (read only).
    score : float
        wᵀx for the round's record x.
    sign : float
        +1.0 when x is positive, −1.0 when it is negative.
    rows : float64 array of shape (≥ n_rows, d), C-contiguous
        The stored records x is paired with: the other label's, or a whole buffer (read only).
    n_rows : int
        How many leading rows to use.
    out : float64 array of shape (≥ n_rows,)
        Entries ``[0, n_rows)`` are overwritten with the margins; the rest is untouched.

    Returns
    -------
    None
    """
    d = w.shape[0]
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
        for k in range(d):
            wk = w[k]
            s0 += wk * r0[k]
            s1 += wk * r1[k]
            s2 += wk * r2[k]
            s3 += wk * r3[k]
        out[j] = sign * (score - s0)
        out[j + 1] = sign * (score - s1)
        out[j + 2] = sign * (score - s2)
        out[j + 3] = sign * (score - s3)
        j += 4
    while j < n_rows:
        row = rows[j]
        s = 0.0
        for k in range(d):
            s += w[k] * row[k]
        out[j] = sign * (score - s)
        j += 1


@njit(**NJIT_OPTIONS)
def _logistic_coefficients(sign, values, count):
    """values[j] ← sign·ℓ'(values[j]) for the logistic loss, in place, for the first ``count`` entries.

    The same formula as :func:`onpair.core.losses._pair_dloss` (ℓ'(u) = −2e/(1 + e) for u > 0 and
    −2/(1 + e) otherwise, with e = exp(−2|u|) ≤ 1, so nothing overflows), with exp computed by range
    reduction and a degree-13 Taylor polynomial (truncation error < 2e−16 relative on |r| ≤ ln(2)/2)
    in straight-line, branch-free code that LLVM vectorises. Two details keep the loops vectorisable:
    2ⁿ is built from its bit pattern through an int64 scratch array viewed as float64, and the
    division is ``np.divide``, because ``/`` under numba's Python error model tests for a zero divisor
    and raises, a branch that stops vectorisation (the divisor 1 + e ≥ 1 is never zero). NaN margins
    give NaN coefficients, ±inf margins the limits 0 and −2·sign, as the scalar formula does.

    Parameters
    ----------
    sign : float
        +1.0 or −1.0, the round record's label.
    values : float64 array of shape (≥ count,)
        On entry the margins u_j; entries ``[0, count)`` are overwritten in place with sign·ℓ'(u_j).
    count : int
        How many leading entries to convert.

    Returns
    -------
    None
    """
    reduced = np.empty(_EXP_BLOCK)
    scale_bits = np.empty(_EXP_BLOCK, dtype=np.int64)
    scale = scale_bits.view(np.float64)
    for start in range(0, count, _EXP_BLOCK):
        u = values[start:min(start + _EXP_BLOCK, count)]
        m = u.shape[0]
        for b in range(m):
            y = -2.0 * abs(u[b])
            y = y if y >= _EXP_FLOOR else _EXP_FLOOR  # also maps NaN to the floor: no NaN → int cast
            n = math.floor(y * _LOG2E + 0.5)
            reduced[b] = (y - n * _LN2_HI) - n * _LN2_LO
            scale_bits[b] = (np.int64(n) + 1023) << 52  # the float64 2ⁿ, n ∈ [−1021, 0]
        for b in range(m):
            r = reduced[b]
            # e^r = Σ_{i≤13} rⁱ/i!, Horner's scheme.
            p = 1.0 / 6227020800.0
            p = p * r + 1.0 / 479001600.0
            p = p * r + 1.0 / 39916800.0
            p = p * r + 1.0 / 3628800.0
            p = p * r + 1.0 / 362880.0
            p = p * r + 1.0 / 40320.0
            p = p * r + 1.0 / 5040.0
            p = p * r + 1.0 / 720.0
            p = p * r + 1.0 / 120.0
            p = p * r + 1.0 / 24.0
            p = p * r + 1.0 / 6.0
            p = p * r + 0.5
            p = p * r + 1.0
            p = p * r + 1.0
            margin = u[b]
            e = p * scale[b] if -2.0 * abs(margin) >= _EXP_FLOOR else 0.0  # e = exp(−2|u|)
            numerator = e if margin > 0.0 else 1.0
            a = sign * np.divide(-2.0 * numerator, 1.0 + e)
            u[b] = a if margin == margin else margin  # NaN in, NaN out


@njit(**NJIT_OPTIONS)
def _weighted_rows(coef, rows, n_rows, out):
    """out ← Σ_j coef[j]·rows[j] over the first ``n_rows`` rows; returns Σ_j coef[j].

    Four rows per sweep over k: the sweep is element-wise in k (LLVM vectorises it) and ``out`` is
    loaded and stored once per four rows instead of once per row. Σ_j coef[j] runs in four partial sums.

    Parameters
    ----------
    coef : float64 array of shape (≥ n_rows,)
        The weights (read only).
    rows : float64 array of shape (≥ n_rows, d), C-contiguous
        The rows (read only).
    n_rows : int
        How many leading rows to add.
    out : float64 array of shape (d,)
        Overwritten with Σ_j coef[j]·rows[j].

    Returns
    -------
    float
        Σ_j coef[j] over the first ``n_rows`` entries.
    """
    d = out.shape[0]
    for k in range(d):
        out[k] = 0.0
    c0 = 0.0
    c1 = 0.0
    c2 = 0.0
    c3 = 0.0
    j = 0
    while j + 4 <= n_rows:
        a0 = coef[j]
        a1 = coef[j + 1]
        a2 = coef[j + 2]
        a3 = coef[j + 3]
        r0 = rows[j]
        r1 = rows[j + 1]
        r2 = rows[j + 2]
        r3 = rows[j + 3]
        for k in range(d):
            out[k] = (((out[k] + a0 * r0[k]) + a1 * r1[k]) + a2 * r2[k]) + a3 * r3[k]
        c0 += a0
        c1 += a1
        c2 += a2
        c3 += a3
        j += 4
    while j < n_rows:
        a = coef[j]
        row = rows[j]
        for k in range(d):
            out[k] += a * row[k]
        c0 += a
        j += 1
    return (c0 + c1) + (c2 + c3)


@njit(**NJIT_OPTIONS)
def _history_gradient(w, x, sign, opposite, n_opposite, loss_code, coef, grad):
    """Σ_j ∇_w ℓ(w; z, z_j) over the ``n_opposite`` stored records of the other label, into ``grad``.

    With ``sign = +1`` (x positive) the pair margin is ``u_j = wᵀ(x − x_j)``; with ``sign = −1`` it is
    ``wᵀ(x_j − x)``. The gradient of ``ℓ(u_j)`` is ``ℓ'(u_j)·sign·(x − x_j)``, so the sum is
    ``(Σ_j a_j)·x − Σ_j a_j x_j`` with ``a_j = sign·ℓ'(u_j)``: three passes over the history (margins
    into ``coef``, coefficients in place, weighted sum), each compiled to fast code (see above).

    Parameters
    ----------
    w : float64 array of shape (d,)
        The iterate (read only).
    x : float64 array of shape (d,)
        The round's mapped record (read only).
    sign : float
        +1.0 when x is positive, −1.0 when it is negative.
    opposite : float64 array of shape (≥ n_opposite, d), C-contiguous
        The stored records of the other label (read only).
    n_opposite : int
        How many leading rows of ``opposite`` are stored records.
    loss_code : int
        A loss code of :mod:`onpair.core.losses`.
    coef : float64 array of shape (≥ n_opposite,)
        Scratch; overwritten (it ends holding the coefficients a_j).
    grad : float64 array of shape (d,)
        Overwritten with the sum of the pair gradients (not yet divided by t − 1).

    Returns
    -------
    None
    """
    _pair_coefficients(w, x, sign, opposite, n_opposite, loss_code, coef)
    coef_total = _weighted_rows(coef, opposite, n_opposite, grad)
    for k in range(w.shape[0]):
        grad[k] = coef_total * x[k] - grad[k]


@njit(**NJIT_OPTIONS)
def _pair_coefficients(w, x, sign, rows, n_rows, loss_code, coef):
    """coef[j] ← sign·ℓ'(u_j) with u_j = sign·(wᵀx − wᵀrows[j]), for the first ``n_rows`` rows: the
    margins and coefficients of every AUC pair pass (full history, buffer, Yang's SGD).

    Parameters
    ----------
    w : float64 array of shape (d,)
        The iterate (read only).
    x : float64 array of shape (d,)
        The new record (read only).
    sign : float
        +1.0 when x is positive, −1.0 when it is negative.
    rows : float64 array of shape (≥ n_rows, d), C-contiguous
        The records x is paired with (read only).
    n_rows : int
        How many leading rows to use.
    loss_code : int
        A loss code of :mod:`onpair.core.losses`.
    coef : float64 array of shape (≥ n_rows,)
        Entries ``[0, n_rows)`` are overwritten with the coefficients a_j.

    Returns
    -------
    None
    """
    score = 0.0
    for k in range(w.shape[0]):
        score += w[k] * x[k]
    _history_margins(w, score, sign, rows, n_rows, coef)
    if loss_code == LOGISTIC:
        _logistic_coefficients(sign, coef, n_rows)  # vectorised exp
    else:
        for j in range(n_rows):
            coef[j] = sign * _pair_dloss(loss_code, coef[j])
