"""Slow, obviously correct references for the full-batch kernels and Kang et al.'s Algorithm 1.

Every function follows the definition literally: an explicit double loop over all ordered pairs
(i, j), i ≠ j, of the data set, the loss of each pair from its definition (tests/naive.py), nothing
factored, nothing cached. Tests compare the compiled kernels and the estimator against these to 1e-10.
"""

from __future__ import annotations

import math

import numpy as np

import naive


def _oriented(X, signs, i, j):
    """The pair (z_i, z_j) as (x⁺, x⁻), or None for a same-label pair.

    The library's AUC losses score a pair through the margin of (positive − negative) whatever the
    order of the two records: ℓ(w; z_i, z_j) = ℓ(w; z_j, z_i).
    """
    if signs[i] == signs[j]:
        return None
    return (X[i], X[j]) if signs[i] > 0 else (X[j], X[i])


def pair_loss(loss, w, X, signs, i, j):
    """ℓ(w; z_i, z_j) for one ordered pair, from the definition.

    Same-label pairs: the logistic loss is φ((y_i − y_j)·wᵀ(x_i − x_j)) = φ(0) = log 2; hinge and square
    carry the indicator 1[y ≠ y'] (in either order) and are 0.
    """
    pair = _oriented(X, signs, i, j)
    if pair is None:
        return math.log(2.0) if loss == "logistic" else 0.0
    x_pos, x_neg = pair
    return float(naive.pair_loss(loss, float(w @ (x_pos - x_neg))))


def pair_gradient(loss, w, X, signs, i, j):
    """∇_w ℓ(w; z_i, z_j) for one ordered pair (zero for a same-label pair)."""
    pair = _oriented(X, signs, i, j)
    if pair is None:
        return np.zeros_like(w)
    return naive.pair_gradient(loss, w, pair[0], pair[1])


def pairwise_risk(loss, X, signs, w):
    """L(w; D) = 1/(n(n−1)) Σ_{i≠j} ℓ(w; z_i, z_j), every ordered pair visited."""
    n = X.shape[0]
    total = 0.0
    for i in range(n):
        for j in range(n):
            if i != j:
                total += pair_loss(loss, w, X, signs, i, j)
    return total / (n * (n - 1))


def pairwise_gradient(loss, X, signs, w):
    """∇L(w; D) = 1/(n(n−1)) Σ_{i≠j} ∇ℓ(w; z_i, z_j), every ordered pair visited."""
    n = X.shape[0]
    total = np.zeros_like(w, dtype=float)
    for i in range(n):
        for j in range(n):
            if i != j:
                total += pair_gradient(loss, w, X, signs, i, j)
    return total / (n * (n - 1))


def pairwise_gradient_sum(loss, positives, negatives, w):
    """Σ_{i∈pos} Σ_{j∈neg} ∇ℓ(w; x_i, x_j): one block's partial sum, pair by pair."""
    total = np.zeros_like(w, dtype=float)
    for x_pos in positives:
        for x_neg in negatives:
            total += naive.pair_gradient(loss, w, x_pos, x_neg)
    return total


def coefficient_sums(loss, positives, negatives, w):
    """A_i = Σ_j ℓ'(u_ij) and B_j = Σ_i ℓ'(u_ij), u_ij = wᵀ(x_i − x_j), pair by pair."""
    A = np.zeros(len(positives))
    B = np.zeros(len(negatives))
    for i, x_pos in enumerate(positives):
        for j, x_neg in enumerate(negatives):
            u = float(w @ (x_pos - x_neg))
            if loss == "logistic":  # d/du log(1 + e^(−2u)) = −2/(1 + e^(2u)), written without overflow
                e = math.exp(-2.0 * abs(u))
                a = -2.0 * e / (1.0 + e) if u > 0 else -2.0 / (1.0 + e)
            elif loss == "hinge":
                a = -1.0 if u < 1.0 else 0.0
            else:
                a = -2.0 * (1.0 - u)
            A[i] += a
            B[j] += a
    return A, B


def gradient_perturbed_gd(loss, X, signs, lam, radius, steps, sigmas, noise):
    """Kang et al. Alg. 1 with projection: θ_0 = 0, θ_t = Π_C[θ − η_t(∇L(θ) + λθ + σ_t·noise_t)].

    Returns every iterate θ_1 … θ_T (array (T, d)). ``sigmas = 0`` gives the non-private twin.
    """
    T, d = len(steps), X.shape[1]
    theta = np.zeros(d)
    out = np.zeros((T, d))
    for t in range(T):
        update = pairwise_gradient(loss, X, signs, theta) + lam * theta + sigmas[t] * noise[t]
        theta = naive.project_l2_ball(theta - steps[t] * update, radius)
        out[t] = theta
    return out
