"""A slow, obviously correct twin of onpair.statistics.discriminant, written from the formulas of
docs/algorithms.md §12 and the module docstring (loops, explicit inverses, no shared helpers)."""

from __future__ import annotations

import math

import numpy as np


def naive_log_posterior(counts, means, covariances, count_sd, sum_sd, moment_sd, Z, *, covariance="auto",
                        ridge="auto", pooling="counts", calibrate=True, ridge_factor=2.0, max_undo=100.0,
                        min_shrinkage=0.01, base=1e-4, prior_noise_factor=4.0, pooled_moment=False, spread_noise_factor=1.0,
                        inverse=None, scale=1.0):
    """log P(c | z) for every row z of ``Z`` and class c, and the κ, α and λ used, as a dict. ``pooled``: the
    release held one pooled second moment (every covariance is the pooled one). ``inverse``: the matrix W of the
    discriminant, given (the AUC models' ranking posterior), instead of (Σ̃ + λI)⁻¹. ``scale``: the variance the base
    ridge is relative to (1 for a private release; the non-private twin's own within-class variance,
    naive_statistics.twin_scale)."""
    C, d = means.shape
    total = sum(counts)
    omega = [counts[c] / total if pooling == "counts" else 1.0 / C for c in range(C)]
    s = [sum_sd / counts[c] for c in range(C)]

    # pooled within-class covariance, debiased for the noise of the means
    pooled = np.zeros((d, d))
    for c in range(C):
        for k in range(d):
            for l in range(d):
                pooled[k, l] += omega[c] * 0.5 * (covariances[c][k, l] + covariances[c][l, k])
    for k in range(d):
        pooled[k, k] += sum(omega[c] * s[c] ** 2 for c in range(C))

    # off-diagonal shrinkage α (Schäfer–Strimmer with the sampling variance of a Gaussian covariance entry)
    if covariance == "auto":
        if d < 2:
            alpha = 0.0
        else:
            factor = sum(omega[c] ** 2 / counts[c] for c in range(C))
            variance = energy = 0.0
            for k in range(d):
                for l in range(d):
                    if k != l:
                        variance += factor * (max(pooled[k, k], 0.0) * max(pooled[l, l], 0.0) + pooled[k, l] ** 2)
                        energy += pooled[k, l] ** 2
            alpha = min(1.0, variance / energy) if energy > 0 else 1.0
    elif covariance == "full":
        alpha = 0.0
    elif covariance == "diagonal":
        alpha = 1.0
    else:
        alpha = float(covariance)

    # the shrunk matrix, projected onto the PSD cone
    target = pooled.copy()
    for k in range(d):
        for l in range(d):
            if k != l:
                target[k, l] *= 1.0 - alpha
    values, vectors = np.linalg.eigh(target)
    sigma = vectors @ np.diag(np.maximum(values, 0.0)) @ vectors.T

    # the ridge from the noise of the second moments
    if not math.isfinite(moment_sd):
        noise_sd = 0.0
    elif pooled_moment:  # one released moment for all classes, divided by the total count
        noise_sd = moment_sd / total
    else:  # C independent moments, each divided by its count
        noise_sd = moment_sd * math.sqrt(sum((omega[c] / counts[c]) ** 2 for c in range(C)))
    if ridge == "auto":
        lam = base * scale / d + ridge_factor * ((1.0 - alpha) * math.sqrt(2.0 * d) + 1.0) * noise_sd
    else:
        lam = float(ridge)
    W = np.linalg.inv(sigma + lam * np.eye(d)) if inverse is None else inverse

    # the error covariance of each released mean: privacy noise, the count's noise, sampling
    V = [s[c] ** 2 * np.eye(d) + (count_sd / counts[c]) ** 2 * np.outer(means[c], means[c]) + sigma / counts[c]
         for c in range(C)]

    pi = [counts[c] / total for c in range(C)]
    if calibrate:
        centre = sum(pi[c] * means[c] for c in range(C))
        separation = sum(pi[c] * (means[c] - centre) @ W @ (means[c] - centre) for c in range(C))
        noise = sum(pi[c] * (1 - pi[c]) * np.trace(W @ V[c]) for c in range(C))
        # the within-class variance along the released directions: the unprojected, debiased pooled covariance,
        # floored at spread_noise_factor times the standard deviation of its privacy noise (noise_sd·‖u‖² for u)
        u = [W @ (means[c] - centre) for c in range(C)]
        released = sum(pi[c] * u[c] @ pooled @ u[c] for c in range(C))
        floor = spread_noise_factor * noise_sd * sum(pi[c] * (u[c] @ u[c]) for c in range(C))
        spread = max(released, floor)
        scale = sum(pi[c] * means[c] @ W @ means[c] for c in range(C))  # equal means: rounding only
        if separation <= 1e-20 * scale:
            kappa = 0.0
        else:
            js = max(1.0 - noise / separation, min_shrinkage)
            undo = min(max_undo, max(1.0, separation / spread)) if spread > 0 else max_undo
            kappa = js * undo
        logs = [math.log(counts[c]) for c in range(C)]
        m = sum(pi[c] * logs[c] for c in range(C))
        spread_p = sum(pi[c] * (logs[c] - m) ** 2 for c in range(C))
        noise_p = sum(pi[c] * (1 - pi[c]) * (count_sd / counts[c]) ** 2 for c in range(C))
        f = max(0.0, 1.0 - prior_noise_factor * noise_p / spread_p) if spread_p > 0 else 0.0
        shrunk = [m + f * (logs[c] - m) for c in range(C)]
        norm = math.log(sum(math.exp(v) for v in shrunk))
        log_priors = [v - norm for v in shrunk]
    else:
        kappa = 1.0
        log_priors = [math.log(p) for p in pi]

    out = np.empty((Z.shape[0], C))
    for i, z in enumerate(Z):
        scores = [kappa * (z @ W @ means[c] - 0.5 * max(means[c] @ W @ means[c] - np.trace(W @ V[c]), 0.0))
                  + log_priors[c] for c in range(C)]
        top = max(scores)
        norm = top + math.log(sum(math.exp(v - top) for v in scores))
        out[i] = [v - norm for v in scores]
    return {"log_proba": out, "kappa": kappa, "alpha": alpha, "ridge": lam}
