"""Compiled pieces of the pairwise statistics: one record's contribution v(z), and the vech map.

Record z = (x, y) with x already mapped into the unit ball and y a class code c ∈ {0, …, C−1}
contributes the row

    v(z) = [0, …, 0, a, b·x, m·vech(xxᵀ), 0, …, 0]      (block c of length q = 1 + d + d(d+1)/2)

where vech lists the upper triangle row by row with the off-diagonal entries multiplied by √2, so that
‖vech(M)‖₂ = ‖M‖_F for a symmetric M (orthonormal coordinates of the symmetric matrices). The prefix sum
of these rows holds, per class, a·(count), b·(sum of x) and m·vech(sum of xxᵀ)
(docs/algorithms.md#continual-release, :mod:`onpair.learners.released_statistics`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._config import NJIT_OPTIONS


def block_length(d: int) -> int:
    """q = 1 + d + d(d+1)/2: entries of one class's block."""
    return 1 + d + d * (d + 1) // 2


@njit(**NJIT_OPTIONS)
def _statistics_rows(Z, codes, weights, out):
    """Write the contribution v(z) of every record into ``out``.

    Parameters
    ----------
    Z : ndarray of float64, shape (m, d)
        Records mapped into the unit ball; read only.
    codes : ndarray of int64, shape (m,)
        Class code of each record, in [0, C); read only.
    weights : ndarray of float64, shape (3,)
        The public block weights (a, b, m) of counts, sums and second moments; read only.
    out : ndarray of float64, shape (m, C·q)
        Overwritten: row i is v(z_i), zero outside block ``codes[i]``.
    """
    m, d = Z.shape
    q = 1 + d + d * (d + 1) // 2
    root2 = math.sqrt(2.0)
    a, b, mw = weights[0], weights[1], weights[2]
    out[:, :] = 0.0
    for i in range(m):
        base = codes[i] * q
        out[i, base] = a
        for k in range(d):
            out[i, base + 1 + k] = b * Z[i, k]
        idx = base + 1 + d
        for k in range(d):
            xk = Z[i, k]
            out[i, idx] = mw * xk * xk
            idx += 1
            for l in range(k + 1, d):
                out[i, idx] = mw * root2 * xk * Z[i, l]
                idx += 1


@njit(**NJIT_OPTIONS)
def _unpack_vech(vech, d, out):
    """The symmetric matrix whose orthonormal coordinates are ``vech`` (the inverse of the row map).

    Parameters
    ----------
    vech : ndarray of float64, shape (d(d+1)/2,)
        Diagonal entries as they are, off-diagonal entries times √2, upper triangle row by row; read only.
    d : int
        Matrix size.
    out : ndarray of float64, shape (d, d)
        Overwritten with the symmetric matrix.
    """
    inv_root2 = 1.0 / math.sqrt(2.0)
    idx = 0
    for k in range(d):
        out[k, k] = vech[idx]
        idx += 1
        for l in range(k + 1, d):
            value = vech[idx] * inv_root2
            out[k, l] = value
            out[l, k] = value
            idx += 1


def statistics_rows(Z: np.ndarray, codes: np.ndarray, n_classes: int, weights) -> np.ndarray:
    """The rows v(z) of a block of mapped records (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> statistics_rows(np.array([[0.6, 0.8]]), np.array([1]), 2, (1.0, 1.0, 1.0)).round(3).tolist()
    [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.6, 0.8, 0.36, 0.679, 0.64]]
    """
    m, d = Z.shape
    out = np.empty((m, n_classes * block_length(d)))
    _statistics_rows(np.ascontiguousarray(Z, dtype=np.float64), np.ascontiguousarray(codes, dtype=np.int64),
                     np.asarray(weights, dtype=np.float64), out)
    return out
