"""Compiled full-batch kernels: the pairwise empirical risk and its gradient over a whole data set.

Kang et al. (2021), Algorithm 1 takes full gradient steps on the pairwise empirical risk
``L(w; D) = 1/(n(n−1)) Σ_{i≠j} ℓ(w; z_i, z_j)``. For the AUC losses of :mod:`onpair.core.losses` only
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
  so the n⁺ + n⁻ exponentials are computed once per block and a pair costs two multiplies, two adds
  and half a division (:func:`_logistic_row` shares one division between two pairs), in loops LLVM
  vectorises: no exp, no branch. With c the middle of the scores' range and that range ≤
  ``_FACTOR_RANGE`` = 160 nothing overflows or leaves the normal range; a block whose scores span
  more (only reachable with ‖w‖·diameter > 160) falls back to the scalar
  :func:`onpair.core.losses._pair_dloss` per pair. The factorised coefficient differs from
  ``_pair_dloss(s_i − t_j)`` by a few ulps (tests/test_gradient_perturbation.py checks the kernel
  against tests/naive_batch.py to 1e-10);
* hinge, ``ℓ'(u) = −1[u < 1]``: a compare and a select per pair;
* square, ``ℓ'(u) = −2(1 − u)`` is linear in u, so ``A_i = −2(n⁻(1 − s_i) + Σ_j t_j)`` and
  ``B_j = −2(n⁺(1 + t_j) − Σ_i s_i)`` in closed form: O(n⁺ + n⁻) instead of O(n⁺·n⁻).

**Parallelism and determinism.** The pair loop runs with ``prange`` over fixed chunks of
``_CHUNK`` = 64 positives (not over threads): each chunk owns its ``A_i`` and one row of partial
``B`` sums, so no two tasks write the same memory (no races, no atomics), and the rows are added in
chunk order after the ``prange``. The result therefore does not depend on the number of threads: one
thread and sixteen give the same bits (tests check it). The partial rows cost ``ceil(n⁺/64)·n⁻``
doubles per block, which is why :func:`pairwise_gradient_sum` bounds the block sizes. Inside a chunk
the negatives are taken in tiles of ``_TILE`` so that a tile's data stays in L1. No fastmath (see
:mod:`onpair._config`): every sum keeps IEEE semantics; ``A_i`` is summed by pairwise halving
(:func:`_tree_sum`), whose steps are element-wise loops that vectorise, instead of one serial chain.

Measured (``bench/offline.py``, logistic, n = 4,000 balanced, d = 20, 2 cores of an AMD EPYC): one
gradient in 0.6 ms, 0.15 ns per opposite-label pair (0.28 ns on one core, where the vector divider
alone takes about 0.16 ns per pair); the A/B algebra is 15–18× faster than the literal
O(n⁺·n⁻·d) sum of difference vectors with the same coefficients, and the kernel 14–16× faster than
NumPy's margins-matrix version of the same algebra (bench/results/offline.md has the latest run).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._config import NJIT_OPTIONS, NJIT_PARALLEL_OPTIONS
from ..core.losses import HINGE, LOGISTIC, SQUARE, _pair_dloss, _pair_loss, get_loss

__all__ = ["pairwise_gradient_sum", "pairwise_gradient", "pairwise_risk", "split_by_label", "DEFAULT_BLOCK"]

#: Positives per parallel task: each task owns one row of n⁻ partial sums of B.
_CHUNK = 64
#: Negatives per tile inside a chunk (f, the B row and the scratch buffer: 20 KiB, within L1).
_TILE = 1024
#: Largest score range for which the logistic factorisation e^{2u} = e^{2(s−c)}·e^{−2(t−c)} is used:
#: then every factor lies in [e^−160, e^160], every x = 1 + e^{2u} below 1 + e^320 and every product
#: of two of them (:func:`_logistic_row`) below e^641, far from overflow (e^709.8).
_FACTOR_RANGE = 160.0
#: Default block size (records per block, each label) of :func:`pairwise_gradient_sum`: the partial
#: B rows of one block then take 32 × 2048 doubles (512 KiB), and a block's pair work (4 M pairs)
#: dwarfs the cost of one call.
DEFAULT_BLOCK = 2048


# -- scores ------------------------------------------------------------------------------------------
@njit(**NJIT_PARALLEL_OPTIONS)
def _scores(X, w, out):
    """out[i] ← X[i]ᵀw, each dot product summed left to right (rows in parallel, bitwise deterministic).

    Parameters
    ----------
    X : float64 array of shape (n, d), C-contiguous
        Records (read only).
    w : float64 array of shape (d,)
        The point (read only).
    out : float64 array of shape (n,)
        Overwritten with the scores.

    Returns
    -------
    None
    """
    n, d = X.shape
    for i in prange(n):
        row = X[i]
        acc = 0.0
        for k in range(d):
            acc += row[k] * w[k]
        out[i] = acc


# -- one row of pair coefficients: a_ij for a fixed positive i and a tile of negatives j --------------
# Each row function adds a_ij into the chunk's partial-B row (element-wise in j, vectorised) and
# returns Σ_j a_ij. That sum is the one reduction: under IEEE semantics LLVM keeps a plain `total += a`
# as one serial chain, so the row functions write the a_ij (or sums of two of them) into a scratch
# buffer and :func:`_tree_sum` halves it, each halving an element-wise, vectorised loop.


@njit(**NJIT_OPTIONS)
def _tree_sum(values, count):
    """Σ values[:count] by pairwise halving (destroys the buffer); vectorised, and more accurate than a loop.

    Parameters
    ----------
    values : float64 array of shape (≥ count,)
        The terms; entries ``[0, count)`` are overwritten with partial sums.
    count : int
        How many leading entries to add.

    Returns
    -------
    float
        Σ values[:count].
    """
    h = count
    while h > 8:
        half = h // 2
        for j in range(half):
            values[j] += values[j + half]
        if h % 2:
            values[0] += values[h - 1]
        h = half
    total = 0.0
    for j in range(h):
        total += values[j]
    return total


@njit(**NJIT_OPTIONS)
def _logistic_row(e_i, f, b_row, scratch):
    """b_row[j] += a_j, a_j = −2/(1 + e_i·f[j]) (the logistic ℓ', factorised); returns Σ_j a_j.

    Two pairs per division: with x = 1 + e_i·f[j] and y = 1 + e_i·f[j + h] (the two halves of the
    tile), r = −2/(x·y) gives a_j = y·r and a_{j+h} = x·r. Every operand is ≥ 1 and the caller bounds
    x·y below the overflow threshold (_FACTOR_RANGE), so this costs a few ulps, not accuracy. The loop
    is straight-line code over contiguous memory (LLVM vectorises it); ``np.divide`` rather than ``/``,
    whose zero-divisor test is a branch that stops vectorisation (x·y ≥ 1 is never zero).

    Parameters
    ----------
    e_i : float
        e^(2(s_i − c)) for the positive's score s_i and the block's centre c.
    f : float64 array of shape (m,)
        e^(−2(t_j − c)) for the tile's negatives (read only).
    b_row : float64 array of shape (m,)
        The chunk's partial B sums for the tile; a_j is added in place.
    scratch : float64 array of shape (≥ m // 2,)
        Scratch, overwritten.

    Returns
    -------
    float
        Σ_j a_j over the tile.
    """
    m = f.shape[0]
    h = m // 2
    for j in range(h):
        x = 1.0 + e_i * f[j]
        y = 1.0 + e_i * f[j + h]
        r = np.divide(-2.0, x * y)
        a = y * r
        b = x * r
        b_row[j] += a
        b_row[j + h] += b
        scratch[j] = a + b
    total = _tree_sum(scratch, h)
    for j in range(2 * h, m):
        a = np.divide(-2.0, 1.0 + e_i * f[j])
        b_row[j] += a
        total += a
    return total


@njit(**NJIT_OPTIONS)
def _hinge_row(s_i, t, b_row, scratch):
    """b_row[j] += a_j, a_j = −1[s_i − t[j] < 1] (the hinge subgradient); returns Σ_j a_j (exact: integers).

    Parameters
    ----------
    s_i : float
        The positive's score.
    t : float64 array of shape (m,)
        The tile's negative scores (read only).
    b_row : float64 array of shape (m,)
        The chunk's partial B sums for the tile; a_j is added in place.
    scratch : float64 array of shape (≥ m,)
        Scratch, overwritten.

    Returns
    -------
    float
        Σ_j a_j over the tile (an integer value, exact).
    """
    m = t.shape[0]
    for j in range(m):
        a = -1.0 if s_i - t[j] < 1.0 else 0.0
        b_row[j] += a
        scratch[j] = a
    return _tree_sum(scratch, m)


@njit(**NJIT_OPTIONS)
def _scalar_row(loss_code, s_i, t, b_row):
    """b_row[j] += ℓ'(s_i − t[j]) through the scalar :func:`_pair_dloss` (any loss; the safe fallback).

    Parameters
    ----------
    loss_code : int
        A loss code of :mod:`onpair.core.losses`.
    s_i : float
        The positive's score.
    t : float64 array of shape (m,)
        The tile's negative scores (read only).
    b_row : float64 array of shape (m,)
        The chunk's partial B sums for the tile; ℓ'(s_i − t[j]) is added in place.

    Returns
    -------
    float
        Σ_j ℓ'(s_i − t[j]) over the tile.
    """
    total = 0.0
    for j in range(t.shape[0]):
        a = _pair_dloss(loss_code, s_i - t[j])
        b_row[j] += a
        total += a
    return total


# -- coefficient sums A_i = Σ_j a_ij, B_j = Σ_i a_ij --------------------------------------------------
@njit(**NJIT_OPTIONS)
def _logistic_factorisable(s, t):
    """(whether all scores are finite and within _FACTOR_RANGE of each other, the middle of their range).

    Parameters
    ----------
    s : float64 array of shape (n⁺,)
        The positives' scores (read only).
    t : float64 array of shape (n⁻,)
        The negatives' scores (read only).

    Returns
    -------
    tuple of (bool, float)
        Whether the factorisation is safe, and the centre c = (min + max)/2 of all the scores (0.0 when a
        score is not finite).
    """
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
    """A_i = Σ_j ℓ'(s_i − t_j) into ``coef_pos_out`` and B_j = Σ_i ℓ'(s_i − t_j) into ``coef_neg_out``.

    The result does not depend on the number of threads (docs/algorithms.md#gradient-perturbation).

    Parameters
    ----------
    s : float64 array of shape (n⁺,)
        The positives' scores (read only).
    t : float64 array of shape (n⁻,)
        The negatives' scores (read only).
    loss_code : int
        :data:`onpair.core.losses.LOGISTIC`, ``HINGE`` or ``SQUARE``.
    coef_pos_out : float64 array of shape (n⁺,)
        Overwritten with A_i.
    coef_neg_out : float64 array of shape (n⁻,)
        Overwritten with B_j.

    Returns
    -------
    None
    """
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
    partial = np.empty((n_chunks, n_neg))
    for c in prange(n_chunks):
        # Zeroed by the task that fills it: in parallel, and the row starts out in that core's cache.
        partial[c, :] = 0.0
        scratch = np.empty(min(_TILE, n_neg))
        first = c * _CHUNK
        last = min(first + _CHUNK, n_pos)
        for i in range(first, last):
            coef_pos_out[i] = 0.0
        # Tiles of negatives, so that f (or t), the B row and the scratch stay in L1 across the chunk.
        for j0 in range(0, n_neg, _TILE):
            j1 = min(j0 + _TILE, n_neg)
            b_row = partial[c, j0:j1]
            for i in range(first, last):
                if factorised:
                    coef_pos_out[i] += _logistic_row(e[i], f[j0:j1], b_row, scratch)
                elif loss_code == HINGE:
                    coef_pos_out[i] += _hinge_row(s[i], t[j0:j1], b_row, scratch)
                else:
                    coef_pos_out[i] += _scalar_row(loss_code, s[i], t[j0:j1], b_row)
    for j in prange(n_neg):
        acc = 0.0
        for c in range(n_chunks):
            acc += partial[c, j]
        coef_neg_out[j] = acc


@njit(**NJIT_PARALLEL_OPTIONS)
def _combine(positives, coef_pos, negatives, coef_neg, out):
    """out ← Σ_i coef_pos[i]·positives[i] − Σ_j coef_neg[j]·negatives[j].

    One partial d-vector per fixed chunk of rows (in parallel), added in chunk order: deterministic.

    Parameters
    ----------
    positives : float64 array of shape (n⁺, d)
        Positive records (read only).
    coef_pos : float64 array of shape (n⁺,)
        A_i (read only).
    negatives : float64 array of shape (n⁻, d)
        Negative records (read only).
    coef_neg : float64 array of shape (n⁻,)
        B_j (read only).
    out : float64 array of shape (d,)
        Overwritten with the result.

    Returns
    -------
    None
    """
    d = out.shape[0]
    n_pos = positives.shape[0]
    n_neg = negatives.shape[0]
    chunks_pos = (n_pos + _CHUNK - 1) // _CHUNK
    chunks_neg = (n_neg + _CHUNK - 1) // _CHUNK
    partial = np.zeros((chunks_pos + chunks_neg, d))
    for c in prange(chunks_pos + chunks_neg):
        acc = partial[c]
        if c < chunks_pos:
            for i in range(c * _CHUNK, min((c + 1) * _CHUNK, n_pos)):
                a = coef_pos[i]
                row = positives[i]
                for k in range(d):
                    acc[k] += a * row[k]
        else:
            for j in range((c - chunks_pos) * _CHUNK, min((c - chunks_pos + 1) * _CHUNK, n_neg)):
                b = coef_neg[j]
                row = negatives[j]
                for k in range(d):
                    acc[k] += b * row[k]
    for k in range(d):
        out[k] = 0.0
    for c in range(chunks_pos):
        for k in range(d):
            out[k] += partial[c, k]
    for c in range(chunks_pos, chunks_pos + chunks_neg):
        for k in range(d):
            out[k] -= partial[c, k]


@njit(**NJIT_OPTIONS)
def _pairwise_gradient_block(positives, negatives, w, loss_code, coef_pos_out, coef_neg_out):
    """Partial sum Σ_{i∈block⁺, j∈block⁻} ℓ'(wᵀ(x_i − x_j))·(x_i − x_j) of one block pair, a d-vector.

    Parameters
    ----------
    positives : float64 array of shape (n⁺, d), C-contiguous
        One block of positive records (read only).
    negatives : float64 array of shape (n⁻, d), C-contiguous
        One block of negative records (read only).
    w : float64 array of shape (d,)
        The point (read only).
    loss_code : int
        :data:`onpair.core.losses.LOGISTIC`, ``HINGE`` or ``SQUARE``.
    coef_pos_out : float64 array of shape (n⁺,)
        Overwritten with A_i = Σ_{j∈block⁻} ℓ'(u_ij).
    coef_neg_out : float64 array of shape (n⁻,)
        Overwritten with B_j = Σ_{i∈block⁺} ℓ'(u_ij).

    Returns
    -------
    float64 array of shape (d,)
        A new array, Σ_i A_i x_i − Σ_j B_j x_j (see the module docstring); the same bits for any thread
        count.
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

    Parameters
    ----------
    positives : float64 array of shape (n⁺, d), C-contiguous
        One block of positive records (read only).
    negatives : float64 array of shape (n⁻, d), C-contiguous
        One block of negative records (read only).
    w : float64 array of shape (d,)
        The point (read only).
    loss_code : int
        A loss code of :mod:`onpair.core.losses`.

    Returns
    -------
    float
        The sum of the pair losses.
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
        A name of :mod:`onpair.core.losses` or its code.
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
    >>> pairwise_risk(pos, neg, np.zeros(2))  # every pair at margin 0: log 2
    0.6931471805599453
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
    return float((2.0 * total + same_label_pairs * same_value) / (n * (n - 1.0)))


def split_by_label(Z, signs):
    """C-contiguous copies of the positive (sign > 0) and the negative records of ``Z``."""
    positive = np.asarray(signs) > 0
    return (np.ascontiguousarray(Z[positive], dtype=np.float64),
            np.ascontiguousarray(Z[~positive], dtype=np.float64))
