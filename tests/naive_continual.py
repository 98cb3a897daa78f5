"""Slow, obviously correct NumPy twins of the continual-release mechanisms (onpair.privacy.continual).

Everything follows the definitions literally: every tree node sums its own records, the least-squares
estimate of a subtree is a generalised least-squares solve over all the nodes inside it (not the
bottom-up recursion), and the Toeplitz mechanism builds A, C and B = A·C⁻¹ as dense T × T matrices.
The noise is given as standard normals in the mechanisms' order (tree: one row per completed node,
records in order, levels ascending within a record; Toeplitz: one row per record).
"""

from __future__ import annotations

import math

import numpy as np


def sqrt_coefficients(n):
    """c_j = C(2j, j)/4^j for j < n, from exact integers."""
    return np.array([math.comb(2 * j, j) / 4**j for j in range(n)])


def tree_node_order(T):
    """The completed nodes (h, j) in noise order: record t completes (0, t), (1, t/2), … while 2^h | t."""
    order = []
    for t in range(1, T + 1):
        h = 0
        while t % 2**h == 0:
            order.append((h, t // 2**h))
            h += 1
    return order


def tree_nodes(V, sigmas, Z):
    """Noisy node values {(h, j): value (k,)}: the sum of records (j−1)·2^h + 1 … j·2^h plus σ_h·z."""
    nodes = {}
    for r, (h, j) in enumerate(tree_node_order(V.shape[0])):
        lo, hi = (j - 1) * 2**h, j * 2**h  # 0-based slice of the records
        nodes[(h, j)] = V[lo:hi].sum(axis=0) + sigmas[h] * Z[r]
    return nodes


def dyadic_decomposition(t):
    """The nodes (h, j) whose intervals partition [1, t]: one per set bit of t, largest first."""
    parts, start = [], 0
    for h in reversed(range(t.bit_length())):
        if t >> h & 1:
            parts.append((h, start // 2**h + 1))
            start += 2**h
    return parts


def subtree_least_squares(nodes, sigmas, h, j):
    """GLS estimate (and its per-coordinate variance) of the total of node (h, j) from every node of
    its subtree: leaves x (2^h, k) with node rows E·x observed with variances σ_level², solved by
    x̂ = (EᵀWE)⁻¹EᵀW·y; the total is 1ᵀx̂, of variance 1ᵀ(EᵀWE)⁻¹1."""
    first = (j - 1) * 2**h  # 0-based index of the subtree's first leaf
    rows, weights, values = [], [], []
    for level in range(h + 1):
        width = 2**level
        for jj in range(first // width + 1, (first + 2**h) // width + 1):
            row = np.zeros(2**h)
            lo = (jj - 1) * width - first
            row[lo:lo + width] = 1.0
            rows.append(row)
            weights.append(1.0 / sigmas[level] ** 2)
            values.append(nodes[(level, jj)])
    E, W, y = np.array(rows), np.diag(weights), np.array(values)
    gram = E.T @ W @ E
    x_hat = np.linalg.solve(gram, E.T @ W @ y)
    ones = np.ones(2**h)
    return ones @ x_hat, float(ones @ np.linalg.solve(gram, ones))


def tree_prefixes(V, sigmas, Z, estimate):
    """Released prefix estimates (T, k) and their variances (T,): the plain sum of the decomposition's
    node values, or the sum of their subtrees' GLS estimates."""
    T, k = V.shape
    nodes = tree_nodes(V, sigmas, Z)
    out, var = np.zeros((T, k)), np.zeros(T)
    for t in range(1, T + 1):
        for h, j in dyadic_decomposition(t):
            if estimate == "plain":
                out[t - 1] += nodes[(h, j)]
                var[t - 1] += sigmas[h] ** 2
            else:
                value, v = subtree_least_squares(nodes, sigmas, h, j)
                out[t - 1] += value
                var[t - 1] += v
    return out, var


def toeplitz_matrices(T, band):
    """A (ones, lower-triangular), C (Toeplitz, first column c_0 … c_{b−1}, 0 …) and B = A·C⁻¹."""
    c = sqrt_coefficients(min(band, T))
    C = np.zeros((T, T))
    for i in range(T):
        for j in range(max(0, i - len(c) + 1), i + 1):
            C[i, j] = c[i - j]
    A = np.tril(np.ones((T, T)))
    B = np.linalg.solve(C.T, A.T).T  # B·C = A
    return A, C, B


def toeplitz_prefixes(V, band, sigma, Z):
    """Released prefixes A·V + σ·B·Z (T, k) and their variances σ²‖B_{t,:}‖² (T,)."""
    A, _, B = toeplitz_matrices(V.shape[0], band)
    return A @ V + sigma * (B @ Z), sigma**2 * (B**2).sum(axis=1)
