"""Compiled streaming kernels of Pairwise GIGA (Kar et al. 2013; Huai et al. 2020, Alg. 1 steps 9-13).

Contract shared by every kernel here (tests/naive.py has a slow NumPy twin of each):

* arrays and scalars only, no Python objects; state arrays are updated **in place**;
* a block of ``m`` records is consumed one record at a time inside one compiled loop, so feeding a
  block gives exactly what feeding its records singly gives (the learners rely on it);
* record ``i`` of the block is round ``t = t_start + i + 1``; at round ``t ≥ 2`` the internal iterate
  takes one projected gradient step on the online penalty
  ``L̂_t(w) = 1/(t−1) Σ_{i<t} ℓ(w; z_t, z_i) + (λ/2)‖w − center‖²`` (Huai eq. (3)), then the record
  joins the history;
* after round ``t``, if ``release_slot[i] ≥ 0`` the kernel writes the released model
  ``Π_C[w_t + sigmas[k]·noise[k]]`` into ``released[k]`` (``k = release_slot[i]``). The standard
  normal ``noise`` is drawn by the caller from a NumPy ``Generator``: numba's own generator is global
  state, which the library never touches. The internal iterate itself never leaves the learner.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._config import NJIT_OPTIONS
from .geometry import _project_l2_ball
from .losses import _pair_dloss


@njit(**NJIT_OPTIONS)
def _regularised_step(w, grad, step, lam, center, radius):
    """w ← Π_C[w − step·(grad + λ(w − center))]."""
    for k in range(w.shape[0]):
        w[k] -= step * (grad[k] + lam * (w[k] - center[k]))
    _project_l2_ball(w, radius)


@njit(**NJIT_OPTIONS)
def _release_into(w, sigma, noise_row, radius, out_row):
    """out_row ← Π_C[w + σ·noise_row] (Gaussian mechanism, then post-processing by projection)."""
    for k in range(w.shape[0]):
        out_row[k] = w[k] + sigma * noise_row[k]
    _project_l2_ball(out_row, radius)


@njit(**NJIT_OPTIONS)
def _history_gradient(w, x, sign, opposite, n_opposite, loss_code, coef, grad):
    """Σ_j ∇_w ℓ(w; z, z_j) over the ``n_opposite`` stored records of the other label, into ``grad``.

    With ``sign = +1`` (x positive) the pair margin is ``u_j = wᵀ(x − x_j)``; with ``sign = −1`` it is
    ``wᵀ(x_j − x)``. The gradient of ``ℓ(u_j)`` is ``ℓ'(u_j)·sign·(x − x_j)``, so the sum is
    ``(Σ_j a_j)·x − Σ_j a_j x_j`` with ``a_j = sign·ℓ'(u_j)``: three passes that LLVM vectorises.
    """
    d = w.shape[0]
    score = 0.0
    for k in range(d):
        score += w[k] * x[k]
    coef_total = 0.0
    for j in range(n_opposite):
        row = opposite[j]
        s = 0.0
        for k in range(d):
            s += w[k] * row[k]
        a = sign * _pair_dloss(loss_code, sign * (score - s))
        coef[j] = a
        coef_total += a
    for k in range(d):
        grad[k] = coef_total * x[k]
    for j in range(n_opposite):
        a = coef[j]
        if a != 0.0:
            row = opposite[j]
            for k in range(d):
                grad[k] -= a * row[k]


@njit(**NJIT_OPTIONS)
def _giga_full_history(
    X, signs, w, positives, n_positives, negatives, n_negatives, t_start, steps, lam, center, radius,
    loss_code, release_slot, sigmas, noise, released,
):
    """Pairwise GIGA over a block with the full history, any pairwise loss of :mod:`onpair.losses`.

    Positives and negatives are stored apart so that no same-label pair (zero gradient) is visited:
    the cost of round t is O(#opposite-label records · d). ``positives``/``negatives`` must have room
    for the block's records (the caller grows them). Returns the new ``(n_positives, n_negatives)``.
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
        slot = release_slot[i]
        if slot >= 0:
            _release_into(w, sigmas[slot], noise[slot], radius, released[slot])
    return n_positives, n_negatives


@njit(**NJIT_OPTIONS)
def _giga_square_statistics(
    X, signs, w, counts, sums, second_moments, t_start, steps, lam, center, radius,
    release_slot, sigmas, noise, released,
):
    """Exact full-history Pairwise GIGA for the square loss in O(d²) per round, no history kept.

    For ``ℓ = (1 − u)²`` with ``u = sign·wᵀ(x − x_j)``, ``∇ = −2 sign (x − x_j) + 2 (x − x_j)(x − x_j)ᵀ w``,
    and over the m stored records of the other label (S₁ = Σ x_j, S₂ = Σ x_j x_jᵀ)
    ``Σ(x − x_j) = m x − S₁`` and ``Σ(x − x_j)(x − x_j)ᵀ w = m x (xᵀw) − x (S₁ᵀw) − S₁ (xᵀw) + S₂ w``
    (ALGORITHMS.md §2). Row 0 of ``counts``/``sums``/``second_moments`` holds the negatives, row 1 the
    positives; they are updated in place.
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
        slot = release_slot[i]
        if slot >= 0:
            _release_into(w, sigmas[slot], noise[slot], radius, released[slot])
