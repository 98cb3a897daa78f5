"""Slow, literal twin of onpair.batch._sgd_kernels: Yang et al. (2021) Alg. 1, every pair visited explicitly.

O(T²·d): step t loops over k = 1 … t and forms the pair (z_{i_{t+1}}, z_{i_k}) straight from the
definition. Nothing is grouped, counted or cached. Tests compare the compiled kernel against it to 1e-10.
"""

from __future__ import annotations

import numpy as np


def pair_subgradient(loss, w, x, y, x_other, y_other):
    """∂_w ℓ(w; z, z') for onpair's symmetric AUC losses, from the definition.

    Same labels: 0. Otherwise the pair is scored as (positive, negative) whatever its order:
    u = wᵀ(x⁺ − x⁻); hinge (1 − u)₊ has subgradient −(x⁺ − x⁻) when 1 − u > 0 (u < 1, onpair.core.losses'
    choice at the kink) and 0 otherwise; square (1 − u)² has gradient −2(1 − u)(x⁺ − x⁻).
    """
    if y == y_other:
        return np.zeros_like(w)
    x_pos, x_neg = (x, x_other) if y > 0 else (x_other, x)
    delta = x_pos - x_neg
    u = float(w @ delta)
    if loss == "hinge":
        return -delta if 1.0 - u > 0.0 else np.zeros_like(w)
    if loss == "square":
        return -2.0 * (1.0 - u) * delta
    raise ValueError(loss)


def project_l2_ball(w, radius):
    norm = np.linalg.norm(w)
    return w if norm <= radius else w * (radius / norm)


def pairwise_sgd(X, signs, indices, eta, radius, loss):
    """Alg. 1 with the draws ``indices`` (``indices[k]`` is the paper's i_{k+1}; T = len(indices) − 1).

    Returns ``(iterates, w_bar)``: iterates w_1 … w_{T+1} as rows of a (T + 1, d) array, and the
    paper's output w̄_T = (1/T) Σ_{t=1}^{T} w_t (w_1 included, w_{T+1} not).
    """
    X = np.asarray(X, dtype=float)
    T = len(indices) - 1
    d = X.shape[1]
    w = np.zeros(d)  # w_1
    iterates = [w]
    for t in range(1, T + 1):
        new = indices[t]  # i_{t+1}
        total = np.zeros(d)
        for k in range(1, t + 1):
            earlier = indices[k - 1]  # i_k
            total += pair_subgradient(loss, w, X[new], signs[new], X[earlier], signs[earlier])
        w = project_l2_ball(w - (eta / t) * total, radius)
        iterates.append(w)
    iterates = np.array(iterates)
    return iterates, iterates[:T].mean(axis=0)
