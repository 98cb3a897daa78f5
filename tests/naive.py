"""Slow, obviously correct NumPy twins of the compiled kernels (same names without the underscore).

Each function follows the definition literally: every pair is visited explicitly, nothing is
factored, nothing is cached. Tests compare the kernels against these to 1e-10.
"""

from __future__ import annotations

import numpy as np


def pair_loss(loss, margin):
    """ℓ of one opposite-label pair as a function of u = wᵀ(x⁺ − x⁻), from the definitions."""
    if loss == "logistic":
        return np.logaddexp(0.0, -2.0 * margin)  # log(1 + e^(−2u))
    if loss == "hinge":
        return max(0.0, 1.0 - margin)
    return (1.0 - margin) ** 2


def pair_gradient(loss, w, x_pos, x_neg):
    """∇_w ℓ(w; x⁺, x⁻) from the definitions (hinge: the subgradient −Δ on u < 1, else 0)."""
    delta = x_pos - x_neg
    u = float(w @ delta)
    if loss == "logistic":
        return -2.0 / (1.0 + np.exp(2.0 * u)) * delta
    if loss == "hinge":
        return -delta if u < 1.0 else np.zeros_like(w)
    return -2.0 * (1.0 - u) * delta


def project_l2_ball(w, radius):
    norm = np.linalg.norm(w)
    return w if norm <= radius else w * (radius / norm)


def giga(X, signs, steps, lam, center, radius, loss, w_start, release_rounds=(), sigmas=(), noise=None):
    """Pairwise GIGA with the full history, round by round, every pair visited explicitly.

    Returns the internal iterate after each round (array (n, d)) and the released models.
    """
    n, d = X.shape
    w = np.array(w_start, dtype=float)
    iterates = np.zeros((n, d))
    released = []
    release_rounds = list(release_rounds)
    for i in range(n):
        t = i + 1
        if t >= 2:
            total = np.zeros(d)
            for j in range(i):  # every earlier record
                if signs[j] == signs[i]:
                    continue  # same label: no gradient
                if signs[i] > 0:
                    total += pair_gradient(loss, w, X[i], X[j])
                else:
                    total += pair_gradient(loss, w, X[j], X[i])
            grad = total / (t - 1) + lam * (w - center)
            w = project_l2_ball(w - steps[i] * grad, radius)
        iterates[i] = w
        if t in release_rounds:
            k = release_rounds.index(t)
            released.append(project_l2_ball(w + sigmas[k] * noise[k], radius))
    return iterates, np.array(released).reshape(len(released), d)


def ledger(steps, lipschitz, smoothness, strong_convexity, diameter, buffer_size=None, pair_change=None):
    """The sensitivity recursion of docs/algorithms.md#ledger-recursion, one round at a time (Γ = 2G unless given)."""
    change = 2 * lipschitz if pair_change is None else pair_change
    bound = 0.0
    out = []
    for i, eta in enumerate(steps):
        t = i + 1
        if t >= 2:
            c = max(abs(1 - eta * strong_convexity), abs(1 - eta * smoothness))
            kappa = 1.0 / (t - 1 if buffer_size is None else min(t - 1, buffer_size))
            bound = min(diameter, max(c * bound + change * eta * kappa, change * eta))
        out.append(bound)
    return np.array(out)


def ledger_worst_position(steps, lipschitz, smoothness, strong_convexity, diameter):
    """The same bound computed the long way: for every differing position j separately, then the max.

    For a fixed j the coupled distance obeys D_j = 2Gη_j (or 0 at round 1, which takes no step) and
    D_t = c_t D_{t−1} + 2Gη_t/(t−1) for t > j, each capped at the diameter.
    """
    n = len(steps)
    worst = np.zeros(n)
    for j in range(1, n + 1):
        dist = 0.0
        for t in range(j, n + 1):
            eta = steps[t - 1]
            if t < 2:
                dist = 0.0
            elif t == j:
                dist = min(diameter, 2 * lipschitz * eta)
            else:
                c = max(abs(1 - eta * strong_convexity), abs(1 - eta * smoothness))
                dist = min(diameter, c * dist + 2 * lipschitz * eta / (t - 1))
            worst[t - 1] = max(worst[t - 1], dist)
    return worst


def giga_buffered(X, signs, steps, lam, center, radius, loss, w_start, slots, capacity):
    """Pairwise GIGA against a finite buffer, literally: the penalty averages over the buffer's records
    (same-label ones count, with zero gradient), then record t is written to slot ``slots[t-1]``.

    Returns the internal iterate after each round."""
    n, d = X.shape
    w = np.array(w_start, dtype=float)
    stored = [None] * capacity  # (x, sign) per slot
    iterates = np.zeros((n, d))
    for i in range(n):
        t = i + 1
        if t >= 2:
            kept = [entry for entry in stored if entry is not None]
            total = np.zeros(d)
            for x_j, s_j in kept:
                if s_j == signs[i]:
                    continue
                total += pair_gradient(loss, w, X[i], x_j) if signs[i] > 0 else pair_gradient(loss, w, x_j, X[i])
            grad = (total / len(kept) if kept else total) + lam * (w - center)
            w = project_l2_ball(w - steps[i] * grad, radius)
        if slots[i] >= 0:
            stored[slots[i]] = (X[i].copy(), signs[i])
        iterates[i] = w
    return iterates
