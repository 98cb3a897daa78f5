"""The neighbouring data sets of the audits: canaries that move a release as far as its sensitivity
analysis allows (the AUC task, the metric task, the class statistics; :mod:`onpair.audit`)."""

from __future__ import annotations

import math

import numpy as np

from .bound import DATA_KINDS, DEFAULT_D, DEFAULT_N


# -- neighbouring data sets ------------------------------------------------------------------------
def neighbouring_datasets(n: int = DEFAULT_N, d: int = DEFAULT_D, kind: str = "adversarial", seed: int = 0):
    """``(D, D_prime, bounds, u)``: two data sets in the public box [0, 1]^d that differ in the last record.

    D′'s last record is the canary: the corner (1, …, 1), label +1 (the rarer label). ``u`` is its
    direction in the mapped domain where the models live, (1, …, 1)/√d. ``kind="adversarial"``: every
    other record is the corner (0, …, 0) with label −1 and D's last record is (0, …, 0) with label +1, so
    D produces no gradient at all and D′ the largest one (see the module docstring). ``kind="random"``:
    uniform records, labels +1 with probability 0.3 (at least one of each among the first n − 1), D's
    last record drawn the same way.

    Examples
    --------
    >>> (X, y), (X2, y2), bounds, u = neighbouring_datasets(5, 2)
    >>> int((X != X2).any(axis=1).sum()), y2.tolist(), bounds
    (1, [-1, -1, -1, -1, 1], (0.0, 1.0))
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 3:
        raise ValueError(f"n must be an integer >= 3, got {n!r}")
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if kind not in DATA_KINDS:
        raise ValueError(f"kind must be one of {DATA_KINDS}, got {kind!r}")
    n, d = int(n), int(d)
    if kind == "adversarial":
        X = np.zeros((n, d))
        y = -np.ones(n, dtype=np.int64)
        y[-1] = 1
    else:
        rng = np.random.default_rng(seed)
        X = rng.uniform(0.0, 1.0, size=(n, d))
        y = np.where(rng.uniform(size=n) < 0.3, 1, -1).astype(np.int64)
        y[0], y[1] = 1, -1
    X_prime, y_prime = X.copy(), y.copy()
    X_prime[-1] = 1.0
    y_prime[-1] = 1
    u = np.full(d, 1.0 / math.sqrt(d))
    return (X, y), (X_prime, y_prime), (0.0, 1.0), u


def metric_neighbouring_datasets(n: int = DEFAULT_N, d: int = DEFAULT_D, kind: str = "adversarial", seed: int = 0):
    """``(D, D_prime, bounds, U)`` for the metric task: two data sets in the public box [0, 1]^d that
    differ in the last record, and ``U = u uᵀ`` (a (d, d) matrix), the statistic's direction.

    D′'s last record is the canary, the corner (1, …, 1) with label +1. ``kind="adversarial"``: every other
    record is the opposite corner (0, …, 0) with label −1, and D's last record is the canary's corner with
    the others' label −1. Pairs of two records at the same point have v = x − x' = 0 and so no gradient
    (∇_W ℓ = ℓ'(h)·v vᵀ); the only gradient comes from the n − 1 pairs of the last record, each with
    v vᵀ = 4 u uᵀ (u = (1, …, 1)/√d the canary's mapped direction, the full diameter 2). Replacing the
    label flips every one of them from a same-class pair (τ = +1, ℓ'(h) = σ(h − 1) > 0, pulling the two
    corners together) to a different-class pair (τ = −1, ℓ'(h) = −σ(1 − h), pushing them apart): the
    pair gradients change by (σ(h − 1) + σ(1 − h))·4 u uᵀ = 4 u uᵀ exactly, whatever h, against the
    logistic loss's Γ(R) → 4√2·σ(1) ≈ 4.14 as R → 0 (the bound covers orthogonal v, v′, which no two
    records of the box reach). Keeping the canary's corner in D is stronger than replacing it by a
    record without gradient (a change of only σ(1 − h)·4 ≈ 2.9). ``kind="random"``: uniform records,
    labels +1 with probability 0.3 (at least one of each among the first n − 1), D's last record drawn
    the same way; D′'s last is the canary.

    Examples
    --------
    >>> (X, y), (X2, y2), bounds, U = metric_neighbouring_datasets(4, 2)
    >>> X.tolist() == X2.tolist(), y.tolist(), y2.tolist(), U.tolist()
    (True, [-1, -1, -1, -1], [-1, -1, -1, 1], [[0.5, 0.5], [0.5, 0.5]])
    """
    (X, y), (X_prime, y_prime), bounds, _ = neighbouring_datasets(n, d, kind=kind, seed=seed)
    if kind == "adversarial":
        X[-1] = 1.0
        y[-1] = -1
    return (X, y), (X_prime, y_prime), bounds, np.full((d, d), 1.0 / d)  # u uᵀ, u = (1, …, 1)/√d


def statistics_neighbouring_datasets(n: int = DEFAULT_N, d: int = DEFAULT_D, kind: str = "adversarial",
                                     seed: int = 0):
    """``(D, D_prime, bounds, u)`` for the learners on released class statistics: two data sets in the public
    box [0, 1]^d that differ in the **first** record.

    D′'s first record is the canary, the corner (1, …, 1) (mapped: u = (1, …, 1)/√d, on the unit sphere) with
    label +1. ``kind="adversarial"``: D's first record is the same corner with label −1, so only the label
    flips and the record's contribution v(z) = [a, b·x, m·vech(xxᵀ)] moves from the negative class's block
    to the positive one's: ‖v(z′) − v(z)‖² = 2(a² + b² + m²), the different-label supremum of
    :func:`onpair.privacy.statistics_sensitivity.statistics_sensitivity`, which is Δ² itself whenever that case sets
    Δ: at the default weights (0.8, 1, 0.6), where both cases give 4b², and at :data:`onpair.statistics.audit_variants.MOMENT_WEIGHTS`.
    Every other record sits at the opposite corner
    with labels −1, +1, −1, … (a release of sums is linear in the stream: they do not change what the test
    sees). ``kind="random"``: uniform records, labels +1 with probability 0.3 (at least one of each among
    the last n − 1), D's first record drawn the same way; D′'s first is the canary.

    The canary is the first record because a continual release charges the first record for its longest
    encoder column: the banded factorisation's column holds c₀, …, c_{b−1} for a record followed by b − 1
    others (only c₀ for the last record), and the tree's first record completes a node on every level.

    Examples
    --------
    >>> (X, y), (X2, y2), bounds, u = statistics_neighbouring_datasets(5, 2)
    >>> X.tolist() == X2.tolist(), y.tolist(), y2.tolist()
    (True, [-1, 1, -1, 1, -1], [1, 1, -1, 1, -1])
    """
    (X, y), (X_prime, y_prime), bounds, u = neighbouring_datasets(n, d, kind=kind, seed=seed)
    if kind == "random":  # the same draws, in reverse order: the replaced record comes first
        return (X[::-1].copy(), y[::-1].copy()), (X_prime[::-1].copy(), y_prime[::-1].copy()), bounds, u
    X = np.zeros((n, d))
    X[0] = 1.0
    y = np.where(np.arange(n) % 2 == 0, -1, 1).astype(np.int64)
    y_prime = y.copy()
    y_prime[0] = 1
    return (X, y), (X.copy(), y_prime), bounds, u


def classifier_neighbouring_datasets(n: int, d: int, kind: str = "adversarial", seed: int = 0):
    """``(D, D_prime, bounds, u)`` for the classifier's pooled release (one second moment for all classes): as
    :func:`onpair.audit.statistics_neighbouring_datasets`, but where only the label of the first record flips
    there (which moves the counts and the sums but not a pooled moment), D′'s first record here is the
    half-corner (1, …, 1, 0, …, 0), mapped to (1, …, 1, −1, …, −1)/√d, orthogonal to D's corner for even d,
    with label +1 against the corner's −1: ‖v(z′) − v(z)‖² = 2a² + 2b² + 2m², the pooled layout's different-label
    supremum (:func:`onpair.privacy.statistics_sensitivity.statistics_sensitivity`), the moment included.
    ``kind="random"``: the statistics presets' random data sets.

    Examples
    --------
    >>> (X, y), (X2, y2), bounds, u = classifier_neighbouring_datasets(3, 2)
    >>> X.tolist(), X2.tolist(), y.tolist(), y2.tolist()
    ([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [-1, 1, -1], [1, 1, -1])
    """
    (X, y), (X_prime, y_prime), bounds, u = statistics_neighbouring_datasets(n, d, kind=kind, seed=seed)
    if kind == "adversarial":
        X_prime = X_prime.copy()
        X_prime[0, (d + 1) // 2:] = 0.0
    return (X, y), (X_prime, y_prime), bounds, u
