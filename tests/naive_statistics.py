"""Slow, obviously correct NumPy twins of the statistics kernels (onpair.statistics._kernels) and models."""

from __future__ import annotations

import numpy as np


def vech(M):
    """Orthonormal coordinates of a symmetric matrix: diagonal as is, upper off-diagonal × √2, row by row."""
    d = M.shape[0]
    return np.array([M[k, l] * (1.0 if k == l else np.sqrt(2.0)) for k in range(d) for l in range(k, d)])


def unvech(v, d):
    M = np.zeros((d, d))
    idx = 0
    for k in range(d):
        for l in range(k, d):
            M[k, l] = M[l, k] = v[idx] / (1.0 if k == l else np.sqrt(2.0))
            idx += 1
    return M


def contribution(z, code, n_classes, weights):
    """v(z): [a, b·z, m·vech(zzᵀ)] in the block of class ``code``, zeros elsewhere."""
    a, b, m = weights
    block = np.concatenate([[a], b * z, m * vech(np.outer(z, z))])
    out = np.zeros(n_classes * block.size)
    out[code * block.size:(code + 1) * block.size] = block
    return out


def pooled_contribution(z, code, n_classes, weights):
    """v(z) of the pooled layout: [a, b·z] in the block (of length 1 + d) of class ``code``, zeros in the other
    classes' blocks, then m·vech(zzᵀ) in the one shared moment block."""
    a, b, m = weights
    d = z.size
    out = np.zeros(n_classes * (1 + d))
    out[code * (1 + d):(code + 1) * (1 + d)] = np.concatenate([[a], b * z])
    return np.concatenate([out, m * vech(np.outer(z, z))])


def pooled_decode(estimate, n_classes, d, weights, floor):
    """Counts and means per class, and the pooled within-class covariance (M/m − Σ_c n_c μ_cμ_cᵀ)/Σ_c n_c."""
    a, b, m = weights
    counts = np.array([max(estimate[c * (1 + d)] / a, floor) for c in range(n_classes)])
    means = np.array([estimate[c * (1 + d) + 1:(c + 1) * (1 + d)] / (b * counts[c]) for c in range(n_classes)])
    if m > 0:
        second = unvech(estimate[n_classes * (1 + d):], d) / m
        pooled = (second - sum(counts[c] * np.outer(means[c], means[c]) for c in range(n_classes))) / counts.sum()
    else:
        pooled = np.zeros((d, d))
    return counts, means, pooled


def decode(estimate, n_classes, d, weights, floor):
    a, b, m = weights
    q = 1 + d + d * (d + 1) // 2
    counts, means, covs = [], [], []
    for c in range(n_classes):
        block = estimate[c * q:(c + 1) * q]
        n = max(block[0] / a, floor)
        mu = block[1:1 + d] / (b * n)
        second = unvech(block[1 + d:], d) / (m * n) if m > 0 else np.zeros((d, d))
        counts.append(n)
        means.append(mu)
        covs.append(second - np.outer(mu, mu) if m > 0 else np.zeros((d, d)))
    return np.array(counts), np.array(means), np.array(covs)


def square_model(means, covs, lam):
    """argmin_w 1 − 2wᵀd + wᵀ(C₊ + C₋ + ddᵀ)w + (λ/2)‖w‖², by the normal equations with ddᵀ kept."""
    d = means[1] - means[0]
    A = covs[0] + covs[1] + np.outer(d, d) + 0.5 * lam * np.eye(d.size)
    return np.linalg.solve(A, d)


def pairwise_square_loss(w, X_pos, X_neg, lam):
    """(1/(n₊n₋)) Σ_{i∈P, j∈N} (1 − wᵀ(x_i − x_j))² + (λ/2)‖w‖², pair by pair."""
    total = 0.0
    for xi in X_pos:
        for xj in X_neg:
            total += (1.0 - w @ (xi - xj)) ** 2
    return total / (len(X_pos) * len(X_neg)) + 0.5 * lam * (w @ w)


def ball(rng, n, d):
    """Records in the unit ball, some on its sphere."""
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X * rng.uniform(0.0, 1.0, size=(n, 1)) ** (1.0 / d)


def worst_sampled_difference(layout, weights, d, C, rng, draws=4000):
    """max ‖v(z) − v(z')‖₂ over ``draws`` random pairs of unit-ball records with random labels, ``layout``
    being :func:`contribution` or :func:`pooled_contribution`."""
    worst = 0.0
    for _ in range(draws):
        z, z2 = ball(rng, 2, d)
        c1, c2 = rng.integers(0, C, size=2)
        worst = max(worst, float(np.linalg.norm(layout(z, c1, C, weights) - layout(z2, c2, C, weights))))
    return worst


def attained_difference(layout, weights, d, C):
    """The larger of the two candidate suprema of ‖v(z) − v(z')‖₂: unit records e₁ and e₂ of different labels
    (orthogonal: their moments differ most in the pooled layout), and same-label unit records at the angle
    γ* = −b²/(2m²) (or opposite ones where b² ≥ 2m²)."""
    a, b, m = weights
    u, v = np.eye(d)[0], np.eye(d)[1]
    cross = np.linalg.norm(layout(u, 0, C, weights) - layout(v, 1, C, weights))
    if b * b >= 2 * m * m:
        other = -u
    else:
        gamma = -b * b / (2 * m * m)
        other = gamma * u + np.sqrt(1 - gamma * gamma) * v
    same = np.linalg.norm(layout(u, 0, C, weights) - layout(other, 0, C, weights))
    return float(max(cross, same))



def square_refresh(estimate, d, weights, variance, lam=None):
    """The twin of onpair.statistics._ranking_kernels.square_refresh: the AUC square model of one release and
    its ranking posterior, by the NumPy definitions: the decoding above (count floor max(1, 2·sd/a)), the
    automatic ridge 10⁻³·s + 4·2√d·(sd/m)·Σ_c 1/n̂_c (``lam`` None) or ``lam``, s the twin's variance scale
    (:func:`twin_scale`; 1 for a noisy release), w = A⁻¹δ/(1 + δᵀA⁻¹δ) with
    A = C₊ + C₋ + (λ/2)I and δ = μ₊ − μ₋ by np.linalg.solve (None where A is not positive definite), and
    onpair.statistics.discriminant.ranking_discriminant (the reference posterior) with that λ."""
    from onpair.statistics.discriminant import ranking_discriminant
    from onpair.statistics.model import ClassStatistics

    a, b, m = weights
    sd = np.sqrt(max(variance, 0.0))
    counts, means, covs = decode(np.asarray(estimate, float), 2, d, weights, max(1.0, 2.0 * sd / a))
    moment_sd = sd / m if m > 0 else np.inf
    scale = twin_scale(counts, covs) if sd == 0.0 and m > 0 else 1.0
    if lam is None:
        lam = 1e-3 * scale + (4.0 * 2.0 * np.sqrt(d) * (moment_sd if m > 0 else 0.0)
                              * (1.0 / counts[0] + 1.0 / counts[1]))
    A = covs[0] + covs[1] + 0.5 * lam * np.eye(d)
    if np.linalg.eigvalsh(A).min() <= 0.0:
        return None
    delta = means[1] - means[0]
    solved = np.linalg.solve(A, delta)
    stats = ClassStatistics(counts, means, covs, sd / a, sd / b, moment_sd, max(1.0, 2.0 * sd / a), False, scale)
    return solved / (1.0 + delta @ solved), ranking_discriminant(stats, "square", lam)


def twin_scale(counts, covariances):
    """The non-private twin's variance scale by its definition: the trace of the count-pooled within-class
    covariance, Σ_c (n̂_c/Σn̂)·tr(C_c), where it exceeds 10⁻¹² (the floor of
    onpair.statistics._kernels.TWIN_SCALE_FLOOR), else 1 (the box's)."""
    weights = np.asarray(counts, float) / np.sum(counts)
    trace = float(weights @ np.trace(np.asarray(covariances, float), axis1=1, axis2=2))
    return trace if trace > 1e-12 else 1.0
