"""Slow, obviously correct NumPy twin of the blocks released once (onpair.privacy.continual.blocks).

Everything follows the definitions literally: the block sizes n_0 = first, n_{j+1} = ⌈n_j·r⌉ (the last cut at
the horizon), each block's release r_j = (sum of its records) + σ·z_j, and after t records the estimate over
the B completed blocks: N/Σn_j²·Σ_j n_j r_j ("size") or Σ_j r_j ("equal"), recomputed from scratch at every t.
With a half-life H (:func:`decayed_block_estimates`): the sizes capped at L, n_{j+1} = min(⌈n_j·r⌉, L), and the
estimate Σ_j γ^(N − e_j)·r_j (γ = 2^(−1/H), e_j block j's end, N the last completed block's end).
The noise is given as standard normals, one row per block in block order.
"""

from __future__ import annotations

import math

import numpy as np


def block_sizes(first, ratio, total, cap=None):
    """The sizes of the blocks that cover ``total`` records (the last one cut there), each at most ``cap``."""
    sizes, size = [], first
    while sum(sizes) < total:
        sizes.append(min(size, total - sum(sizes)))
        size = math.ceil(size * ratio) if cap is None else min(math.ceil(size * ratio), cap)
    return sizes


def decayed_block_estimates(V, sigma, Z, first, ratio, half_life, cap, horizon=None):
    """(T, k) the estimate Σ_j γ^(N − e_j)·r_j after every record t = 1 … T over the blocks completed by t, and
    (T,) its per-coordinate noise variance σ²·Σ_j γ^(2(N − e_j)), every t from scratch."""
    T, k = V.shape
    gamma = 2.0 ** (-1.0 / half_life)
    sizes = block_sizes(first, ratio, horizon or 2 * T + first, cap)
    ends = np.cumsum(sizes)
    done_all = [j for j in range(len(sizes)) if ends[j] <= T]
    releases = [V[ends[j] - sizes[j]:ends[j]].sum(axis=0) + sigma * Z[j] for j in done_all]
    out, variances = np.zeros((T, k)), np.zeros(T)
    for t in range(1, T + 1):
        done = [j for j in done_all if ends[j] <= t]
        if not done:
            continue
        N = ends[done[-1]]
        weights = np.array([gamma ** float(N - ends[j]) for j in done])
        out[t - 1] = sum(w * releases[j] for w, j in zip(weights, done))
        variances[t - 1] = sigma ** 2 * float((weights ** 2).sum())
    return out, variances


def block_estimates(V, sigma, Z, first, ratio, weighting="size", horizon=None):
    """(T, k) the estimate after every record t = 1 … T, and (T,) its per-coordinate noise variance (the blocks
    of a stream of ``horizon`` records, None: unbounded)."""
    T, k = V.shape
    sizes = block_sizes(first, ratio, horizon or 2 * T + first)
    sizes = [n for j, n in enumerate(sizes) if sum(sizes[:j + 1]) <= T]  # the blocks T records complete
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    releases = [V[starts[j]:starts[j + 1]].sum(axis=0) + sigma * Z[j] for j in range(len(sizes))]
    out, variances = np.zeros((T, k)), np.zeros(T)
    for t in range(1, T + 1):
        done = [j for j in range(len(sizes)) if starts[j + 1] <= t]
        if not done:
            continue
        if weighting == "size":
            n = np.array([sizes[j] for j in done], dtype=float)
            weights = n * n.sum() / (n ** 2).sum()
        else:
            weights = np.ones(len(done))
        out[t - 1] = sum(w * releases[j] for w, j in zip(weights, done))
        variances[t - 1] = sigma ** 2 * float((weights ** 2).sum())
    return out, variances
