"""The constraint set C = {w : ‖w‖₂ ≤ R}: Euclidean projection and data-independent random points."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._config import NJIT_OPTIONS


@njit(**NJIT_OPTIONS)
def _project_l2_ball(w, radius):
    """Project ``w`` onto the ℓ2 ball of ``radius`` in place (the identity inside the ball).

    Parameters
    ----------
    w : float64 array of shape (p,)
        The point, **overwritten** with its projection w·min(1, radius/‖w‖) (unchanged inside the
        ball, and when its norm is NaN). When the squares of its entries overflow, the norm is
        recomputed after dividing by the largest entry.
    radius : float
        R > 0.

    Returns
    -------
    None
    """
    norm_sq = 0.0
    for k in range(w.shape[0]):
        norm_sq += w[k] * w[k]
    if norm_sq > radius * radius:
        norm = math.sqrt(norm_sq)
        if norm == math.inf:  # the squares overflowed (entries beyond ~1e154): rescale before summing
            largest = 0.0
            for k in range(w.shape[0]):
                largest = max(largest, abs(w[k]))
            total = 0.0
            for k in range(w.shape[0]):
                total += (w[k] / largest) ** 2
            norm = largest * math.sqrt(total)
        scale = radius / norm
        for k in range(w.shape[0]):
            w[k] *= scale


def project_l2_ball(w, radius: float) -> np.ndarray:
    """Euclidean projection onto ``{v : ‖v‖₂ ≤ radius}``, returning a new array.

    Examples
    --------
    >>> project_l2_ball([3.0, 4.0], 1.0)
    array([0.6, 0.8])
    """
    out = np.array(w, dtype=np.float64, copy=True)
    _project_l2_ball(out, float(radius))
    return out


def random_point_in_ball(rng: np.random.Generator, dim: int, radius: float) -> np.ndarray:
    """A point drawn uniformly from the ℓ2 ball (a data-independent start, Huai Alg. 1 line 6).

    Examples
    --------
    >>> import numpy as np
    >>> w = random_point_in_ball(np.random.default_rng(0), 5, 2.0)
    >>> bool(np.linalg.norm(w) <= 2.0)
    True
    """
    direction = rng.standard_normal(dim)
    norm = np.linalg.norm(direction)
    if norm == 0.0:  # probability zero, but never divide by it
        return np.zeros(dim)
    return direction / norm * radius * rng.random() ** (1.0 / dim)
