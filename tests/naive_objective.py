"""Slow, obviously correct references for the objectives of objective perturbation (onpair.objective.functions).

Everything record by record or pair by pair from the definitions, with the derivatives written out by
hand: φ(m) = log(1 + e^(−m)), φ'(m) = −1/(1 + e^m), φ''(m) = e^m/(1 + e^m)²; the pair loss ℓ(u) = φ(2u),
ℓ'(u) = 2φ'(2u), ℓ''(u) = 4φ''(2u). scipy's ``expit`` and NumPy's ``logaddexp`` keep the extremes finite.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit


def phi(m):
    return float(np.logaddexp(0.0, -m))


def phi_prime(m):
    return float(-expit(-m))


def phi_second(m):
    return float(expit(m) * expit(-m))


def point_terms(margins):
    """(Σ φ(m_i), [φ'(m_i)], [φ''(m_i)]), one record at a time."""
    return (sum(phi(m) for m in margins), np.array([phi_prime(m) for m in margins]),
            np.array([phi_second(m) for m in margins]))


def pair_block(s, t):
    """([ℓ'(s_i − t_j)], [ℓ''(s_i − t_j)], [Σ_j ℓ(s_i − t_j)]), one pair at a time."""
    slope = np.empty((len(s), len(t)))
    curvature = np.empty((len(s), len(t)))
    rows = np.zeros(len(s))
    for i, si in enumerate(s):
        for j, tj in enumerate(t):
            u = si - tj
            slope[i, j] = 2.0 * phi_prime(2.0 * u)
            curvature[i, j] = 4.0 * phi_second(2.0 * u)
            rows[i] += phi(2.0 * u)
    return slope, curvature, rows


def augmented(Z, intercept):
    Z = np.asarray(Z, dtype=float)
    return np.hstack([Z, np.ones((Z.shape[0], 1))]) if intercept else Z


def pointwise_terms(Z, signs, theta, intercept=False):
    """(F, ∇F, ∇²F) of F(θ) = Σ_i φ(y_i θᵀx̃_i), record by record."""
    X = augmented(Z, intercept)
    value, gradient, hessian = 0.0, np.zeros(X.shape[1]), np.zeros((X.shape[1], X.shape[1]))
    for x, y in zip(X, signs):
        m = y * float(theta @ x)
        value += phi(m)
        gradient += phi_prime(m) * y * x
        hessian += phi_second(m) * np.outer(x, x)
    return value, gradient, hessian


def pairwise_terms(Z, signs, theta):
    """(F, ∇F, ∇²F) of F(θ) = Σ_{i pos, j neg} φ(2θᵀ(x_i − x_j)), pair by pair."""
    Z = np.asarray(Z, dtype=float)
    d = Z.shape[1]
    value, gradient, hessian = 0.0, np.zeros(d), np.zeros((d, d))
    for i in range(len(Z)):
        for j in range(len(Z)):
            if signs[i] > 0 and signs[j] < 0:
                v = Z[i] - Z[j]
                u = float(theta @ v)
                value += phi(2.0 * u)
                gradient += 2.0 * phi_prime(2.0 * u) * v
                hessian += 4.0 * phi_second(2.0 * u) * np.outer(v, v)
    return value, gradient, hessian


def terms(objective, Z, signs, theta, intercept=False):
    if objective == "pointwise":
        return pointwise_terms(Z, signs, theta, intercept)
    return pairwise_terms(Z, signs, theta)


def scale(objective, n):
    return 1.0 / n if objective == "pointwise" else 2.0 / (n * (n - 1.0))
