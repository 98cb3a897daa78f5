"""Evaluation of released scorers (ALGORITHMS.md §8)."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def roc_auc(scores, labels) -> float:
    """Area under the ROC curve by the Mann–Whitney statistic, ties counted one half.

    Parameters
    ----------
    scores : array-like of float
        Higher means "more likely positive".
    labels : array-like
        Positive class: 1, +1 or True; everything else (0, −1, False) is negative.

    Examples
    --------
    >>> roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    0.75
    """
    scores = _real_vector(scores, "scores")
    labels = np.asarray(labels)
    if scores.ndim != 1 or scores.shape != labels.shape:
        raise ValueError(f"scores and labels must be 1-D of the same length, got {scores.shape} and {labels.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite")
    positive = (labels == 1) | (labels == True)  # noqa: E712 (booleans and ±1/0-1 labels alike)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("AUC needs at least one positive and one negative label")
    ranks = rankdata(scores)  # average ranks: a tie counts one half
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def pairwise_risk(w, Z, labels, loss="logistic", block: int = 512) -> float:
    """Empirical pairwise risk L(w; D) = 1/(n(n−1)) Σ_{i≠j} ℓ(w; z_i, z_j) (ALGORITHMS.md §1).

    ``Z`` are records already mapped by the public bounds, ``labels`` are ±1 (or 0/1, booleans).
    Opposite-label pairs score ``ℓ(wᵀ(x⁺ − x⁻))`` (both orders, so twice); same-label pairs contribute
    ℓ(0) = log 2 each for the logistic loss (Huai et al.'s φ((y − y')·…) at y = y') and 0 for the
    hinge and square losses, whose indicator excludes them. This validates its inputs and runs the
    compiled pair loop of :func:`onpair._batch_kernels.pairwise_risk`.

    Examples
    --------
    >>> import numpy as np
    >>> round(pairwise_risk(np.zeros(2), np.eye(2), [1, -1]), 6) == round(float(np.log(2)), 6)
    True
    """
    from .losses import get_loss

    loss = get_loss(loss)
    w = _real_vector(w, "w")
    Z = np.asarray(Z, dtype=np.float64)
    labels = np.asarray(labels)
    if Z.ndim != 2 or Z.shape[1] != w.shape[0]:
        raise ValueError(f"Z must be 2-D with {w.shape[0]} columns (the length of w), got shape {Z.shape}")
    if labels.shape != (Z.shape[0],):
        raise ValueError(f"labels must have one entry per row of Z ({Z.shape[0]}), got shape {labels.shape}")
    if not np.all(np.isfinite(Z)):
        raise ValueError("Z must be finite")
    valid = np.isin(labels, [1, -1, 0, True, False]) if labels.dtype.kind in "biuf" else np.zeros(1, bool)
    if not np.all(valid):
        raise ValueError("labels must be ±1, 0/1 or booleans")
    if isinstance(block, (bool, np.bool_)) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block must be a positive integer, got {block!r}")
    positive = (labels == 1) | (labels == True)  # noqa: E712
    n = Z.shape[0]
    if n < 2:
        raise ValueError("the pairwise risk needs at least 2 records")
    with np.errstate(over="raise", invalid="raise"):
        try:
            scores = Z @ w
        except FloatingPointError:
            raise ValueError("the scores Z @ w overflow: w or Z is too large") from None
    if not np.all(np.isfinite(scores)):
        raise ValueError("the scores Z @ w are not finite: w or Z is too large")
    # The computation itself is the compiled, parallel pair loop of the full-batch estimators.
    from ._batch_kernels import pairwise_risk as _compiled_pairwise_risk
    from ._batch_kernels import split_by_label

    positives, negatives = split_by_label(Z, np.where(positive, 1, -1))
    return _compiled_pairwise_risk(positives, negatives, w, loss.name, block=block)


def _real_vector(values, name: str) -> np.ndarray:
    """A finite, real float64 vector, or a ValueError naming ``name``."""
    array = np.asarray(values)
    if array.dtype.kind == "c":
        raise ValueError(f"{name} are complex: they must be real numbers")
    if array.dtype.kind not in "biuf":
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be real numbers, got dtype {array.dtype}") from None
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array
