"""Compiled full-batch kernels: the pairwise empirical risk and its gradient over a whole data set.

Kang et al. (2021), Algorithm 1 takes full gradient steps on the pairwise empirical risk
``L(w; D) = 1/(n(n−1)) Σ_{i≠j} ℓ(w; z_i, z_j)``. For the AUC losses of :mod:`onpair.losses` only
opposite-label pairs carry a gradient, and each unordered pair (i ∈ positives, j ∈ negatives) appears
twice among the ordered pairs with the same term, so

    ∇L(w; D) = 2/(n(n−1)) · Σ_{i∈pos} Σ_{j∈neg} ℓ'(u_ij)·(x_i − x_j),     u_ij = wᵀ(x_i − x_j).

**Blocks.** Everything is built on one function of *one block of positives and one block of
negatives*, :func:`_pairwise_gradient_block`, which returns the partial sum
``Σ_{i∈block⁺} Σ_{j∈block⁻} ℓ'(u_ij)(x_i − x_j)`` (a d-vector). The full sum is the sum of the partial
sums over any grid of blocks (:func:`pairwise_gradient_sum` tiles one): no block needs any other
block's records, so the grid is also how the work is spread over the workers of a distributed engine —
each worker holds a few blocks of positives and negatives and ships back d numbers per block pair,
and the driver adds them (plus, if it wants them, the per-record coefficient sums below).

**Algebra.** With ``a_ij = ℓ'(u_ij)``, ``A_i = Σ_j a_ij`` and ``B_j = Σ_i a_ij``,

    Σ_{i,j} a_ij (x_i − x_j) = Σ_i A_i x_i − Σ_j B_j x_j,

and ``u_ij = s_i − t_j`` with the scores ``s = X⁺w``, ``t = X⁻w``. The pair work is then
O(n⁺·n⁻) *scalar* operations plus O((n⁺ + n⁻)·d), instead of O(n⁺·n⁻·d) for the literal sum of
difference vectors (``bench/offline.py`` measures both). Per loss:

* logistic, ``ℓ'(u) = −2/(1 + e^{2u})``: ``e^{2u_ij} = e^{2(s_i−c)}·e^{−2(t_j−c)}`` for any centre c,
  so the n⁺ + n⁻ exponentials are computed once per block and a pair costs a multiply, an add and a
  division (which LLVM vectorises: no exp, no branch). With c the middle of the scores' range and that
  range ≤ 350, every factor lies in [e^{−350}, e^{350}] and no product overflows or leaves the normal
  range; a block whose scores span more (only reachable with ‖w‖·diameter > 350) falls back to the
  scalar :func:`onpair.losses._pair_dloss` per pair. The factorised value differs from
  ``_pair_dloss(s_i − t_j)`` by a few ulps (tests/naive_batch.py checks 1e-10);
* hinge, ``ℓ'(u) = −1[u < 1]``: a compare and a select per pair;
* square, ``ℓ'(u) = −2(1 − u)`` is linear in u, so ``A_i = −2(n⁻(1 − s_i) + Σ_j t_j)`` and
  ``B_j = −2(n⁺(1 + t_j) − Σ_i s_i)`` in closed form: O(n⁺ + n⁻) instead of O(n⁺·n⁻).

**Parallelism and determinism.** The pair loop runs with ``prange`` over fixed chunks of
``_CHUNK`` positives (not over threads): each chunk owns its ``A_i`` and one row of partial ``B``
sums, so no two tasks write the same memory, and the rows are added in chunk order after the
``prange``. The result therefore does not depend on the number of threads: one thread and sixteen give
the same bits (tests check it). The partial rows cost ``ceil(n⁺/_CHUNK)·n⁻`` doubles per block, which
is why :func:`pairwise_gradient_sum` bounds the block sizes. No fastmath (see :mod:`onpair._config`):
sums keep IEEE semantics; the reductions that would otherwise be one serial chain of additions
(``A_i``) run in eight explicit partial sums.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ._config import NJIT_OPTIONS, NJIT_PARALLEL_OPTIONS
from .losses import HINGE, LOGISTIC, SQUARE, _pair_dloss, _pair_loss, get_loss

__all__ = ["pairwise_gradient_sum", "pairwise_gradient", "pairwise_risk", "split_by_label", "DEFAULT_BLOCK"]

#: Positives per parallel task: each task owns one row of n⁻ partial sums of B.
_CHUNK = 64
#: Largest score range for which the logistic factorisation e^{2u} = e^{2(s−c)}·e^{−2(t−c)} is used.
_FACTOR_RANGE = 350.0
#: Default block size (records per block, each label) of :func:`pairwise_gradient_sum`: the partial
#: B rows of one block then take 32 × 2048 doubles (512 KiB), and a block's pair work (4 M pairs)
#: dwarfs the cost of one call.
DEFAULT_BLOCK = 2048


# -- scores ------------------------------------------------------------------------------------------
@njit(**NJIT_PARALLEL_OPTIONS)
def _scores(X, w, out):
    """out[i] ← X[i]ᵀw, each dot product summed left to right (rows in parallel, bitwise deterministic)."""
    n, d = X.shape
    for i in prange(n):
        row = X[i]
        acc = 0.0
        for k in range(d):
            acc += row[k] * w[k]
        out[i] = acc


# -- one row of pair coefficients: a_ij for a fixed positive i and every negative j ------------------
@njit(**NJIT_OPTIONS)
def _logistic_row(e_i, f, b_row):
    """b_row[j] += a_j with a_j = −2/(1 + e_i·f[j]) (the logistic ℓ' in factorised form); returns Σ_j a_j.

    Straight-line code, eight partial sums for the return value, ``np.divide`` rather than ``/``
    (numba's ``/`` tests for a zero divisor, a branch that stops vectorisation; 1 + e_i·f[j] ≥ 1).
    """
    m = f.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    j = 0
    while j + 8 <= m:
        a0 = np.divide(-2.0, 1.0 + e_i * f[j])
        a1 = np.divide(-2.0, 1.0 + e_i * f[j + 1])
        a2 = np.divide(-2.0, 1.0 + e_i * f[j + 2])
        a3 = np.divide(-2.0, 1.0 + e_i * f[j + 3])
        a4 = np.divide(-2.0, 1.0 + e_i * f[j + 4])
        a5 = np.divide(-2.0, 1.0 + e_i * f[j + 5])
        a6 = np.divide(-2.0, 1.0 + e_i * f[j + 6])
        a7 = np.divide(-2.0, 1.0 + e_i * f[j + 7])
        b_row[j] += a0
        b_row[j + 1] += a1
        b_row[j + 2] += a2
        b_row[j + 3] += a3
        b_row[j + 4] += a4
        b_row[j + 5] += a5
        b_row[j + 6] += a6
        b_row[j + 7] += a7
        s0 += a0
        s1 += a1
        s2 += a2
        s3 += a3
        s4 += a4
        s5 += a5
        s6 += a6
        s7 += a7
        j += 8
    while j < m:
        a = np.divide(-2.0, 1.0 + e_i * f[j])
        b_row[j] += a
        s0 += a
        j += 1
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


@njit(**NJIT_OPTIONS)
def _hinge_row(s_i, t, b_row):
    """b_row[j] += a_j with a_j = −1[s_i − t[j] < 1] (hinge subgradient); returns Σ_j a_j."""
    m = t.shape[0]
    s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = 0.0
    j = 0
    while j + 8 <= m:
        a0 = -1.0 if s_i - t[j] < 1.0 else 0.0
        a1 = -1.0 if s_i - t[j + 1] < 1.0 else 0.0
        a2 = -1.0 if s_i - t[j + 2] < 1.0 else 0.0
        a3 = -1.0 if s_i - t[j + 3] < 1.0 else 0.0
        a4 = -1.0 if s_i - t[j + 4] < 1.0 else 0.0
        a5 = -1.0 if s_i - t[j + 5] < 1.0 else 0.0
        a6 = -1.0 if s_i - t[j + 6] < 1.0 else 0.0
        a7 = -1.0 if s_i - t[j + 7] < 1.0 else 0.0
        b_row[j] += a0
        b_row[j + 1] += a1
        b_row[j + 2] += a2
        b_row[j + 3] += a3
        b_row[j + 4] += a4
        b_row[j + 5] += a5
        b_row[j + 6] += a6
        b_row[j + 7] += a7
        s0 += a0
        s1 += a1
        s2 += a2
        s3 += a3
        s4 += a4
        s5 += a5
        s6 += a6
        s7 += a7
        j += 8
    while j < m:
        a = -1.0 if s_i - t[j] < 1.0 else 0.0
        b_row[j] += a
        s0 += a
        j += 1
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))


@njit(**NJIT_OPTIONS)
def _scalar_row(loss_code, s_i, t, b_row):
    """b_row[j] += ℓ'(s_i − t[j]) through the scalar :func:`_pair_dloss` (any loss; the safe fallback)."""
    total = 0.0
    for j in range(t.shape[0]):
        a = _pair_dloss(loss_code, s_i - t[j])
        b_row[j] += a
        total += a
    return total


# -- coefficient sums A_i = Σ_j a_ij, B_j = Σ_i a_ij --------------------------------------------------
@njit(**NJIT_OPTIONS)
def _logistic_factorisable(s, t):
    """(whether all scores are finite and within _FACTOR_RANGE of each other, the middle of their range)."""
    lo = math.inf
    hi = -math.inf
    for v in s:
        if not math.isfinite(v):
            return False, 0.0
        lo = min(lo, v)
        hi = max(hi, v)
    for v in t:
        if not math.isfinite(v):
            return False, 0.0
        lo = min(lo, v)
        hi = max(hi, v)
    return hi - lo <= _FACTOR_RANGE, 0.5 * (hi + lo)


@njit(**NJIT_PARALLEL_OPTIONS)
def _coefficient_sums(s, t, loss_code, coef_pos_out, coef_neg_out):
    """A_i = Σ_j ℓ'(s_i − t_j) into ``coef_pos_out`` and B_j = Σ_i ℓ'(s_i − t_j) into ``coef_neg_out``."""
    n_pos = s.shape[0]
    n_neg = t.shape[0]
    if loss_code == SQUARE:
        # ℓ'(u) = −2(1 − u) is linear in u = s_i − t_j: both sums in closed form.
        sum_s = 0.0
        for i in range(n_pos):
            sum_s += s[i]
        sum_t = 0.0
        for j in range(n_neg):
            sum_t += t[j]
        for i in prange(n_pos):
            coef_pos_out[i] = -2.0 * (n_neg * (1.0 - s[i]) + sum_t)
        for j in prange(n_neg):
            coef_neg_out[j] = -2.0 * (n_pos * (1.0 + t[j]) - sum_s)
        return
    factorised = False
    e = np.empty(0)
    f = np.empty(0)
    if loss_code == LOGISTIC:
        factorised, centre = _logistic_factorisable(s, t)
        if factorised:
            e = np.empty(n_pos)
            f = np.empty(n_neg)
            for i in prange(n_pos):
                e[i] = math.exp(2.0 * (s[i] - centre))
            for j in prange(n_neg):
                f[j] = math.exp(-2.0 * (t[j] - centre))
    n_chunks = (n_pos + _CHUNK - 1) // _CHUNK
    partial = np.zeros((n_chunks, n_neg))
    for c in prange(n_chunks):
        b_row = partial[c]
        for i in range(c * _CHUNK, min((c + 1) * _CHUNK, n_pos)):
            if factorised:
                coef_pos_out[i] = _logistic_row(e[i], f, b_row)
            elif loss_code == HINGE:
                coef_pos_out[i] = _hinge_row(s[i], t, b_row)
            else:
                coef_pos_out[i] = _scalar_row(loss_code, s[i], t, b_row)
    for j in prange(n_neg):
        acc = 0.0
        for c in range(n_chunks):
            acc += partial[c, j]
        coef_neg_out[j] = acc


@njit(**NJIT_OPTIONS)
def _combine(positives, coef_pos, negatives, coef_neg, out):
    """out ← Σ_i coef_pos[i]·positives[i] − Σ_j coef_neg[j]·negatives[j] (element-wise in k)."""
    d = out.shape[0]
    for k in range(d):
        out[k] = 0.0
    for i in range(positives.shape[0]):
        a = coef_pos[i]
        row = positives[i]
        for k in range(d):
            out[k] += a * row[k]
    for j in range(negatives.shape[0]):
        b = coef_neg[j]
        row = negatives[j]
        for k in range(d):
            out[k] -= b * row[k]


@njit(**NJIT_OPTIONS)
def _pairwise_gradient_block(positives, negatives, w, loss_code, coef_pos_out, coef_neg_out):
    """Partial sum Σ_{i∈block⁺, j∈block⁻} ℓ'(wᵀ(x_i − x_j))·(x_i − x_j) of one block pair (a d-vector).

    Parameters
    ----------
    positives : float64 array (n⁺, d), C-contiguous
        One block of positive records.
    negatives : float64 array (n⁻, d), C-contiguous
        One block of negative records.
    w : float64 array (d,)
    loss_code : int
        :data:`onpair.losses.LOGISTIC`, ``HINGE`` or ``SQUARE``.
    coef_pos_out : float64 array (n⁺,)
        Receives A_i = Σ_{j∈block⁻} ℓ'(u_ij).
    coef_neg_out : float64 array (n⁻,)
        Receives B_j = Σ_{i∈block⁺} ℓ'(u_ij).

    Returns
    -------
    float64 array (d,)
        Σ_i A_i x_i − Σ_j B_j x_j (see the module docstring); the same bits for any thread count.
    """
    n_pos, d = positives.shape
    n_neg = negatives.shape[0]
    s = np.empty(n_pos)
    t = np.empty(n_neg)
    _scores(positives, w, s)
    _scores(negatives, w, t)
    _coefficient_sums(s, t, loss_code, coef_pos_out, coef_neg_out)
    out = np.empty(d)
    _combine(positives, coef_pos_out, negatives, coef_neg_out, out)
    return out


@njit(**NJIT_PARALLEL_OPTIONS)
def _pairwise_loss_block(positives, negatives, w, loss_code):
    """Σ_{i∈block⁺, j∈block⁻} ℓ(wᵀ(x_i − x_j)) of one block pair (scalar ``_pair_loss`` per pair).

    One partial sum per chunk of positives, added in chunk order: deterministic for any thread count.
    """
    n_pos = positives.shape[0]
    n_neg = negatives.shape[0]
    s = np.empty(n_pos)
    t = np.empty(n_neg)
    _scores(positives, w, s)
    _scores(negatives, w, t)
    n_chunks = (n_pos + _CHUNK - 1) // _CHUNK
    partial = np.zeros(n_chunks)
    for c in prange(n_chunks):
        acc = 0.0
        for i in range(c * _CHUNK, min((c + 1) * _CHUNK, n_pos)):
            for j in range(n_neg):
                acc += _pair_loss(loss_code, s[i] - t[j])
        partial[c] = acc
    total = 0.0
    for c in range(n_chunks):
        total += partial[c]
    return total


# -- the whole data set ------------------------------------------------------------------------------
def _loss_code(loss) -> int:
    if isinstance(loss, (int, np.integer)) and not isinstance(loss, bool):
        if int(loss) not in (LOGISTIC, HINGE, SQUARE):
            raise ValueError(f"loss code must be one of {(LOGISTIC, HINGE, SQUARE)}, got {loss!r}")
        return int(loss)
    return get_loss(loss).code


def _as_records(X, name):
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (records × features), got shape {X.shape}")
    return X


def _check_block(block):
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block must be an integer >= 1, got {block!r}")
    return int(block)


def _prepare(positives, negatives, w):
    positives = _as_records(positives, "positives")
    negatives = _as_records(negatives, "negatives")
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.ndim != 1 or positives.shape[1] != w.shape[0] or negatives.shape[1] != w.shape[0]:
        raise ValueError(
            f"shapes do not match: positives {positives.shape}, negatives {negatives.shape}, w {w.shape}"
        )
    return positives, negatives, w


def pairwise_gradient_sum(positives, negatives, w, loss="logistic", block=DEFAULT_BLOCK) -> np.ndarray:
    """``Σ_{i∈pos} Σ_{j∈neg} ℓ'(wᵀ(x_i − x_j))·(x_i − x_j)``, tiled into a grid of blocks.

    Each (block of positives, block of negatives) is one call of :func:`_pairwise_gradient_block`
    (itself parallel over the block's positives); the partial sums are added in grid order. This is
    the sum a distributed engine computes block by block.

    Parameters
    ----------
    positives, negatives : array-like (n⁺, d), (n⁻, d)
        Records of each label (rows of a diameter-2 domain, though nothing here needs it).
    w : array-like (d,)
    loss : str or int
        A name of :mod:`onpair.losses` or its code.
    block : int
        Records per block, for each label.

    Returns
    -------
    numpy.ndarray (d,)

    Examples
    --------
    >>> import numpy as np
    >>> pos, neg = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [0.0, 0.0]])
    >>> pairwise_gradient_sum(pos, neg, np.zeros(2), "logistic")  # ℓ'(0) = −1 per pair
    array([-2.,  1.])
    """
    positives, negatives, w = _prepare(positives, negatives, w)
    code = _loss_code(loss)
    block = _check_block(block)
    total = np.zeros(w.shape[0])
    coef_pos = np.empty(min(block, positives.shape[0]))
    coef_neg = np.empty(min(block, negatives.shape[0]))
    for i0 in range(0, positives.shape[0], block):
        pos_block = positives[i0:i0 + block]
        for j0 in range(0, negatives.shape[0], block):
            neg_block = negatives[j0:j0 + block]
            total += _pairwise_gradient_block(pos_block, neg_block, w, code, coef_pos[:pos_block.shape[0]],
                                              coef_neg[:neg_block.shape[0]])
    return total


def pairwise_gradient(positives, negatives, w, loss="logistic", block=DEFAULT_BLOCK) -> np.ndarray:
    """∇L(w; D) of the pairwise empirical risk ``1/(n(n−1)) Σ_{i≠j} ℓ(w; z_i, z_j)`` (no regulariser).

    Each opposite-label pair appears twice among the ordered pairs, so this is
    ``2/(n(n−1))·`` :func:`pairwise_gradient_sum`, with ``n = n⁺ + n⁻``.

    Examples
    --------
    >>> import numpy as np
    >>> pos, neg = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [0.0, 0.0]])
    >>> pairwise_gradient(pos, neg, np.zeros(2))  # 2/(3·2) · [−2, 1]
    array([-0.66666667,  0.33333333])
    """
    positives, negatives, w = _prepare(positives, negatives, w)
    n = positives.shape[0] + negatives.shape[0]
    if n < 2:
        raise ValueError(f"the pairwise risk needs n >= 2 records, got {n}")
    return 2.0 / (n * (n - 1.0)) * pairwise_gradient_sum(positives, negatives, w, loss, block)


def pairwise_risk(positives, negatives, w, loss="logistic", block=DEFAULT_BLOCK) -> float:
    """L(w; D) = 1/(n(n−1)) Σ_{i≠j} ℓ(w; z_i, z_j), same-label pairs included.

    Opposite-label pairs count twice (both orders, same value). Same-label pairs contribute the
    loss's constant: ``φ(0) = log 2`` for the logistic loss (``φ((y − y')wᵀ(x − x'))`` with
    ``y = y'``), 0 for hinge and square (their indicator ``1[y = 1, y' = −1]`` vanishes). The pair
    loop calls the scalar ``_pair_loss`` (an exp and a log1p per pair, parallel): several times the
    cost of a gradient, so it is for evaluation, not for an inner loop.

    Examples
    --------
    >>> import numpy as np
    >>> pos, neg = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0], [0.0, 0.0]])
    >>> round(pairwise_risk(pos, neg, np.zeros(2)), 12) == round(np.log(2.0), 12)
    True
    """
    positives, negatives, w = _prepare(positives, negatives, w)
    code = _loss_code(loss)
    block = _check_block(block)
    n_pos, n_neg = positives.shape[0], negatives.shape[0]
    n = n_pos + n_neg
    if n < 2:
        raise ValueError(f"the pairwise risk needs n >= 2 records, got {n}")
    total = 0.0
    for i0 in range(0, n_pos, block):
        for j0 in range(0, n_neg, block):
            total += _pairwise_loss_block(positives[i0:i0 + block], negatives[j0:j0 + block], w, code)
    same_label_pairs = n_pos * (n_pos - 1.0) + n_neg * (n_neg - 1.0)
    same_value = math.log(2.0) if code == LOGISTIC else 0.0
    return (2.0 * total + same_label_pairs * same_value) / (n * (n - 1.0))


def split_by_label(Z, signs):
    """C-contiguous copies of the positive (sign > 0) and the negative records of ``Z``."""
    positive = np.asarray(signs) > 0
    return (np.ascontiguousarray(Z[positive], dtype=np.float64),
            np.ascontiguousarray(Z[~positive], dtype=np.float64))
