"""Slow, obviously correct NumPy twins of the metric-task kernels (onpair.giga._metric_kernels).

Everything follows the definitions literally: every pair is visited, ``v vᵀ`` is formed explicitly as an
outer product, W is a d×d matrix (flattened only at the boundary), and the projections are written here
from scratch (eigen-decomposition plus a threshold found by bisection), sharing no code with
onpair.core.matrix_geometry. Tests compare the compiled kernels against these to 1e-10.
"""

from __future__ import annotations

import numpy as np

CONSTRAINT_NAMES = ("frobenius", "psd", "nuclear", "psd_nuclear")


# -- the losses, from their definitions -------------------------------------------------------------
def pair_loss(loss, h, tau):
    """ℓ(h, τ): logistic φ(τ(1 − h)) with φ(u) = log(1 + e^(−u)); hinge (1 + τh)₊."""
    if loss == "logistic":
        return float(np.logaddexp(0.0, -tau * (1.0 - h)))
    return max(0.0, 1.0 + tau * h)


def pair_dloss(loss, h, tau):
    """dℓ/dh: logistic τ·σ(−τ(1 − h)) = τ/(1 + e^(τ(1 − h))); hinge τ where 1 + τh > 0, else 0."""
    if loss == "logistic":
        u = tau * (1.0 - h)
        return float(tau * np.exp(-np.logaddexp(0.0, u)))  # τ/(1 + e^u) without overflow
    return float(tau) if 1.0 + tau * h > 0.0 else 0.0


def pair_gradient(loss, W, x, x_other, same_class):
    """∇_W ℓ(W; z, z') = ℓ'(h)·v vᵀ with v = x − x', h = vᵀWv (a d×d matrix)."""
    v = np.asarray(x, dtype=float) - np.asarray(x_other, dtype=float)
    h = float(v @ W @ v)
    tau = 1.0 if same_class else -1.0
    return pair_dloss(loss, h, tau) * np.outer(v, v)


# -- the projections, written independently -------------------------------------------------------
def _threshold_by_bisection(magnitudes, radius):
    """θ ≥ 0 with Σ max(m_i − θ, 0) = radius (magnitudes ≥ 0 with Σ m_i > radius).

    Bisection brackets θ; the active set {m_i > θ} read off the bracket then gives θ in closed form."""
    lo, hi = 0.0, float(np.max(magnitudes))
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.sum(np.maximum(magnitudes - mid, 0.0)) > radius:
            lo = mid
        else:
            hi = mid
    active = magnitudes > lo
    theta = (np.sum(magnitudes[active]) - radius) / np.count_nonzero(active)
    return max(theta, 0.0)


def project_l1(values, radius, nonnegative=False):
    """Projection of a vector onto {Σ|v_i| ≤ R} (or {v ≥ 0, Σ v_i ≤ R}) by soft-thresholding."""
    values = np.asarray(values, dtype=float)
    if nonnegative:
        values = np.maximum(values, 0.0)
    magnitudes = np.abs(values)
    if magnitudes.sum() <= radius:
        return values.copy()
    theta = _threshold_by_bisection(magnitudes, radius)
    return np.sign(values) * np.maximum(magnitudes - theta, 0.0)


def project(W, radius, constraint):
    """Π_C(W) for a symmetric d×d matrix W (a new matrix)."""
    W = np.asarray(W, dtype=float)
    if constraint == "frobenius":
        norm = np.linalg.norm(W)
        return W.copy() if norm <= radius else W * (radius / norm)
    lam, V = np.linalg.eigh(0.5 * (W + W.T))
    if constraint == "psd":
        lam = np.maximum(lam, 0.0)
        norm = np.linalg.norm(lam)
        if norm > radius:
            lam = lam * (radius / norm)
    elif constraint == "nuclear":
        lam = project_l1(lam, radius)
    elif constraint == "psd_nuclear":
        lam = project_l1(lam, radius, nonnegative=True)
    else:
        raise ValueError(constraint)
    out = V @ np.diag(lam) @ V.T
    return 0.5 * (out + out.T)


def in_set(W, radius, constraint, tol=1e-9):
    """Whether the symmetric W lies in C (up to ``tol``)."""
    W = np.asarray(W, dtype=float)
    if not np.allclose(W, W.T, atol=tol, rtol=0):
        return False
    lam = np.linalg.eigvalsh(W)
    if constraint in ("psd", "psd_nuclear") and lam.min() < -tol:
        return False
    if constraint in ("frobenius", "psd"):
        return np.linalg.norm(W) <= radius + tol
    return np.abs(lam).sum() <= radius + tol


# -- Pairwise GIGA of the metric task ------------------------------------------------------------------
def metric_giga(X, labels, W_start, t_start, steps, lam, center, radius, constraint, loss, slots,
                release_slot=None, sigmas=(), noise=None, stored=None, full_history=True):
    """Pairwise GIGA over a block, one record at a time, every pair visited explicitly.

    ``stored``: the records stored before the block — a list of (x, label) for the full history, a dict
    slot → (x, label) for a buffer. Record i (round t = t_start + i + 1) steps (t ≥ 2, stored set
    non-empty: the mean of the pair gradients; empty: only the regulariser) and is then stored: appended
    to the history, or written to slot ``slots[i]`` of the buffer (−1: not stored). At the rounds with
    ``release_slot[i] = r ≥ 0`` the release Π_C[W + σ_r·noise_r] is recorded.

    Returns (W, iterates (one d×d matrix per record), released (dict r → d×d), iterate_sum, stored).
    """
    X = np.asarray(X, dtype=float)
    m, d = X.shape
    W = np.array(W_start, dtype=float).reshape(d, d)
    C = np.asarray(center, dtype=float).reshape(d, d)
    if stored is None:
        stored = [] if full_history else {}
    stored = list(stored) if full_history else dict(stored)
    iterates, released = [], {}
    iterate_sum = np.zeros((d, d))
    for i in range(m):
        t = t_start + i + 1
        x = X[i]
        if t >= 2:
            pairs = stored if full_history else [stored[k] for k in sorted(stored)]
            grad = np.zeros((d, d))
            if pairs:
                for x_j, label_j in pairs:
                    v = x - x_j
                    h = float(v @ W @ v)
                    tau = 1.0 if label_j == labels[i] else -1.0
                    grad += pair_dloss(loss, h, tau) * np.outer(v, v)
                grad /= len(pairs)
            W = project(W - steps[i] * (grad + lam * (W - C)), radius, constraint)
        if full_history:
            stored.append((x.copy(), labels[i]))
        elif slots[i] >= 0:
            stored[int(slots[i])] = (x.copy(), labels[i])
        iterates.append(W.copy())
        iterate_sum += W
        if release_slot is not None and release_slot[i] >= 0:
            r = int(release_slot[i])
            N = np.asarray(noise[r], dtype=float).reshape(d, d)
            released[r] = project(W + sigmas[r] * N, radius, constraint)
    return W, iterates, released, iterate_sum, stored


def metric_full_gradient(W, Z, labels, loss):
    """Σ over unordered pairs i < j of ∇_W ℓ(W; z_i, z_j), a d×d matrix."""
    Z = np.asarray(Z, dtype=float)
    n, d = Z.shape
    W = np.asarray(W, dtype=float).reshape(d, d)
    total = np.zeros((d, d))
    for i in range(n):
        for j in range(i + 1, n):
            total += pair_gradient(loss, W, Z[i], Z[j], labels[i] == labels[j])
    return total


def metric_risk(W, Z, labels, loss):
    """Mean of ℓ(W; z_i, z_j) over the unordered pairs i < j (0 without a pair)."""
    Z = np.asarray(Z, dtype=float)
    n, d = Z.shape
    W = np.asarray(W, dtype=float).reshape(d, d)
    values = []
    for i in range(n):
        for j in range(i + 1, n):
            v = Z[i] - Z[j]
            values.append(pair_loss(loss, float(v @ W @ v), 1.0 if labels[i] == labels[j] else -1.0))
    return float(np.mean(values)) if values else 0.0


def metric_pairwise_sgd(X, labels, indices, T, eta, radius, constraint, loss):
    """Yang et al.'s Alg. 1 for the metric task, read literally: step t pairs the draw i_{t+1} with every
    earlier draw i_1 … i_t (repeats included, a record drawn with itself giving v = 0), W_1 = 0.
    Returns (W_T, Σ_{t=1}^{T} W_t) as flat vectors."""
    n, d = X.shape
    W = np.zeros((d, d))
    total = W.copy()
    for t in range(1, T):  # W_{t+1} from W_t: the draw indices[t] against indices[0 … t−1]
        j = indices[t]
        grad = np.zeros((d, d))
        for k in indices[:t]:
            grad += pair_gradient(loss, W, X[j], X[k], labels[j] == labels[k])
        W = project(W - (eta / t) * grad, radius, constraint)
        total += W
    return W.reshape(-1), total.reshape(-1)


# -- the threshold b and the pair weights, from their definitions -----------------------------------
def pair_loss_at(loss, h, tau, b):
    """ℓ(h, τ; b): logistic φ(τ(b − h)); hinge (1 + τ(h − b + 1))₊ (b = 1: the functions above)."""
    if loss == "logistic":
        return float(np.logaddexp(0.0, -tau * (b - h)))
    return max(0.0, 1.0 + tau * (h - b + 1.0))


def pair_dloss_at(loss, h, tau, b):
    """dℓ/dh at threshold b (dℓ/db is its negative)."""
    if loss == "logistic":
        return float(tau * np.exp(-np.logaddexp(0.0, tau * (b - h))))
    return float(tau) if 1.0 + tau * (h - b + 1.0) > 0.0 else 0.0


def weighted_pair_gradient(loss, W, b, x, x_other, same_class, weights, learned):
    """∇ of ω·ℓ over (W, b) as a flat vector: ω·ℓ'(h)·[v vᵀ (flattened), −1 if learned]."""
    v = np.asarray(x, dtype=float) - np.asarray(x_other, dtype=float)
    h = float(v @ W @ v)
    tau = 1.0 if same_class else -1.0
    omega = weights[0] if same_class else weights[1]
    c = omega * pair_dloss_at(loss, h, tau, b)
    flat = (c * np.outer(v, v)).reshape(-1)
    return np.append(flat, -c) if learned else flat


def metric_full_gradient_terms(theta, Z, labels, loss, terms):
    """Σ_{i<j} ω_ij ∇ℓ((W, b); z_i, z_j), every pair visited; ``terms`` = [low, high, ω₊, ω₋]."""
    Z = np.asarray(Z, dtype=float)
    n, d = Z.shape
    learned = theta.shape[0] == d * d + 1
    W = theta[:d * d].reshape(d, d)
    b = theta[d * d] if learned else terms[0]
    total = np.zeros(theta.shape[0])
    for i in range(n):
        for j in range(i + 1, n):
            total += weighted_pair_gradient(loss, W, b, Z[i], Z[j], labels[i] == labels[j], terms[2:], learned)
    return total


def metric_risk_terms(theta, Z, labels, loss, terms):
    """Mean over pairs i < j of ω_ij·ℓ((W, b); z_i, z_j)."""
    Z = np.asarray(Z, dtype=float)
    n, d = Z.shape
    learned = theta.shape[0] == d * d + 1
    W = theta[:d * d].reshape(d, d)
    b = theta[d * d] if learned else terms[0]
    values = []
    for i in range(n):
        for j in range(i + 1, n):
            v = Z[i] - Z[j]
            same = labels[i] == labels[j]
            omega = terms[2] if same else terms[3]
            values.append(omega * pair_loss_at(loss, float(v @ W @ v), 1.0 if same else -1.0, b))
    return float(np.mean(values)) if values else 0.0


def metric_giga_terms(X, labels, theta, steps, lam, center, radius, constraint, loss, terms):
    """Full-history Pairwise GIGA over (W, b): the mean weighted pair gradient, the regulariser, then the
    projection onto C × [low, high] (b clipped)."""
    X = np.asarray(X, dtype=float)
    m, d = X.shape
    theta = np.array(theta, dtype=float)
    learned = theta.shape[0] == d * d + 1
    stored = []
    for i in range(m):
        if i >= 1:
            W = theta[:d * d].reshape(d, d)
            b = theta[d * d] if learned else terms[0]
            grad = np.zeros_like(theta)
            for x_j, label_j in stored:
                grad += weighted_pair_gradient(loss, W, b, X[i], x_j, label_j == labels[i], terms[2:], learned)
            grad /= len(stored)
            theta = theta - steps[i] * (grad + lam * (theta - center))
            matrix = project(theta[:d * d].reshape(d, d), radius, constraint).reshape(-1)
            theta = np.append(matrix, min(max(theta[d * d], terms[0]), terms[1])) if learned else matrix
        stored.append((X[i].copy(), labels[i]))
    return theta
