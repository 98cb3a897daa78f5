"""Compiled streaming kernels of Pairwise GIGA (Kar et al. 2013; Huai et al. 2020, Alg. 1 steps 9-13).

Contract shared by every kernel here (tests/naive.py has a slow NumPy twin of each):

* arrays and scalars only, no Python objects; state arrays are updated **in place**;
* a block of ``m`` records is consumed one record at a time inside one compiled loop, so feeding a
  block gives exactly what feeding its records singly gives (the learners rely on it);
* record ``i`` of the block is round ``t = t_start + i + 1``; at round ``t ≥ 2`` the internal iterate
  takes one projected gradient step on the online penalty
  ``L̂_t(w) = 1/(t−1) Σ_{i<t} ℓ(w; z_t, z_i) + (λ/2)‖w − center‖²`` (Huai eq. (3)), then the record
  joins the history;
* after round ``t`` the iterate is added to ``iterate_sum`` (Σ_t w_t, for the offline average output,
  Huai Alg. 3 line 8), and if ``release_slot[i] ≥ 0`` the kernel writes the released model
  ``Π_C[w_t + sigmas[k]·noise[k]]`` into ``released[k]`` (``k = release_slot[i]``). The standard
  normal ``noise`` is drawn by the caller from a NumPy ``Generator``: numba's own generator is global
  state, which the library never touches. The internal iterate itself never leaves the learner.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS
from ..core._pair_kernels import _history_gradient, _pair_coefficients, _weighted_rows
from ..core.geometry import _project_l2_ball


@njit(**NJIT_OPTIONS)
def _regularised_step(w, grad, step, lam, center, radius):
    """w ← Π_C[w − step·(grad + λ(w − center))].

    Parameters
    ----------
    w : float64 array of shape (d,)
        The iterate, updated in place.
    grad : float64 array of shape (d,)
        Gradient of the data term at ``w`` (read only).
    step : float
        η_t ≥ 0.
    lam : float
        λ of the regulariser.
    center : float64 array of shape (d,)
        Its centre w₀ (read only).
    radius : float
        R of the ℓ2 ball C.

    Returns
    -------
    None
    """
    for k in range(w.shape[0]):
        w[k] -= step * (grad[k] + lam * (w[k] - center[k]))
    _project_l2_ball(w, radius)


@njit(**NJIT_OPTIONS)
def _release_into(w, sigma, noise_row, radius, out_row):
    """out_row ← Π_C[w + σ·noise_row] (Gaussian mechanism, then post-processing by projection).

    Parameters
    ----------
    w : float64 array of shape (d,)
        The internal iterate (read only: it is not changed and never leaves the learner).
    sigma : float
        σ of this release.
    noise_row : float64 array of shape (d,)
        Standard normal draws from the caller's NumPy ``Generator`` (read only).
    radius : float
        R of the ℓ2 ball C.
    out_row : float64 array of shape (d,)
        Overwritten with the released model.

    Returns
    -------
    None
    """
    for k in range(w.shape[0]):
        out_row[k] = w[k] + sigma * noise_row[k]
    _project_l2_ball(out_row, radius)



@njit(**NJIT_OPTIONS)
def _giga_full_history(
    X, signs, w, positives, n_positives, negatives, n_negatives, t_start, steps, lam, center, radius,
    loss_code, release_slot, sigmas, noise, released, iterate_sum,
):
    """Pairwise GIGA over a block with the full history, any pairwise loss of :mod:`onpair.core.losses`.

    Positives and negatives are stored apart so that no same-label pair (zero gradient) is visited:
    the cost of round t is O(#opposite-label records · d). ``positives``/``negatives`` must have room
    for the block's records (the caller grows them). Returns the new ``(n_positives, n_negatives)``.

    Parameters
    ----------
    X : float64 array of shape (m, d), C-contiguous
        The block's records, mapped onto the diameter-2 domain (read only).
    signs : int8 array of shape (m,)
        Their labels, ±1 (read only).
    w : float64 array of shape (d,)
        The internal iterate, updated in place (it never leaves the learner).
    positives : float64 array of shape (capacity⁺, d)
        Rows ``[0, n_positives)`` are the stored positives; the block's positives are appended in place
        (capacity⁺ ≥ n_positives + the block's positives).
    n_positives : int
        Stored positives before the block.
    negatives : float64 array of shape (capacity⁻, d)
        The same for the negatives.
    n_negatives : int
        Stored negatives before the block.
    t_start : int
        Rounds already learned; record i of the block is round ``t_start + i + 1``.
    steps : float64 array of shape (m,)
        η of each round (0 at round 1; read only).
    lam : float
        λ of the regulariser (λ/2)‖w − center‖².
    center : float64 array of shape (d,)
        Its centre w₀ (read only).
    radius : float
        R of the ball C.
    loss_code : int
        :data:`onpair.core.losses.LOGISTIC`, ``HINGE`` or ``SQUARE``.
    release_slot : int64 array of shape (m,)
        ``release_slot[i] = k ≥ 0``: round i of the block releases into ``released[k]``; −1: no release.
    sigmas : float64 array of shape (n_releases,)
        σ of each release, planned from the ledger (docs/algorithms.md#release-calibration); read only.
    noise : float64 array of shape (n_releases, d)
        Standard normal draws from the caller's NumPy ``Generator`` (read only).
    released : float64 array of shape (n_releases, d)
        Row k is overwritten with release k, Π_C[w_t + sigmas[k]·noise[k]].
    iterate_sum : float64 array of shape (d,)
        Σ_t w_t; each round's iterate is added in place.

    Returns
    -------
    tuple of (int, int)
        ``(n_positives, n_negatives)`` after the block.
    """
    m, d = X.shape
    grad = np.empty(d)
    coef = np.empty(max(positives.shape[0], negatives.shape[0]))
    for i in range(m):
        t = t_start + i + 1
        x = X[i]
        if t >= 2:
            if signs[i] > 0:
                _history_gradient(w, x, 1.0, negatives, n_negatives, loss_code, coef, grad)
            else:
                _history_gradient(w, x, -1.0, positives, n_positives, loss_code, coef, grad)
            inv = 1.0 / (t - 1)
            for k in range(d):
                grad[k] *= inv
            _regularised_step(w, grad, steps[i], lam, center, radius)
        if signs[i] > 0:
            positives[n_positives, :] = x
            n_positives += 1
        else:
            negatives[n_negatives, :] = x
            n_negatives += 1
        for k in range(d):
            iterate_sum[k] += w[k]
        slot = release_slot[i]
        if slot >= 0:
            _release_into(w, sigmas[slot], noise[slot], radius, released[slot])
    return n_positives, n_negatives


@njit(**NJIT_OPTIONS)
def _giga_square_statistics(
    X, signs, w, counts, sums, second_moments, t_start, steps, lam, center, radius,
    release_slot, sigmas, noise, released, iterate_sum,
):
    """Exact full-history Pairwise GIGA for the square loss in O(d²) per round, no history kept.

    For ``ℓ = (1 − u)²`` with ``u = sign·wᵀ(x − x_j)``, ``∇ = −2 sign (x − x_j) + 2 (x − x_j)(x − x_j)ᵀ w``,
    and over the m stored records of the other label (S₁ = Σ x_j, S₂ = Σ x_j x_jᵀ)
    ``Σ(x − x_j) = m x − S₁`` and ``Σ(x − x_j)(x − x_j)ᵀ w = m x (xᵀw) − x (S₁ᵀw) − S₁ (xᵀw) + S₂ w``
    (docs/algorithms.md#square-statistics). Row 0 of ``counts``/``sums``/``second_moments`` holds the negatives, row 1 the
    positives; they are updated in place.

    Parameters
    ----------
    X : float64 array of shape (m, d), C-contiguous
        The block's mapped records (read only).
    signs : int8 array of shape (m,)
        Their labels, ±1 (read only).
    w : float64 array of shape (d,)
        The internal iterate, updated in place.
    counts : float64 array of shape (2,)
        Records stored per class, updated in place.
    sums : float64 array of shape (2, d)
        Σ x_j per class (S₁), updated in place.
    second_moments : float64 array of shape (2, d, d)
        Σ x_j x_jᵀ per class (S₂), updated in place.
    t_start : int
        Rounds already learned; record i of the block is round ``t_start + i + 1``.
    steps : float64 array of shape (m,)
        η of each round (0 at round 1; read only).
    lam : float
        λ of the regulariser (λ/2)‖w − center‖².
    center : float64 array of shape (d,)
        Its centre w₀ (read only).
    radius : float
        R of the ball C.
    release_slot : int64 array of shape (m,)
        ``release_slot[i] = k ≥ 0``: round i of the block releases into ``released[k]``; −1: no release.
    sigmas : float64 array of shape (n_releases,)
        σ of each release, planned from the ledger (docs/algorithms.md#release-calibration); read only.
    noise : float64 array of shape (n_releases, d)
        Standard normal draws from the caller's NumPy ``Generator`` (read only).
    released : float64 array of shape (n_releases, d)
        Row k is overwritten with release k, Π_C[w_t + sigmas[k]·noise[k]].
    iterate_sum : float64 array of shape (d,)
        Σ_t w_t; each round's iterate is added in place.

    Returns
    -------
    None
    """
    m, d = X.shape
    grad = np.empty(d)
    s2w = np.empty(d)
    for i in range(m):
        t = t_start + i + 1
        x = X[i]
        positive = signs[i] > 0
        other = 0 if positive else 1
        if t >= 2:
            sign = 1.0 if positive else -1.0
            count = counts[other]
            s1 = sums[other]
            s2 = second_moments[other]
            xw = 0.0
            s1w = 0.0
            for k in range(d):
                xw += x[k] * w[k]
                s1w += s1[k] * w[k]
            for k in range(d):
                acc = 0.0
                for l in range(d):
                    acc += s2[k, l] * w[l]
                s2w[k] = acc
            inv = 1.0 / (t - 1)
            for k in range(d):
                first = count * x[k] - s1[k]
                outer_w = count * x[k] * xw - x[k] * s1w - s1[k] * xw + s2w[k]
                grad[k] = (-2.0 * sign * first + 2.0 * outer_w) * inv
            _regularised_step(w, grad, steps[i], lam, center, radius)
        own = 1 if positive else 0
        counts[own] += 1.0
        for k in range(d):
            sums[own, k] += x[k]
            for l in range(d):
                second_moments[own, k, l] += x[k] * x[l]
        for k in range(d):
            iterate_sum[k] += w[k]
        slot = release_slot[i]
        if slot >= 0:
            _release_into(w, sigmas[slot], noise[slot], radius, released[slot])


@njit(**NJIT_OPTIONS)
def _giga_buffered(
    X, signs, w, buffer, buffer_signs, n_buffered, t_start, steps, lam, center, radius, loss_code, slots,
    release_slot, sigmas, noise, released, iterate_sum,
):
    """Pairwise GIGA against a finite buffer B_t of past records (Kar et al. 2013's finite-buffer case).

    At round t ≥ 2 the penalty averages over the buffer, ``L̂_t(w) = 1/|B_t| Σ_{i∈B_t} ℓ(w; z_t, z_i) +
    (λ/2)‖w − center‖²`` (same-label entries count in |B_t| with zero gradient, as the full history counts
    them in t − 1). After the step, record t goes to buffer slot ``slots[i]`` (−1: not stored). The caller
    draws the slots from public randomness: FIFO overwrites the oldest slot, reservoir sampling
    (Algorithm R) keeps a uniform sample in which a record sits in at most one slot, which is what the
    ledger's κ_t = 1/|B_t| needs. Memory is O(s·d) whatever the stream length. Returns the new fill.

    Parameters
    ----------
    X : float64 array of shape (m, d), C-contiguous
        The block's mapped records (read only).
    signs : int8 array of shape (m,)
        Their labels, ±1 (read only).
    w : float64 array of shape (d,)
        The internal iterate, updated in place.
    buffer : float64 array of shape (s, d)
        The buffer's slots; a stored record overwrites its slot in place.
    buffer_signs : int8 array of shape (s,)
        The labels of the slots, updated in place.
    n_buffered : int
        Slots ``[0, n_buffered)`` hold records (the fill before the block).
    t_start : int
        Rounds already learned; record i of the block is round ``t_start + i + 1``.
    steps : float64 array of shape (m,)
        η of each round (0 at round 1; read only).
    lam : float
        λ of the regulariser (λ/2)‖w − center‖².
    center : float64 array of shape (d,)
        Its centre w₀ (read only).
    radius : float
        R of the ball C.
    loss_code : int
        A loss code of :mod:`onpair.core.losses`.
    slots : int64 array of shape (m,)
        The slot record i goes to after its step, −1 for none (drawn by the caller from public
        randomness; read only).
    release_slot : int64 array of shape (m,)
        ``release_slot[i] = k ≥ 0``: round i of the block releases into ``released[k]``; −1: no release.
    sigmas : float64 array of shape (n_releases,)
        σ of each release, planned from the ledger (docs/algorithms.md#release-calibration); read only.
    noise : float64 array of shape (n_releases, d)
        Standard normal draws from the caller's NumPy ``Generator`` (read only).
    released : float64 array of shape (n_releases, d)
        Row k is overwritten with release k, Π_C[w_t + sigmas[k]·noise[k]].
    iterate_sum : float64 array of shape (d,)
        Σ_t w_t; each round's iterate is added in place.

    Returns
    -------
    int
        The fill ``n_buffered`` after the block.
    """
    m, d = X.shape
    capacity = buffer.shape[0]
    grad = np.empty(d)
    coef = np.empty(capacity)
    for i in range(m):
        t = t_start + i + 1
        x = X[i]
        sign = 1.0 if signs[i] > 0 else -1.0
        if t >= 2:
            if n_buffered > 0:
                _pair_coefficients(w, x, sign, buffer, n_buffered, loss_code, coef)
                for j in range(n_buffered):
                    if buffer_signs[j] == signs[i]:
                        coef[j] = 0.0  # same label: no gradient
                total = _weighted_rows(coef, buffer, n_buffered, grad)
                inv = 1.0 / n_buffered
                for k in range(d):
                    grad[k] = (total * x[k] - grad[k]) * inv
            else:
                for k in range(d):
                    grad[k] = 0.0
            _regularised_step(w, grad, steps[i], lam, center, radius)
        slot = slots[i]
        if slot >= 0:
            buffer[slot, :] = x
            buffer_signs[slot] = signs[i]
            if slot >= n_buffered:
                n_buffered = slot + 1
        for k in range(d):
            iterate_sum[k] += w[k]
        r = release_slot[i]
        if r >= 0:
            _release_into(w, sigmas[r], noise[r], radius, released[r])
    return n_buffered


# -- single-record entry points -----------------------------------------------------------------------
# learn_one's fast path calls these: fewer arguments to dispatch from Python, and they run the block
# kernels above on a one-record block, so the arithmetic is the same by construction. No release
# happens here (a release round takes the general path).


@njit(**NJIT_OPTIONS)
def _one_record_block(x, sign, step):
    """A one-record block for the block kernels: a copy of the record and the empty release arrays.

    Parameters
    ----------
    x : float64 array of shape (d,)
        The mapped record (read only; copied).
    sign : int
        Its label, ±1.
    step : float
        η of its round.

    Returns
    -------
    tuple
        New arrays ``(X, signs, steps, no_release, sigmas, empty)``: X float64 of shape (1, d), signs
        int8 of shape (1,), steps float64 of shape (1,), no_release int64 of shape (1,) holding −1,
        sigmas float64 of shape (0,) and empty float64 of shape (0, d).
    """
    d = x.shape[0]
    X = np.empty((1, d))
    for k in range(d):
        X[0, k] = x[k]
    signs = np.empty(1, dtype=np.int8)
    signs[0] = sign
    steps = np.empty(1)
    steps[0] = step
    no_release = np.full(1, -1, dtype=np.int64)
    return X, signs, steps, no_release, np.empty(0), np.empty((0, d))


@njit(**NJIT_OPTIONS)
def _giga_full_history_one(x, sign, w, positives, n_positives, negatives, n_negatives, t, step, lam, center,
                           radius, loss_code, iterate_sum):
    """One record of round ``t`` through :func:`_giga_full_history` (``learn_one``'s fast path; no
    release here, a release round takes the general path), so the arithmetic is the block kernel's by
    construction.

    Parameters
    ----------
    x : float64 array of shape (d,)
        The mapped record (read only).
    sign : int
        Its label, ±1.
    w : float64 array of shape (d,)
        The internal iterate, updated in place.
    positives : float64 array of shape (capacity⁺, d)
        The stored positives, with room for one more row; a positive record is appended in place.
    n_positives : int
        Stored positives before this round.
    negatives : float64 array of shape (capacity⁻, d)
        The stored negatives, with room for one more row; a negative record is appended in place.
    n_negatives : int
        Stored negatives before this round.
    t : int
        The record's round, ≥ 1.
    step : float
        η_t.
    lam : float
        λ of the regulariser.
    center : float64 array of shape (d,)
        Its centre w₀ (read only).
    radius : float
        R of the ball C.
    loss_code : int
        A loss code of :mod:`onpair.core.losses`.
    iterate_sum : float64 array of shape (d,)
        Σ_t w_t; w_t is added in place.

    Returns
    -------
    tuple of (int, int)
        ``(n_positives, n_negatives)`` after the round.
    """
    X, signs, steps, no_release, sigmas, empty = _one_record_block(x, sign, step)
    return _giga_full_history(X, signs, w, positives, n_positives, negatives, n_negatives, t - 1, steps, lam,
                              center, radius, loss_code, no_release, sigmas, empty, empty, iterate_sum)


@njit(**NJIT_OPTIONS)
def _giga_square_statistics_one(x, sign, w, counts, sums, second_moments, t, step, lam, center, radius,
                                iterate_sum):
    """One record of round ``t`` through :func:`_giga_square_statistics` (``learn_one``'s fast path; no
    release here), so the arithmetic is the block kernel's by construction.

    Parameters
    ----------
    x : float64 array of shape (d,)
        The mapped record (read only).
    sign : int
        Its label, ±1.
    w : float64 array of shape (d,)
        The internal iterate, updated in place.
    counts, sums, second_moments : float64 arrays of shapes (2,), (2, d), (2, d, d)
        The per-class statistics, updated in place.
    t : int
        The record's round, ≥ 1.
    step : float
        η_t.
    lam : float
        λ of the regulariser.
    center : float64 array of shape (d,)
        Its centre w₀ (read only).
    radius : float
        R of the ball C.
    iterate_sum : float64 array of shape (d,)
        Σ_t w_t; w_t is added in place.

    Returns
    -------
    None
    """
    X, signs, steps, no_release, sigmas, empty = _one_record_block(x, sign, step)
    _giga_square_statistics(X, signs, w, counts, sums, second_moments, t - 1, steps, lam, center, radius,
                            no_release, sigmas, empty, empty, iterate_sum)


@njit(**NJIT_OPTIONS)
def _giga_buffered_one(x, sign, w, buffer, buffer_signs, n_buffered, t, step, lam, center, radius, loss_code,
                       slot, iterate_sum):
    """One record of round ``t`` through :func:`_giga_buffered` (``learn_one``'s fast path; no release
    here), so the arithmetic is the block kernel's by construction.

    Parameters
    ----------
    x : float64 array of shape (d,)
        The mapped record (read only).
    sign : int
        Its label, ±1.
    w : float64 array of shape (d,)
        The internal iterate, updated in place.
    buffer : float64 array of shape (s, d)
        The buffer's slots; the record overwrites slot ``slot`` in place.
    buffer_signs : int8 array of shape (s,)
        The labels of the slots, updated in place.
    n_buffered : int
        The fill before this round.
    t : int
        The record's round, ≥ 1.
    step : float
        η_t.
    lam : float
        λ of the regulariser.
    center : float64 array of shape (d,)
        Its centre w₀ (read only).
    radius : float
        R of the ball C.
    loss_code : int
        A loss code of :mod:`onpair.core.losses`.
    slot : int
        The record's slot after its step, −1 for none (public randomness).
    iterate_sum : float64 array of shape (d,)
        Σ_t w_t; w_t is added in place.

    Returns
    -------
    int
        The fill after the round.
    """
    X, signs, steps, no_release, sigmas, empty = _one_record_block(x, sign, step)
    slots = np.empty(1, dtype=np.int64)
    slots[0] = slot
    return _giga_buffered(X, signs, w, buffer, buffer_signs, n_buffered, t - 1, steps, lam, center, radius,
                          loss_code, slots, no_release, sigmas, empty, empty, iterate_sum)
