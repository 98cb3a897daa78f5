"""Synthetic class layouts with informative and pure-noise features: where a learned metric must help.

Each layout draws labelled records in the public box [−1, 1]^d (``BOUNDS``): a few **informative**
features carry the classes (class centres plus Gaussian spread, clipped to the box) and the others are
**pure noise**, uniform on [−1, 1] and independent of the label. Plain Euclidean k-NN weighs every
feature alike, so the noise features drown the informative ones; a good metric ignores them.
The layouts are fixed and public: the library's metric defaults are chosen on them (bench/
metric_statistics.py), never on the UCI data sets it reports.

================  =======  ===========  =======  ==========================================================
layout            classes  informative  noise    class structure
================  =======  ===========  =======  ==========================================================
``"circle"``      3        2            10       centres on a circle of radius 0.35, spread 0.2 (the layout
                                                 of the metric issue: Euclidean 3-NN ≈ 0.55)
``"rotated"``     4        3            15       centres along a bent path, spread 0.12, the informative
                                                 features mixed by a fixed rotation (not axis-aligned)
``"binary"``      2        1            8        centres ±0.4, spread 0.2
================  =======  ===========  =======  ==========================================================

Examples
--------
>>> X, y = noise_feature_classes("circle", 500, seed=0)
>>> X.shape, sorted(set(y.tolist())), bool(np.abs(X).max() <= 1.0)
((500, 12), [0, 1, 2], True)
"""

from __future__ import annotations

import numpy as np

#: The public box of every layout's features.
BOUNDS = (-1.0, 1.0)
#: Layout name → (classes, informative features, noise features).
LAYOUTS = {"circle": (3, 2, 10), "rotated": (4, 3, 15), "binary": (2, 1, 8)}

_ROTATED_CENTRES = np.array([[-0.6, 0.0, 0.0], [-0.2, 0.3, 0.0], [0.2, -0.3, 0.2], [0.6, 0.0, -0.2]])


def _rotation(k: int) -> np.ndarray:
    """A fixed k×k rotation (the same for every call: part of the layout's definition)."""
    q, r = np.linalg.qr(np.random.default_rng(7).standard_normal((k, k)))
    return q * np.sign(np.diag(r))


def noise_feature_classes(layout: str, n: int, seed=None):
    """``n`` records of ``layout`` (see the module table): ``(X, y)`` with X of shape (n, d) in
    [−1, 1]^d (float64) and y the class codes 0…C−1 (int64), classes drawn uniformly.

    Parameters
    ----------
    layout : {"circle", "rotated", "binary"}
    n : int
        Number of records (≥ 1).
    seed : int or sequence of int, optional
        For ``numpy.random.default_rng``.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {sorted(LAYOUTS)}, got {layout!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    rng = np.random.default_rng(seed)
    n_classes, _, n_noise = LAYOUTS[layout]
    y = rng.integers(0, n_classes, n)
    if layout == "circle":
        angle = 2.0 * np.pi * y / n_classes
        informative = 0.35 * np.c_[np.cos(angle), np.sin(angle)] + 0.2 * rng.standard_normal((n, 2))
    elif layout == "rotated":
        informative = (_ROTATED_CENTRES[y] + 0.12 * rng.standard_normal((n, 3))) @ _rotation(3).T
    else:
        informative = (0.4 * (2.0 * y - 1.0) + 0.2 * rng.standard_normal(n))[:, None]
    noise = rng.uniform(-1.0, 1.0, (n, n_noise))
    return np.clip(np.c_[informative, noise], -1.0, 1.0), y.astype(np.int64)
